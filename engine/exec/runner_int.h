/*
 * runner_int.h - what the runner's two files share: runner.c (spawning a
 * run and its life: the output pipe, the leader's end, the timeout, cancel,
 * the exit callback) and runner_tree.c (which processes are a run's: the
 * /proc sweeps, the signals to them, the subreaper and its reaping, the
 * registry of live leaders, and the groups an earlier daemon left). Not for
 * the rest of the engine: runner.h is the contract.
 *
 * Threads: the runner__ functions that take a struct runner_proc run on
 * that run's loop thread; the others on any thread.
 */
#ifndef PACKETFS_RUNNER_INT_H
#define PACKETFS_RUNNER_INT_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "runner.h"

#define POLL_MS 50          /* sweeps while a run ends */
#define READ_CHUNK 65536

/* A process of the run, as the last sweep saw it (runner_tree.c). */
struct member;

struct runner_proc {
	uv_loop_t *loop;
	union {
		uv_poll_t poll;     /* on pidfd: readable once the leader exited */
		uv_signal_t sig;    /* SIGCHLD, where there is no pidfd */
	} exit_watch;
	uv_pipe_t out;             /* read end of the child's stdout/stderr */
	uv_timer_t timeout_timer;  /* spec->timeout_s after the spawn */
	uv_timer_t grace_timer;    /* SIGTERM -> SIGKILL, and the drain deadline */
	uv_timer_t poll_timer;     /* sweeps (TRACK_MS, then POLL_MS); spawn failures */
	runner_output_cb on_output;
	runner_exit_cb on_exit;
	void *arg;
	runner_started_cb on_started; /* NULL: none */
	void *start_arg;
	unsigned timeout_s;        /* 0: none */
	pid_t pid;                 /* == pgid == sid; 0 while it starts, or when the
				    * spawn failed */
	pid_t spawner;             /* the thread that started the leader (its tid) */
	int pidfd;                 /* the leader's pidfd, or -1 */
	uint64_t grace_ms;
	uint64_t start_ns;
	char *prog;                /* for the "cannot run" line */
	char marker[64];           /* RUNNER_MARKER_VAR=<daemon pid>.<n> */
	struct member *known;      /* the run's processes at the last sweep */
	size_t nknown;
	int nopen;                 /* handles not yet closed */
	unsigned watch_init : 1;   /* exit_watch is initialised */
	unsigned out_init : 1;
	unsigned leader_exited : 1;
	unsigned eof : 1;
	unsigned term_sent : 1;
	unsigned group_termed : 1; /* the group got SIGTERM; the next sweep
				    * marks its members termed */
	unsigned kill_sent : 1;
	unsigned deadline : 1;     /* the wait after SIGKILL ran out */
	unsigned finished : 1;
	unsigned spawning : 1;     /* the start is queued on the pool (spawn_done
				    * ends it); pid is 0 meanwhile */
	struct runner_result res;
	char buf[READ_CHUNK];
};

/* The registry of the leaders of the live runs of this process, all loops
 * together (runner_tree.c): their runs reap them, a sweep never may. */
/* Before a leader's spawn, on the thread that spawns it: room for one more
 * leader, and the thread marked as starting one (until runner__spawn_end,
 * which the same thread must call after the spawn, whatever its outcome).
 * *locked is 1 when the registry's lock stays held across the spawn (a
 * thread beyond the spawners' list). 0 or -ENOMEM (then no spawn_end). */
int runner__spawn_begin(int *locked);
/* After the spawn: registers pid, the new leader (0: none started), and
 * ends the mark of runner__spawn_begin; locked as it returned. */
void runner__spawn_end(pid_t pid, int locked);
/* The start time of process pid: field 22 of /proc/PID/stat, clock ticks
 * since boot, into *start. 0, or -1 when pid is gone or unreadable. It
 * waits while pid is in the middle of an exec. Any thread. */
int runner__start_time(pid_t pid, unsigned long long *start);
/* Unregisters pid once its run has reaped it; takes the lock itself. */
void runner__leaders_remove(pid_t pid);

/* Records in p->res that sig was sent to processes of the run (SIGKILL
 * outranks SIGTERM). */
void runner__note_signal(struct runner_proc *p, int sig);
/* Sends sig to the run's process group, unless its id may no longer be the
 * run's (see runner_tree.c). 0, -ESRCH (that, or no such group) or another
 * negative errno of kill(). */
int runner__signal_group(struct runner_proc *p, int sig);
/* One look at /proc (see runner_tree.c): finds the run's processes, reaps
 * dead orphans, and sends the run's processes the signal the run is at:
 * SIGKILL on every sweep once p->kill_sent, SIGTERM once to each after
 * p->term_sent. p->known becomes what was found (freed with free()).
 * Returns how many of the run's processes are alive (zombies do not
 * count); without /proc, whether the group exists. */
int runner__sweep(struct runner_proc *p);

#endif
