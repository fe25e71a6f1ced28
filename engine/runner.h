/*
 * runner.h - child processes on the engine's libuv loop: stage programs and
 * recipes, each in its own process group (its own session, setsid), with
 * stdout and stderr merged into one pipe streamed to a callback, a timeout,
 * and cancellation that ends the whole process group (SIGTERM, then SIGKILL
 * after a grace period).
 *
 * Design: uv_spawn with UV_PROCESS_DETACHED (so pgid == pid), one pipe whose
 * write end is both stdout and stderr of the child, stdin from /dev/null.
 * When the leader exits, whatever is left of its group is sent SIGTERM (and
 * SIGKILL after the grace period), so no process outlives its run. The exit
 * callback fires once, after the leader exited and the pipe reached EOF (or
 * the group was killed and the grace period ran out).
 *
 * Threads: every function must be called on the loop's thread; callbacks
 * run there too.
 */
#ifndef PACKETFS_RUNNER_H
#define PACKETFS_RUNNER_H

#include <sys/types.h>
#include <uv.h>

struct runner_spec {
	char *const *argv;   /* argv[0] is the program (PATH is searched) */
	char *const *env;    /* full environment, NULL-terminated */
	const char *cwd;
	unsigned timeout_s;  /* 0 = none */
	unsigned grace_s;    /* SIGTERM -> SIGKILL delay; 0 means 5 */
};

struct runner_result {
	int exit_code;      /* valid when term_signal == 0 and spawn_error == 0 */
	int term_signal;    /* signal that ended the leader, or 0 */
	int timed_out;      /* the timeout fired */
	int cancelled;      /* runner_cancel() was called */
	int spawn_error;    /* negative errno when the program could not start */
	double duration_s;  /* wall time from spawn to leader exit */
};

struct runner_proc;

/* Output chunk (not NUL-terminated); called zero or more times. */
typedef void (*runner_output_cb)(void *arg, const char *data, size_t len);
/* Called exactly once; the runner_proc is freed right after it returns. */
typedef void (*runner_exit_cb)(void *arg, const struct runner_result *res);

/*
 * Starts spec. On success returns 0 and *out (valid until the exit callback
 * returns). When the program cannot be started, returns 0 as well and the
 * exit callback fires later (from the loop) with spawn_error set, after an
 * output line "packetfs: cannot run PROGRAM: REASON" - so callers have one
 * path for every end. Returns -ENOMEM only when nothing was started.
 */
int runner_start(uv_loop_t *loop, const struct runner_spec *spec, runner_output_cb on_output,
		 runner_exit_cb on_exit, void *arg, struct runner_proc **out);

/* The process id (== process group id) or 0 when spawning failed. */
pid_t runner_pid(const struct runner_proc *p);

/* Ends the process group: SIGTERM now, SIGKILL after the grace period.
 * The result then has cancelled = 1. Idempotent. */
void runner_cancel(struct runner_proc *p);

/* Sends SIGTERM, then SIGKILL after grace_s seconds, to process group pgid
 * left over from an earlier daemon, blocking the caller at most grace_s
 * seconds. For crash recovery, before the loop runs. Returns 0 when the
 * group is gone (or never existed). Any thread. */
int runner_kill_group_sync(pid_t pgid, unsigned grace_s);

#endif
