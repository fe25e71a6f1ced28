/*
 * runner.h - child processes on the engine's libuv loop: stage programs and
 * recipes, each in its own process group (its own session, setsid), with
 * stdout and stderr merged into one pipe streamed to a callback, a timeout,
 * and cancellation that ends the whole process tree (SIGTERM, then SIGKILL
 * after a grace period).
 *
 * Design: proc_start (proc.h: posix_spawn, no fork of the caller; vfork
 * for a run as another user), called on a thread of libuv's pool
 * (uv_queue_work) since it returns only once the child has exec'd, which
 * the loop does not wait for; in a session of its own (so pgid == sid == pid), every
 * signal at its default and none blocked, one pipe whose write end is both
 * stdout and stderr of the child, stdin from /dev/null (or from a copy of
 * given bytes, runner_spec.stdin_data), and the leader's
 * end seen through its pidfd (SIGCHLD where there is none) on the loop;
 * one more environment variable, RUNNER_MARKER_VAR
 * ("PACKETFS_RUN=<daemon pid>.<n>"), that tells the run's processes apart
 * from everyone else's. A run's processes are its leader, every process of
 * its session or group, every descendant of those, and every orphan that
 * was re-parented to this process (runner_set_subreaper) carrying the
 * marker - so a descendant that called setsid() or setpgid() is still
 * reached. Cancel, the timeout and the end of the leader signal all of
 * them, so no process outlives its run. The exit callback fires once,
 * after the leader exited and the pipe reached EOF with none of the run's
 * processes left (or they were SIGKILLed and a short wait ran out).
 *
 * Reaping: as a subreaper this process inherits the orphans of its runs;
 * the runner reaps them (waitpid on their pids, never waitpid(-1)): every
 * zombie child of this process that lies outside this process's session
 * and is not the leader of a live run (each run reaps its own leader, the
 * same way). Other code in the process that waits for its own children
 * must therefore keep them in the process's session (popen, fork without
 * setsid), or not mind losing their exit status; and it must not wait for
 * any child (waitpid(-1)): a leader reaped elsewhere ends its run with
 * exit_code -1.
 *
 * Threads: every function must be called on the loop's thread, callbacks
 * run there too, except where a function says "any thread".
 */
#ifndef PACKETFS_RUNNER_H
#define PACKETFS_RUNNER_H

#include <sys/types.h>
#include <uv.h>

/* The variable added to every run's environment (see the top). */
#define RUNNER_MARKER_VAR "PACKETFS_RUN"

/* A user a run runs as (runner_user_lookup): its ids, its groups from the
 * group database, and the HOME, USER and LOGNAME entries of its
 * environment ("NAME=value"). */
struct runner_user {
	uid_t uid;
	gid_t gid;           /* the primary group */
	gid_t *groups;       /* every group of the user, the primary one included */
	int ngroups;
	char *name;
	char *env_home;      /* "HOME=" the user's home directory ("/" when it has none) */
	char *env_user;      /* "USER=" name */
	char *env_logname;   /* "LOGNAME=" name */
};

struct runner_proc;

/* The leader runs: its pid and its start time (field 22 of /proc/PID/stat,
 * clock ticks since boot; 0 when it could not be read). Called on the pool
 * thread that started it, before the loop hears of it: for registries
 * that other threads read (it may take a short lock; it must not wait on
 * the loop). */
typedef void (*runner_spawned_cb)(void *arg, pid_t pid, unsigned long long start_ticks);
/* Called once on the loop's thread, before any output or exit callback of
 * the run: the leader's pid, or 0 when the program could not start. */
typedef void (*runner_started_cb)(void *arg, pid_t pid);

struct runner_spec {
	char *const *argv;   /* argv[0] is the program (PATH is searched) */
	char *const *env;    /* full environment, NULL-terminated */
	const char *cwd;
	unsigned timeout_s;  /* 0 = none */
	unsigned grace_s;    /* SIGTERM -> SIGKILL delay; 0 means 5 */
	/* NULL: the run is this process's user. Otherwise the run's leader
	 * sets its groups, group id and user id to u's (in that order, each
	 * checked) before it enters cwd and execs, and HOME, USER and LOGNAME
	 * in env are replaced by u's; this process must be root (else the
	 * spawn fails with EPERM). The process group, the marker and the
	 * ending of the run are as for any run. */
	const struct runner_user *user;
	/* NULL: stdin is /dev/null. Otherwise the run's stdin is a file
	 * (an anonymous memfd, copied at the start) holding the stdin_len
	 * bytes at stdin_data, then end of file. */
	const char *stdin_data;
	size_t stdin_len;
	runner_spawned_cb on_spawned; /* NULL: none */
	runner_started_cb on_started; /* NULL: none */
	void *start_arg;              /* the argument of those two */
};

struct runner_result {
	int exit_code;      /* valid when term_signal == 0 and spawn_error == 0 */
	int term_signal;    /* signal that ended the leader, or 0 */
	int timed_out;      /* the timeout fired */
	int cancelled;      /* runner_cancel() was called */
	int spawn_error;    /* negative errno when the program could not start */
	int kill_signal;    /* the strongest signal the runner sent to the run's
			     * processes: SIGTERM, SIGKILL (after the grace
			     * period), or 0 when none was needed */
	int leftovers;      /* processes of the run still alive when the leader
			     * exited, which the runner then ended */
	double duration_s;  /* wall time from spawn to leader exit */
};

/* Output chunk (not NUL-terminated); called zero or more times. */
typedef void (*runner_output_cb)(void *arg, const char *data, size_t len);
/* Called exactly once; the runner_proc is freed right after it returns. */
typedef void (*runner_exit_cb)(void *arg, const struct runner_result *res);

/*
 * Starts spec: copies what it needs of spec (the caller may free it on
 * return) and starts the program on libuv's thread pool. On success
 * returns 0 and *out (valid until the exit callback returns); no callback
 * runs from inside runner_start. Then spec's on_spawned (pool thread) and
 * on_started (loop) say when the program runs. When the program cannot be
 * started, runner_start returns 0 as well and the exit callback fires
 * later (from the loop) with spawn_error set, after on_started with pid 0
 * and an output line "packetfs: cannot run PROGRAM: REASON" - so callers
 * have one path for every end. Returns -ENOMEM only when nothing was
 * started.
 */
int runner_start(uv_loop_t *loop, const struct runner_spec *spec, runner_output_cb on_output,
		 runner_exit_cb on_exit, void *arg, struct runner_proc **out);

/* The user called name, from the user and group databases: 0 and *out
 * (free with runner_user_free), -ENOENT when there is no such user,
 * -ENOMEM, -E2BIG (more than 65536 groups), or another negative errno of
 * the database. Any thread; it may block on the databases (NSS). */
int runner_user_lookup(const char *name, struct runner_user **out);
/* Frees what runner_user_lookup made; NULL is allowed. Any thread. */
void runner_user_free(struct runner_user *u);

/* The process id (== process group id == session id): 0 before on_started,
 * or when spawning failed. */
pid_t runner_pid(const struct runner_proc *p);

/* Ends every process of the run: SIGTERM now (once it runs, when it is
 * still starting), SIGKILL after the grace period. The result then has
 * cancelled = 1. Idempotent. */
void runner_cancel(struct runner_proc *p);

/*
 * Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
 * that orphaned descendants of runs are re-parented to it instead of init,
 * where the runner finds (by their marker), signals and reaps them. Call
 * once, before the first run; any thread. Returns 0 or a negative errno
 * (then runs still work, but a descendant that left the run's session and
 * was orphaned can escape).
 */
int runner_set_subreaper(void);

/* Sends SIGTERM, then SIGKILL after grace_s seconds, to process group pgid
 * left over from an earlier daemon, blocking the caller at most grace_s
 * seconds. For crash recovery, before the loop runs. Returns 0 when the
 * group is gone (or never existed). Any thread. */
int runner_kill_group_sync(pid_t pgid, unsigned grace_s);

#endif
