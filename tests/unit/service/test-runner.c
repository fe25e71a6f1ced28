/*
 * test-runner.c - the process runner on a real libuv loop with real /bin/sh
 * programs: merged stdout/stderr, stdin from /dev/null, a process group of
 * its own, signals neither ignored nor blocked whatever the caller's, exit
 * codes and signals, programs that cannot start, the PATH search on the
 * run's own PATH and scripts without "#!", the exit seen without a pidfd
 * (SIGCHLD), timeouts and
 * cancellation that end whole process trees (SIGTERM, then SIGKILL for
 * programs that ignore it) - descendants that left the run's session with
 * setsid() and were orphaned included -, leaders that leave children
 * behind, the run's environment marker, cwd and env, and
 * runner_kill_group_sync.
 *
 * The test process is a child subreaper (runner_set_subreaper), as the
 * daemon is, so the orphans of every run become its children. The runner
 * reaps those itself; while a loop runs, a reaper timer also plays init
 * for anything else (never a leader: each run reaps its own). The scripts name
 * their processes in their output ("pid=N"), and once a run has ended the
 * test checks, without timing, that each of them is dead (gone, or a
 * zombie), reaps whatever is left (reap_orphans) and that nothing of the
 * run's process group remains (kill(-pgid, 0) fails with ESRCH). An alarm
 * guards the waits against hanging (a run that never ends, a process that
 * survived).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"
#include "test.h"
#include "util.h"

struct run {
	struct runner_proc *proc;
	pid_t pid;
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

#define MAX_LEADERS 8

static pid_t leaders[MAX_LEADERS]; /* leaders started on the current loop */
static int nleaders;
static struct reaped reaped;       /* orphans reaped since the last reap_orphans */
static uv_timer_t reaper;

static char *const test_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };

static void on_output(void *arg, const char *data, size_t len)
{
	struct run *r = arg;

	if (r->exits)
		r->outputs_after_exit++;
	ASSERT_EQ(buf_append(&r->out, data, len), 0);
	if (r->cancel_on && strstr(r->out.data, r->cancel_on)) {
		runner_cancel(r->proc);
		runner_cancel(r->proc); /* idempotent */
		r->cancel_on = NULL;
	}
}

static void on_exit_cb(void *arg, const struct runner_result *res)
{
	struct run *r = arg;

	r->exits++;
	r->res = *res;
}

/* A hang guard, not a timing check: every wait guarded by it ends within
 * the runs' few seconds of timeouts and grace periods when all is well. */
static void on_alarm(int sig)
{
	static const char msg[] = "hung: a run did not end, or a process outlived its run\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static void count_reaped(int st)
{
	reaped.count++;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)
		reaped.by_term++;
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		reaped.by_kill++;
	else
		reaped.other++;
}

static int is_leader(pid_t pid)
{
	int i;

	for (i = 0; i < nleaders; i++)
		if (leaders[i] == pid)
			return 1;
	return 0;
}

/* Reaps dead orphans; stops at a dead leader, which its run reaps. */
static void on_reaper(uv_timer_t *t)
{
	siginfo_t si;
	int st;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		if (is_leader(si.si_pid))
			return;
		ASSERT_EQ(waitpid(si.si_pid, &st, 0), si.si_pid);
		count_reaped(st);
	}
}

static void loop_begin(uv_loop_t *loop)
{
	ASSERT_EQ(uv_loop_init(loop), 0);
	ASSERT_EQ(uv_timer_init(loop, &reaper), 0);
	ASSERT_EQ(uv_timer_start(&reaper, on_reaper, 10, 10), 0);
	uv_unref((uv_handle_t *)&reaper);
	nleaders = 0;
}

/* Runs the loop until every run has ended; no runner handle may be left. */
static void loop_end(uv_loop_t *loop)
{
	alarm(30);
	ASSERT_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
	alarm(0);
	uv_close((uv_handle_t *)&reaper, NULL);
	ASSERT_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
	ASSERT_EQ(uv_loop_close(loop), 0);
	nleaders = 0;
}

/* Starts one run on loop (not yet running the loop). */
static void start(uv_loop_t *loop, struct run *r, char *const *argv, char *const *env,
		  const char *cwd, unsigned timeout_s, const char *cancel_on)
{
	struct runner_spec spec = {
		.argv = argv, .env = env, .cwd = cwd, .timeout_s = timeout_s, .grace_s = 1,
	};

	memset(r, 0, sizeof(*r));
	buf_init(&r->out);
	ASSERT_EQ(buf_puts(&r->out, ""), 0);
	r->cancel_on = cancel_on;
	ASSERT_EQ(runner_start(loop, &spec, on_output, on_exit_cb, r, &r->proc), 0);
	ASSERT(r->proc != NULL);
	r->pid = runner_pid(r->proc);
	ASSERT(nleaders < MAX_LEADERS);
	leaders[nleaders++] = r->pid;
	/* Never a callback from inside runner_start. */
	ASSERT_EQ(r->exits, 0);
}

/* Runs argv to its end; the loop must be left without a single handle. */
static void run_sh(struct run *r, const char *script, const char *cwd, unsigned timeout_s,
		   const char *cancel_on)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	uv_loop_t loop;

	loop_begin(&loop);
	start(&loop, r, argv, test_env, cwd, timeout_s, cancel_on);
	loop_end(&loop);
	ASSERT_EQ(r->exits, 1);
	ASSERT_EQ(r->outputs_after_exit, 0);
}


/*
 * Reaps every child of this process (the orphans of finished runs) and
 * returns the count of all orphans reaped since the last call. Every one
 * of them was signalled before the run ended, so the wait is short; a
 * survivor would block it, which the alarm turns into a failure.
 */
static struct reaped reap_orphans(void)
{
	struct reaped rp;
	int st;

	alarm(30);
	for (;;) {
		pid_t w = waitpid(-1, &st, 0);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			ASSERT_EQ(errno, ECHILD);
			break;
		}
		count_reaped(st);
	}
	alarm(0);
	rp = reaped;
	memset(&reaped, 0, sizeof(reaped));
	return rp;
}

static void assert_group_gone(pid_t pgid)
{
	ASSERT(pgid > 1);
	errno = 0;
	ASSERT_EQ(kill(-pgid, 0), -1);
	ASSERT_EQ(errno, ESRCH);
}

/* Whether process pid is dead: gone, or a zombie. */
static int dead(pid_t pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return !rp || rp[1] == '\0' || rp[2] == 'Z';
}

/* The numbers after each "pid=" in text, into pids; the count (>= want). */
static int pids_of(const char *text, pid_t *pids, int max, int want)
{
	const char *q = text;
	int n = 0;

	while (n < max && (q = strstr(q, "pid="))) {
		q += 4;
		pids[n] = (pid_t)atoi(q);
		ASSERT(pids[n] > 1);
		n++;
	}
	if (n < want)
		FAIL_AT("want %d pids in the output, found %d: \"%s\"", want, n, text);
	return n;
}

/* Every process named "pid=N" in the output of r is dead, and after the
 * reaping so is its group; returns how many were named. */
static int assert_run_gone(struct run *r, int want)
{
	pid_t pids[16];
	int i, n = pids_of(r->out.data, pids, 16, want);

	for (i = 0; i < n; i++)
		if (!dead(pids[i]))
			FAIL_AT("process %d outlived its run (output \"%s\")", (int)pids[i],
				r->out.data);
	reap_orphans();
	for (i = 0; i < n; i++) {
		errno = 0;
		ASSERT_EQ(kill(pids[i], 0), -1);
		ASSERT_EQ(errno, ESRCH);
	}
	assert_group_gone(r->pid);
	return n;
}

TEST(output_stdout_and_stderr)
{
	struct run r;
	char want[128];

	run_sh(&r, "echo out; echo err >&2; echo \"pgid=$(cut -d' ' -f5 /proc/$$/stat)\"; "
		   "echo \"sid=$(cut -d' ' -f6 /proc/$$/stat) pid=$$\"; "
		   "[ \"$(readlink /proc/$$/fd/0)\" = /dev/null ] && echo stdin-null; exit 3",
	       NULL, 0, NULL);
	ASSERT(r.pid > 1);
	ASSERT_CONTAINS(r.out.data, "out\n");
	ASSERT_CONTAINS(r.out.data, "err\n");
	ASSERT_CONTAINS(r.out.data, "stdin-null\n");
	/* Its own session and process group: pgid == sid == pid. */
	snprintf(want, sizeof(want), "pgid=%d\n", (int)r.pid);
	ASSERT_CONTAINS(r.out.data, want);
	snprintf(want, sizeof(want), "sid=%d pid=%d\n", (int)r.pid, (int)r.pid);
	ASSERT_CONTAINS(r.out.data, want);
	ASSERT_EQ(r.res.exit_code, 3);
	ASSERT_EQ(r.res.term_signal, 0);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT_EQ(r.res.cancelled, 0);
	ASSERT_EQ(r.res.spawn_error, 0);
	ASSERT(r.res.duration_s >= 0);
	buf_free(&r.out);
	ASSERT_EQ(reap_orphans().count, 0);
	assert_group_gone(r.pid);
}

TEST(output_order_and_volume)
{
	struct run r;
	size_t i;

	/* 1 MB through the pipe arrives complete; lines interleave in order
	 * since both streams are one pipe. */
	run_sh(&r, "echo a; echo b >&2; echo c; head -c 1000000 /dev/zero | tr '\\0' x", NULL, 0,
	       NULL);
	ASSERT_EQ(r.out.len, 6 + 1000000);
	ASSERT_EQ(memcmp(r.out.data, "a\nb\nc\n", 6), 0);
	for (i = 6; i < r.out.len; i++)
		if (r.out.data[i] != 'x')
			FAIL_AT("byte %zu is %d", i, r.out.data[i]);
	ASSERT_EQ(r.res.exit_code, 0);
	buf_free(&r.out);
}

TEST(exit_codes_and_signals)
{
	struct run r;

	run_sh(&r, "exit 0", NULL, 0, NULL);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_EQ(r.res.term_signal, 0);
	ASSERT_EQ(r.out.len, 0);
	buf_free(&r.out);

	run_sh(&r, "exit 77", NULL, 0, NULL);
	ASSERT_EQ(r.res.exit_code, 77);
	buf_free(&r.out);

	run_sh(&r, "kill -USR1 $$; sleep 100", NULL, 0, NULL);
	ASSERT_EQ(r.res.term_signal, SIGUSR1);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT_EQ(r.res.cancelled, 0);
	buf_free(&r.out);
	reap_orphans();
	assert_group_gone(r.pid);
}

static void expect_spawn_error_at(char *const *argv, char *const *env, const char *cwd, int err,
				  const char *line)
{
	uv_loop_t loop;
	struct run r;

	loop_begin(&loop);
	start(&loop, &r, argv, env, cwd, 5, NULL);
	ASSERT_EQ(r.pid, 0);
	loop_end(&loop);
	ASSERT_EQ(r.exits, 1);
	ASSERT_EQ(r.outputs_after_exit, 0);
	ASSERT_EQ(r.res.spawn_error, err);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT_EQ(r.res.term_signal, 0);
	ASSERT_STREQ(r.out.data, line);
	buf_free(&r.out);
}

static void expect_spawn_error(char *const *argv, const char *cwd, int err, const char *line)
{
	expect_spawn_error_at(argv, test_env, cwd, err, line);
}

static void expect_spawn_error_env(char *const *argv, char *const *env, int err, const char *line)
{
	expect_spawn_error_at(argv, env, NULL, err, line);
}

TEST(spawn_errors)
{
	char noexec[PATH_MAX];
	char *missing[] = { "/nonexistent/packetfs-prog", "arg", NULL };
	char *not_on_path[] = { "packetfs-no-such-program", NULL };
	char *not_exec[] = { noexec, NULL };
	char *empty[] = { NULL };
	char *sh[] = { "sh", "-c", "exit 0", NULL };
	char want[PATH_MAX + 64];
	FILE *f;

	expect_spawn_error(missing, NULL, -ENOENT,
			   "packetfs: cannot run /nonexistent/packetfs-prog: "
			   "No such file or directory\n");
	expect_spawn_error(not_on_path, NULL, -ENOENT,
			   "packetfs: cannot run packetfs-no-such-program: "
			   "No such file or directory\n");

	snprintf(noexec, sizeof(noexec), "%s/packetfs-noexec-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	f = fopen(noexec, "w");
	ASSERT(f != NULL);
	fputs("#!/bin/sh\nexit 0\n", f);
	ASSERT_EQ(fclose(f), 0);
	ASSERT_EQ(chmod(noexec, 0644), 0);
	snprintf(want, sizeof(want), "packetfs: cannot run %s: Permission denied\n", noexec);
	/* Not even root may execute a file without any x bit. */
	expect_spawn_error(not_exec, NULL, -EACCES, want);
	unlink(noexec);

	expect_spawn_error(empty, NULL, -EINVAL,
			   "packetfs: cannot run (no program): Invalid argument\n");
	/* A working directory that does not exist: the program cannot start. */
	expect_spawn_error(sh, "/nonexistent/packetfs-dir", -ENOENT,
			   "packetfs: cannot run sh: No such file or directory\n");
}

TEST(child_signal_state)
{
	/* exec: grep reads its own status. Read from the shell's pid, it could
	 * catch dash inside the window where it blocks every signal around its
	 * fork of grep. */
	char *argv[] = { "sh", "-c", "exec grep -E '^Sig(Ign|Blk):' /proc/self/status", NULL };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_term;
	sigset_t block, old_mask;
	uv_loop_t loop;
	struct run r;

	/* The caller ignores SIGPIPE (main) and SIGTERM and blocks SIGUSR1 and
	 * SIGTERM: the program gets every signal at its default, none
	 * blocked. */
	ASSERT_EQ(sigaction(SIGTERM, &ign, &old_term), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	ASSERT_EQ(sigprocmask(SIG_BLOCK, &block, &old_mask), 0);
	loop_begin(&loop);
	start(&loop, &r, argv, test_env, NULL, 0, NULL);
	ASSERT_EQ(sigprocmask(SIG_SETMASK, &old_mask, NULL), 0);
	ASSERT_EQ(sigaction(SIGTERM, &old_term, NULL), 0);
	loop_end(&loop);
	ASSERT_EQ(r.exits, 1);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_STREQ(r.out.data, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	buf_free(&r.out);
}

/* Writes text to path with mode. */
static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ASSERT(f != NULL);
	fputs(text, f);
	ASSERT_EQ(fclose(f), 0);
	ASSERT_EQ(chmod(path, mode), 0);
}

TEST(path_search)
{
	char dir[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8], pa[PATH_MAX + 32],
	     pb[PATH_MAX + 32], path_var[4 * PATH_MAX];
	char *prog[] = { "packetfs-test-prog", "one", "two", NULL };
	char *env[] = { path_var, NULL };
	uv_loop_t loop;
	struct run r;

	snprintf(dir, sizeof(dir), "%s/packetfs-runner-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(dir) != NULL);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	ASSERT_EQ(mkdir(a, 0755), 0);
	ASSERT_EQ(mkdir(b, 0755), 0);
	snprintf(pa, sizeof(pa), "%s/packetfs-test-prog", a);
	snprintf(pb, sizeof(pb), "%s/packetfs-test-prog", b);

	/* Found on the run's PATH (not this process's), past a directory that
	 * does not exist and a candidate without an x bit (EACCES: go on, as
	 * execvp does); a script without "#!" runs with /bin/sh. */
	write_file(pa, "echo not this one\n", 0644);
	write_file(pb, "echo \"args=$*\"; exit 5\n", 0755);
	snprintf(path_var, sizeof(path_var), "PATH=%s/none:%s:%s:/usr/bin:/bin", dir, a, b);
	loop_begin(&loop);
	start(&loop, &r, prog, env, NULL, 0, NULL);
	ASSERT(r.pid > 1);
	loop_end(&loop);
	ASSERT_EQ(r.exits, 1);
	ASSERT_STREQ(r.out.data, "args=one two\n");
	ASSERT_EQ(r.res.exit_code, 5);
	ASSERT_EQ(r.res.spawn_error, 0);
	buf_free(&r.out);

	/* Only the candidate without an x bit: EACCES, not ENOENT. */
	snprintf(path_var, sizeof(path_var), "PATH=%s/none:%s", dir, a);
	expect_spawn_error_env(prog, env, -EACCES,
			       "packetfs: cannot run packetfs-test-prog: Permission denied\n");
	/* The caller's PATH is not searched. */
	snprintf(path_var, sizeof(path_var), "PATH=%s/none", dir);
	expect_spawn_error_env(prog, env, -ENOENT,
			       "packetfs: cannot run packetfs-test-prog: "
			       "No such file or directory\n");

	ASSERT_EQ(unlink(pa), 0);
	ASSERT_EQ(unlink(pb), 0);
	ASSERT_EQ(rmdir(a), 0);
	ASSERT_EQ(rmdir(b), 0);
	ASSERT_EQ(rmdir(dir), 0);
}

/*
 * With no file descriptor left for a pidfd, the leader's exit is seen
 * through SIGCHLD: the run ends as any other. The table is filled up to a
 * lowered limit, all but the two descriptors of the output pipe.
 */
TEST(exit_seen_without_pidfd)
{
	char *argv[] = { "sh", "-c", "echo pid=$$; sleep 0.2; exit 9", NULL };
	char *kids[] = { "sh", "-c", "sleep 0.3 & echo pid=$!; kill -USR1 $$", NULL };
	struct rlimit old, low;
	struct run r, rk;
	int fds[256], n = 0, i;
	uv_loop_t loop;

	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 200;
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	loop_begin(&loop);
	while (n < 256 && (fds[n] = fcntl(0, F_DUPFD_CLOEXEC, 0)) >= 0)
		n++;
	ASSERT_EQ(errno, EMFILE);
	ASSERT(n >= 4);
	close(fds[--n]);
	close(fds[--n]);
	start(&loop, &r, argv, test_env, NULL, 0, NULL);
	ASSERT(r.pid > 1);
	/* No room for a second run's pipe: it cannot start, and says so. */
	start(&loop, &rk, kids, test_env, NULL, 0, NULL);
	ASSERT_EQ(rk.pid, 0);
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	loop_end(&loop);
	ASSERT_EQ(r.exits, 1);
	ASSERT_EQ(r.res.exit_code, 9);
	ASSERT_EQ(r.res.term_signal, 0);
	assert_run_gone(&r, 1);
	buf_free(&r.out);
	ASSERT_EQ(rk.exits, 1);
	ASSERT_EQ(rk.res.spawn_error, -EMFILE);
	ASSERT_CONTAINS(rk.out.data, "packetfs: cannot run sh: Too many open files\n");
	buf_free(&rk.out);

	/* The same with leftovers and a signal, fds restored: the SIGCHLD
	 * watchers of runs and pidfds side by side. */
	loop_begin(&loop);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	n = 0;
	while (n < 256 && (fds[n] = fcntl(0, F_DUPFD_CLOEXEC, 0)) >= 0)
		n++;
	close(fds[--n]);
	close(fds[--n]);
	start(&loop, &rk, kids, test_env, NULL, 0, NULL);
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	start(&loop, &r, argv, test_env, NULL, 0, NULL);
	loop_end(&loop);
	ASSERT_EQ(rk.exits, 1);
	ASSERT_EQ(rk.res.term_signal, SIGUSR1);
	ASSERT_EQ(rk.res.leftovers, 1);
	assert_run_gone(&rk, 1);
	buf_free(&rk.out);
	ASSERT_EQ(r.exits, 1);
	ASSERT_EQ(r.res.exit_code, 9);
	assert_run_gone(&r, 1);
	buf_free(&r.out);
}

TEST(timeout_kills_group)
{
	struct run r;

	/* The leader, a background child, a grandchild whose parent already
	 * exited, and the leader's foreground child: all must go. */
	run_sh(&r, "sleep 100 & echo pid=$$ pid=$!; (sleep 100 & echo pid=$!); echo ready; "
		   "sleep 100; echo survived", NULL, 1, NULL);
	ASSERT_CONTAINS(r.out.data, "ready");
	ASSERT_EQ(r.res.timed_out, 1);
	ASSERT_EQ(r.res.cancelled, 0);
	ASSERT_EQ(r.res.term_signal, SIGTERM);
	ASSERT_EQ(r.res.kill_signal, SIGTERM);
	ASSERT_EQ(r.res.spawn_error, 0);
	ASSERT(!strstr(r.out.data, "survived"));
	assert_run_gone(&r, 3);
	buf_free(&r.out);
}

TEST(cancel_kills_group)
{
	struct run r;

	run_sh(&r, "sleep 100 & echo pid=$$ pid=$!; (sleep 100 & echo pid=$!); echo ready; wait",
	       NULL, 0, "ready");
	ASSERT_EQ(r.res.cancelled, 1);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT_EQ(r.res.term_signal, SIGTERM);
	ASSERT_EQ(r.res.kill_signal, SIGTERM);
	assert_run_gone(&r, 3);
	buf_free(&r.out);
}

TEST(sigterm_ignored_gets_sigkill)
{
	struct run r;

	/* Ignored signals stay ignored across fork and exec: every process of
	 * this group ignores SIGTERM. */
	run_sh(&r, "trap '' TERM; sleep 100 & echo pid=$$ pid=$!; echo ready; sleep 100; "
		   "echo survived", NULL, 1, NULL);
	ASSERT_EQ(r.res.timed_out, 1);
	ASSERT_EQ(r.res.term_signal, SIGKILL);
	ASSERT_EQ(r.res.kill_signal, SIGKILL);
	ASSERT(!strstr(r.out.data, "survived"));
	assert_run_gone(&r, 2);
	buf_free(&r.out);

	/* The same by cancellation. */
	run_sh(&r, "trap '' TERM; echo pid=$$; echo ready; sleep 100; echo survived", NULL, 0,
	       "ready");
	ASSERT_EQ(r.res.cancelled, 1);
	ASSERT_EQ(r.res.term_signal, SIGKILL);
	ASSERT_EQ(r.res.kill_signal, SIGKILL);
	assert_run_gone(&r, 1);
	buf_free(&r.out);
}

TEST(leader_exit_ends_leftovers)
{
	struct run r;

	/* The leader succeeds at once; its background child holds the pipe. */
	run_sh(&r, "sleep 100 & echo pid=$!", NULL, 0, NULL);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_EQ(r.res.term_signal, 0);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT_EQ(r.res.cancelled, 0);
	ASSERT_EQ(r.res.leftovers, 1);
	ASSERT_EQ(r.res.kill_signal, SIGTERM);
	assert_run_gone(&r, 1);
	buf_free(&r.out);

	/* A leftover that ignores SIGTERM and does not even hold the pipe. */
	run_sh(&r, "trap '' TERM; sleep 100 >/dev/null 2>&1 & echo pid=$!", NULL, 0, NULL);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_EQ(r.res.leftovers, 1);
	ASSERT_EQ(r.res.kill_signal, SIGKILL);
	assert_run_gone(&r, 1);
	buf_free(&r.out);

	/* Nothing left: nothing signalled. */
	run_sh(&r, "sleep 0 & wait; echo done", NULL, 0, NULL);
	ASSERT_EQ(r.res.leftovers, 0);
	ASSERT_EQ(r.res.kill_signal, 0);
	buf_free(&r.out);
}

/*
 * A tree that escapes the group: a child, a grandchild, a grandchild that
 * setsid()s away while its parent waits, and one that setsid()s away and
 * is orphaned at once (re-parented to us, the subreaper). Each writes its
 * pid to a file. Once all four are there and both escapees have their own
 * session, the leader prints every pid ("pid=N", its own first), how many
 * escaped ("escaped=2") and "ready", then runs the second %s. The first %s
 * comes first.
 */
static const char escaping_tree[] =
	"%s f=$(mktemp); "
	"sleep 100 & echo $! >> \"$f\"; "
	"(sleep 100 & echo $! >> \"$f\"; wait) & "
	"(setsid sleep 100 & echo $! >> \"$f\"; wait) & "
	"(setsid sh -c 'echo $$ >> \"$1\"; exec sleep 100' sh \"$f\" &); "
	"esc() { n=0; for p in $(cat \"$f\"); do "
	"[ \"$(cut -d' ' -f6 /proc/$p/stat)\" = \"$p\" ] && n=$((n + 1)); done; echo $n; }; "
	"until [ \"$(wc -l < \"$f\")\" -ge 4 ] && [ \"$(esc)\" -ge 2 ]; do sleep 0.01; done; "
	"echo pid=$$; sed 's/^/pid=/' \"$f\"; echo escaped=$(esc); rm -f \"$f\"; echo ready; %s";

/* Runs escaping_tree with pre and post as its two %s (as run_sh, with
 * timeout_s) and checks that both escapees did leave the run's session. */
static void run_escaping_tree(struct run *r, const char *pre, const char *post,
			      unsigned timeout_s)
{
	char script[2048];

	snprintf(script, sizeof(script), escaping_tree, pre, post);
	run_sh(r, script, NULL, timeout_s, NULL);
	ASSERT_CONTAINS(r->out.data, "escaped=2\n");
}

TEST(cancel_reaches_escaped_descendants)
{
	char script[2048];
	uv_loop_t loop;
	struct run r;
	char *argv[] = { "sh", "-c", script, NULL };

	snprintf(script, sizeof(script), escaping_tree, "", "wait");
	loop_begin(&loop);
	start(&loop, &r, argv, test_env, NULL, 0, "ready");
	loop_end(&loop);
	ASSERT_EQ(r.exits, 1);
	ASSERT_CONTAINS(r.out.data, "escaped=2\n");
	ASSERT_EQ(r.res.cancelled, 1);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT_EQ(r.res.term_signal, SIGTERM);
	ASSERT_EQ(r.res.kill_signal, SIGTERM);
	ASSERT_EQ(assert_run_gone(&r, 5), 5);
	buf_free(&r.out);
}

TEST(timeout_reaches_escaped_descendants)
{
	struct run r;

	run_escaping_tree(&r, "", "wait", 1);
	ASSERT_EQ(r.res.timed_out, 1);
	ASSERT_EQ(r.res.cancelled, 0);
	ASSERT_EQ(r.res.term_signal, SIGTERM);
	ASSERT_EQ(r.res.kill_signal, SIGTERM);
	assert_run_gone(&r, 5);
	buf_free(&r.out);

	/* Escapees that ignore SIGTERM (as the whole tree does) get SIGKILL. */
	run_escaping_tree(&r, "trap '' TERM;", "wait", 1);
	ASSERT_EQ(r.res.timed_out, 1);
	ASSERT_EQ(r.res.term_signal, SIGKILL);
	ASSERT_EQ(r.res.kill_signal, SIGKILL);
	assert_run_gone(&r, 5);
	buf_free(&r.out);
}

TEST(leader_exit_ends_escaped_descendants)
{
	struct run r;

	/* The leader exits 0 at once, leaving the whole tree behind. */
	run_escaping_tree(&r, "", "exit 0", 0);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_EQ(r.res.term_signal, 0);
	ASSERT_EQ(r.res.cancelled, 0);
	ASSERT_EQ(r.res.timed_out, 0);
	ASSERT(r.res.leftovers >= 4);
	ASSERT_EQ(r.res.kill_signal, SIGTERM);
	assert_run_gone(&r, 5);
	buf_free(&r.out);

	/* A daemon's way out: double fork, setsid, stdout elsewhere. */
	run_sh(&r, "f=$(mktemp); (setsid sh -c 'echo $$ > \"$1\"; exec sleep 100' sh \"$f\" "
		   ">/dev/null 2>&1 &); until [ -s \"$f\" ]; do sleep 0.01; done; "
		   "echo pid=$(cat \"$f\"); rm -f \"$f\"", NULL, 0, NULL);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_EQ(r.res.leftovers, 1);
	assert_run_gone(&r, 1);
	buf_free(&r.out);
}

TEST(marker_in_environment)
{
	char *env[] = { "PATH=/usr/bin:/bin", RUNNER_MARKER_VAR "=stale.1", NULL };
	char *argv[] = { "sh", "-c", "env | grep -c '^" RUNNER_MARKER_VAR "='; "
			 "echo \"[$" RUNNER_MARKER_VAR "]\"", NULL };
	char want[64];
	uv_loop_t loop;
	struct run r;

	loop_begin(&loop);
	start(&loop, &r, argv, env, NULL, 0, NULL);
	loop_end(&loop);
	/* Once, ours (this process's pid first), never the one inherited. */
	snprintf(want, sizeof(want), "1\n[%d.", (int)getpid());
	ASSERT_CONTAINS(r.out.data, want);
	ASSERT(!strstr(r.out.data, "stale"));
	buf_free(&r.out);
}

TEST(other_children_not_reaped)
{
	char *argv[] = { "sh", "-c", "sleep 0.3 & echo pid=$!", NULL };
	uv_loop_t loop;
	struct run r;
	pid_t kid;
	int st;

	/* A child of ours in our session (as popen's are) that dies while a
	 * run ends: its exit status stays ours to collect. */
	kid = fork();
	ASSERT(kid >= 0);
	if (kid == 0)
		_exit(7);
	loop_begin(&loop);
	uv_timer_stop(&reaper); /* the test's own init stays out of it */
	start(&loop, &r, argv, test_env, NULL, 0, NULL);
	loop_end(&loop);
	ASSERT_EQ(r.res.leftovers, 1);
	ASSERT(dead(kid));
	ASSERT_EQ(waitpid(kid, &st, 0), kid);
	ASSERT(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 7);
	assert_run_gone(&r, 1);
	buf_free(&r.out);
}

TEST(escaped_pipe_holder_does_not_hang)
{
	struct reaped rp;
	struct run r;
	const char *p;
	pid_t esc;

	/* A process in a session of its own, without the run's marker, keeps
	 * the pipe open forever: nothing tells it from any other process, so
	 * the run ends after the grace period without it (and leaves it
	 * alone). The leader waits until it has left. */
	run_sh(&r, "f=$(mktemp); env -u " RUNNER_MARKER_VAR " setsid sh -c 'echo esc=$$; "
		   "echo $$ > \"$1\"; exec sleep 100' "
		   "sh \"$f\" & until [ -s \"$f\" ]; do sleep 0.01; done; rm -f \"$f\"; "
		   "echo started", NULL, 0, NULL);
	ASSERT_EQ(r.res.exit_code, 0);
	ASSERT_CONTAINS(r.out.data, "started\n");
	p = strstr(r.out.data, "esc=");
	ASSERT(p != NULL);
	esc = (pid_t)atoi(p + 4);
	ASSERT(esc > 1 && esc != r.pid);
	ASSERT_EQ(kill(esc, 0), 0);
	ASSERT_EQ(kill(esc, SIGKILL), 0);
	rp = reap_orphans();
	ASSERT_EQ(rp.count, 1);
	ASSERT_EQ(rp.by_kill, 1);
	assert_group_gone(r.pid);
	buf_free(&r.out);
}

TEST(cwd_and_env)
{
	char dir[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 8];
	char *argv[] = { "sh", "-c",
			 "pwd -P; echo \"FOO=$FOO\"; echo \"HOME=${HOME-unset}\"", NULL };
	char *env[] = { "PATH=/usr/bin:/bin", "FOO=bar baz", NULL };
	uv_loop_t loop;
	struct run r;

	snprintf(dir, sizeof(dir), "%s/packetfs-runner-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(dir) != NULL);
	ASSERT(realpath(dir, real) != NULL);

	loop_begin(&loop);
	start(&loop, &r, argv, env, dir, 0, NULL);
	loop_end(&loop);
	snprintf(want, sizeof(want), "%s\n", real);
	ASSERT_CONTAINS(r.out.data, want);
	ASSERT_CONTAINS(r.out.data, "FOO=bar baz\n");
	/* The environment is exactly the one given, not merged with ours. */
	ASSERT_CONTAINS(r.out.data, "HOME=unset\n");
	ASSERT_EQ(r.res.exit_code, 0);
	buf_free(&r.out);
	ASSERT_EQ(rmdir(dir), 0);
}

TEST(concurrent_runs)
{
	char *a[] = { "sh", "-c", "echo one; exit 1", NULL };
	char *b[] = { "sh", "-c", "echo two >&2; exit 2", NULL };
	char *c[] = { "/nonexistent/packetfs-prog", NULL };
	struct run ra, rb, rc;
	uv_loop_t loop;

	loop_begin(&loop);
	start(&loop, &ra, a, test_env, NULL, 0, NULL);
	start(&loop, &rb, b, test_env, NULL, 0, NULL);
	start(&loop, &rc, c, test_env, NULL, 0, NULL);
	ASSERT(ra.pid != rb.pid);
	loop_end(&loop);
	ASSERT_EQ(ra.exits, 1);
	ASSERT_EQ(rb.exits, 1);
	ASSERT_EQ(rc.exits, 1);
	ASSERT_STREQ(ra.out.data, "one\n");
	ASSERT_STREQ(rb.out.data, "two\n");
	ASSERT_EQ(ra.res.exit_code, 1);
	ASSERT_EQ(rb.res.exit_code, 2);
	ASSERT_EQ(rc.res.spawn_error, -ENOENT);
	buf_free(&ra.out);
	buf_free(&rb.out);
	buf_free(&rc.out);
}

/* Forks a session leader that starts a child and then sleeps; with
 * ignore_term every process of the group ignores SIGTERM. Returns the pgid
 * once both processes exist. */
static pid_t fork_group(int ignore_term)
{
	int fds[2];
	char c;
	pid_t pid;

	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		setsid();
		if (ignore_term)
			signal(SIGTERM, SIG_IGN);
		if (fork() == 0) {
			close(fds[1]);
			execl("/bin/sleep", "sleep", "100", (char *)NULL);
			_exit(127);
		}
		if (write(fds[1], "x", 1) != 1)
			_exit(126);
		close(fds[1]);
		execl("/bin/sleep", "sleep", "100", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ASSERT_EQ(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

TEST(kill_group_sync)
{
	struct reaped rp;
	pid_t pgid;

	pgid = fork_group(0);
	ASSERT_EQ(kill(-pgid, 0), 0);
	ASSERT_EQ(runner_kill_group_sync(pgid, 1), 0);
	rp = reap_orphans();
	ASSERT_EQ(rp.count, 2);
	ASSERT_EQ(rp.by_term, 2);
	assert_group_gone(pgid);

	pgid = fork_group(1);
	ASSERT_EQ(runner_kill_group_sync(pgid, 1), 0);
	rp = reap_orphans();
	ASSERT_EQ(rp.count, 2);
	ASSERT_EQ(rp.by_kill, 2);
	assert_group_gone(pgid);

	/* A group that is long gone, and groups that must never be signalled. */
	ASSERT_EQ(runner_kill_group_sync(pgid, 1), 0);
	ASSERT_EQ(runner_kill_group_sync(0, 1), -EINVAL);
	ASSERT_EQ(runner_kill_group_sync(1, 1), -EINVAL);
	ASSERT_EQ(runner_kill_group_sync(-5, 1), -EINVAL);
	ASSERT_EQ(runner_kill_group_sync(getpgrp(), 1), -EINVAL);
}

int main(void)
{
	/* Orphans of the runs become our children, as they become the
	 * daemon's. */
	ASSERT_EQ(runner_set_subreaper(), 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);

	RUN(output_stdout_and_stderr);
	RUN(output_order_and_volume);
	RUN(exit_codes_and_signals);
	RUN(spawn_errors);
	RUN(child_signal_state);
	RUN(path_search);
	RUN(exit_seen_without_pidfd);
	RUN(timeout_kills_group);
	RUN(cancel_kills_group);
	RUN(sigterm_ignored_gets_sigkill);
	RUN(leader_exit_ends_leftovers);
	RUN(cancel_reaches_escaped_descendants);
	RUN(timeout_reaches_escaped_descendants);
	RUN(leader_exit_ends_escaped_descendants);
	RUN(marker_in_environment);
	RUN(other_children_not_reaped);
	RUN(escaped_pipe_holder_does_not_hang);
	RUN(cwd_and_env);
	RUN(concurrent_runs);
	RUN(kill_group_sync);
	return 0;
}
