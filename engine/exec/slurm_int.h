/*
 * slurm_int.h - what the Slurm executor's files share: slurm.c
 * (submission, the poller, following each job) and slurm_cmd.c (its Slurm
 * commands as child processes). Not for the rest of the engine: slurm.h is
 * the contract; slurm_parse.c needs slurm.h alone.
 *
 * Everything here runs on the loop thread only.
 */
#ifndef PACKETFS_SLURM_INT_H
#define PACKETFS_SLURM_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "slurm.h"
#include "util.h"

struct cmd {
	struct slurm_job *job;       /* the job it is for, or NULL for ... */
	struct slurm_poller *poller; /* ... the poller's squeue */
	pid_t pid;           /* the command (== its process group); 0: not started */
	int pidfd;           /* its pidfd, or -1 */
	union {
		uv_poll_t poll;   /* on pidfd: readable once it exited */
		uv_timer_t timer; /* where there is no pidfd: waitpid every CMD_REAP_MS */
	} watch;
	int watch_poll;      /* watch is the poll */
	uv_pipe_t out, err;
	uv_timer_t deadline; /* SLURM_CMD_TIMEOUT_MS after the start: the group is killed */
	struct buf obuf, ebuf;
	size_t max;          /* bytes kept of stdout and of stderr */
	int truncated;       /* more came than max (or memory ran out) */
	int64_t exit_status;
	int term_signal;
	int spawn_error;     /* proc_start failed: negative errno */
	int timed_out;       /* killed at its deadline */
	char prog[32];       /* argv[0], for the deadline's message */
	int exited, eofs;    /* the process exited; pipes at EOF (0..2) */
	int handles;         /* handles not yet closed */
	void (*done)(struct cmd *c);
	struct cmd *next;    /* the owner's commands in flight */
};

struct slurm_poller {
	uv_loop_t *loop;
	uv_timer_t timer;
	int timer_open;          /* the timer is not closed yet */
	uint64_t interval;       /* the timer's period, ms: the shortest poll_ms of jobs */
	struct slurm_job *jobs;  /* followed: neither finished nor detached */
	unsigned gen;            /* counts the jobs that left jobs */
	unsigned pass;           /* numbers the walks over jobs */
	int querying;            /* the squeue runs (its done function has not) */
	int closing;             /* slurm_poller_close() was called */
	int ncmds;
	struct cmd *cmds;        /* the squeue, while it runs or its handles close */
};

struct slurm_job {
	uv_loop_t *loop;
	struct slurm_poller *poller; /* NULL once finished or detached */
	struct slurm_job *next;      /* on poller->jobs */
	unsigned poll_ms;
	unsigned pass;       /* the poller's walk that visited it last */
	int queried;         /* asked for in the squeue that runs */
	struct slurm_callbacks cb;
	void *arg;
	char id[32];
	char *output;
	int64_t offset;
	int fd;
	unsigned timeout_s;
	int64_t started_ns;  /* when the job started running (0: not seen) */
	int tell_started;    /* seen running: the started callback is owed (after scontrol) */
	int restarts;        /* Slurm's Restarts as last seen; -1 unknown (attached) */
	int fail_streak;     /* reads of its state (squeue, scontrol) that failed in a row */
	int midline;         /* the output so far does not end with '\n' */
	int state_busy;      /* sbatch or scontrol in flight */
	int want_cancel, cancel_sent, timed_out;
	int finish_pending;  /* end at the next poll (a failed submission) */
	int finished, detached;
	int ncmds;
	struct cmd *cmds;    /* in flight */
	struct slurm_result res;
};

/* ---- slurm_cmd.c ---- */

/* How long a Slurm command may run, in milliseconds: past it its process
 * group is killed (SIGKILL) and it has failed, its stderr ending in
 * "PROGRAM: error: no answer within N s (killed)". */
#define SLURM_CMD_TIMEOUT_MS 60000

/*
 * Starts argv (PATH is searched) with env (NULL: this process's) on loop
 * (proc_start: stdin /dev/null, stdout and stderr into two pipes), in a
 * process group of its own in this process's session (so that the
 * runner's sweeps, which reap zombies outside the session, leave it to
 * its own waitpid), for job j or, when j is NULL,
 * for poller sp, keeping at most max bytes of its stdout and of its stderr;
 * done runs when it ended, or was killed at SLURM_CMD_TIMEOUT_MS. When it
 * cannot start, done runs at once with spawn_error set. 0 or -ENOMEM.
 */
int slurm__cmd_run(uv_loop_t *loop, struct slurm_job *j, struct slurm_poller *sp,
		   char *const *argv, char *const *env, size_t max, void (*done)(struct cmd *));
/* Sends sig to the command unless it has exited (then nothing). */
void slurm__cmd_kill(struct cmd *c, int sig);
/* Whether the command failed: it did not start, was killed, or exited
 * with a status other than 0. */
int slurm__cmd_failed(const struct cmd *c);
/* The last non-empty line of a command's stderr without Slurm's
 * "PROGRAM: error: " prefix, into out. */
void slurm__last_error_line(const struct cmd *c, char *out, size_t size);

/* ---- slurm.c ---- */

/* Frees j once it finished or was detached and no command of its is left. */
void slurm__job_maybe_free(struct slurm_job *j);
/* Frees sp once it was closed, its timer is closed and its squeue ended. */
void slurm__poller_maybe_free(struct slurm_poller *sp);

#endif
