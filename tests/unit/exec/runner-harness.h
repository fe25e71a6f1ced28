/*
 * runner-harness.h - the harness of the runner's unit tests (test-runner.c:
 * spawning and a run's life; test-runner-tree.c: whole process trees).
 *
 * The test process is a child subreaper (runner_set_subreaper), as the
 * daemon is, so the orphans of every run become its children. The runner
 * reaps those itself; while a loop runs, a reaper timer also plays init
 * for anything else (never a leader: each run reaps its own; nothing
 * while a run is starting, whose leader it does not know yet). The scripts
 * name their processes in their output ("pid=N"), and once a run has
 * ended the test checks, without timing, that each of them is dead (gone,
 * or a zombie), reaps whatever is left (reap_orphans) and that nothing of
 * the run's process group remains (kill(-pgid, 0) fails with ESRCH). An
 * alarm (on_alarm, installed by the program for SIGALRM) guards the waits
 * against hanging. Every function fails the test (exit 1) on a broken
 * expectation; one thread only.
 */
#ifndef PACKETFS_TEST_RUNNER_HARNESS_H
#define PACKETFS_TEST_RUNNER_HARNESS_H

#include <sys/types.h>
#include <uv.h>

#include "runner.h"
#include "util.h"

struct run {
	struct runner_proc *proc;
	pid_t pid;              /* from on_started (0 until then, or when it did not start) */
	int started;            /* on_started calls seen */
	struct buf out;
	int exits;              /* exit callbacks seen */
	int outputs_after_exit; /* output callbacks after the exit callback */
	struct runner_result res;
	const char *cancel_on;  /* cancel once the output contains this */
};

struct reaped {
	int count;
	int by_term;  /* ended by SIGTERM */
	int by_kill;  /* ended by SIGKILL */
	int other;    /* exited, or another signal */
};

/* PATH only: the environment of the runs. */
extern char *const test_env[];
/* The user start() makes its runs run as (runner_spec.user); NULL: ours. */
extern const struct runner_user *harness_user;
/* The bytes start() gives its runs on stdin (runner_spec.stdin_data,
 * harness_stdin_len of them); NULL: /dev/null. */
extern const char *harness_stdin;
extern size_t harness_stdin_len;

/* SIGALRM's handler: a run did not end, or a process outlived its run. */
void on_alarm(int sig);
/* Initialises loop with the reaper timer; forgets earlier leaders. */
void loop_begin(uv_loop_t *loop);
/* Stops the reaper of the loop begun last: the test's own children stay
 * its own to collect. */
void reaper_stop(void);
/* Runs the loop until every run has ended (under a 30 s alarm); no runner
 * handle may be left; closes the loop. */
void loop_end(uv_loop_t *loop);
/* Starts one run of argv on loop (not yet running the loop); r gets its
 * output and result. cancel_on: cancel once the output contains it, or
 * NULL. timeout_s 0: none; the grace period is 1 s. */
void start(uv_loop_t *loop, struct run *r, char *const *argv, char *const *env,
	   const char *cwd, unsigned timeout_s, const char *cancel_on);
/* Runs loop until r's start is over (on_started): its pid is known. */
void wait_started(uv_loop_t *loop, struct run *r);
/* Runs `sh -c script` to its end on a loop of its own. */
void run_sh(struct run *r, const char *script, const char *cwd, unsigned timeout_s,
	    const char *cancel_on);
/* r's run ended by itself: its leader exited with code, no signal ended
 * it, and neither its timeout nor a cancellation came. */
void assert_exited(const struct run *r, int code);
/* Reaps every child (the orphans of finished runs); what was reaped since
 * the last call, counted by how each ended. */
struct reaped reap_orphans(void);
/* kill(-pgid, 0) fails with ESRCH. */
void assert_group_gone(pid_t pgid);
/* Whether process pid is dead: gone, or a zombie. */
int dead(pid_t pid);
/* The numbers after each "pid=" in text, into pids (at most max); the
 * count, which must be >= want. */
int pids_of(const char *text, pid_t *pids, int max, int want);
/* Every process named "pid=N" in r's output is dead and, after the
 * reaping, gone with its group; returns how many were named. */
int assert_run_gone(struct run *r, int want);

#endif
