/*
 * test-runner.c - the process runner's spawning and a run's life, on a
 * real libuv loop with real /bin/sh programs: merged stdout/stderr, stdin
 * from /dev/null, a process group of its own, signals neither ignored nor
 * blocked whatever the caller's, exit codes and signals, programs that
 * cannot start, the PATH search on the run's own PATH and scripts without
 * "#!", the exit seen without a pidfd (SIGCHLD), cwd and env, concurrent
 * runs, bursts of starts on two loops at once, runs as another user (as
 * root). test-runner-tree.c has the whole process trees; the harness
 * (runner-harness.h) checks after each run that every process it named is
 * gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner-harness.h"
#include "test.h"

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
	assert_exited(&r, 3);
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
	loop_end(&loop);
	/* on_started came, with no pid, before the exit. */
	ASSERT_EQ(r.started, 1);
	ASSERT_EQ(r.pid, 0);
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
	loop_end(&loop);
	ASSERT(r.pid > 1);
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
	/* Started while the table is full (no pidfd can be had). */
	wait_started(&loop, &r);
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
	wait_started(&loop, &rk);
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

/* stdin is /dev/null, or a copy of the bytes the spec gives, whole
 * (more than a pipe holds), then end of file. */
TEST(stdin_data)
{
	char *argv[] = { "sh", "-c", "wc -c; echo end", NULL };
	char *head[] = { "sh", "-c", "head -c 11; echo", NULL };
	char want[64];
	uv_loop_t loop;
	struct run r;
	char *big = malloc(300000);

	ASSERT(big != NULL);
	memset(big, 'x', 300000);
	loop_begin(&loop);
	start(&loop, &r, argv, test_env, NULL, 10, NULL);
	loop_end(&loop);
	ASSERT_STREQ(r.out.data, "0\nend\n");
	buf_free(&r.out);

	harness_stdin = big;
	harness_stdin_len = 300000;
	loop_begin(&loop);
	start(&loop, &r, argv, test_env, NULL, 10, NULL);
	loop_end(&loop);
	snprintf(want, sizeof(want), "%d\nend\n", 300000);
	ASSERT_STREQ(r.out.data, want);
	buf_free(&r.out);

	harness_stdin = "{\"a\": 1}\nmore";
	harness_stdin_len = strlen(harness_stdin);
	loop_begin(&loop);
	start(&loop, &r, head, test_env, NULL, 10, NULL);
	loop_end(&loop);
	ASSERT_STREQ(r.out.data, "{\"a\": 1}\nmo\n");
	assert_exited(&r, 0);
	buf_free(&r.out);
	harness_stdin = NULL;
	harness_stdin_len = 0;
	free(big);
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
	loop_end(&loop);
	ASSERT(ra.pid > 1 && rb.pid > 1 && ra.pid != rb.pid);
	ASSERT_EQ(rc.pid, 0);
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

/*
 * Bursts of starts: two threads, each with a loop of its own, start BURST
 * runs each at once. The starts share the pool's threads, runs end and
 * are swept while others are still starting (their leaders not yet
 * registered), and each run still gets its own exit status and output,
 * on_spawned before on_started before the exit, with the same pid.
 */
#define BURST 24

struct burst_run {
	struct runner_proc *proc;
	pid_t spawned, started;  /* pid from on_spawned (a pool thread), on_started */
	unsigned long long start_ticks;
	int exits, code, order_ok;
	struct buf out;
};

static void burst_spawned(void *arg, pid_t pid, unsigned long long start_ticks)
{
	struct burst_run *b = arg;

	__atomic_store_n(&b->start_ticks, start_ticks, __ATOMIC_RELAXED);
	__atomic_store_n(&b->spawned, pid, __ATOMIC_RELEASE);
}

static void burst_started(void *arg, pid_t pid)
{
	struct burst_run *b = arg;

	/* The pool thread's callback came first: the loop heard of the start
	 * after it (uv_queue_work's after-work callback). */
	b->order_ok = __atomic_load_n(&b->spawned, __ATOMIC_ACQUIRE) == pid;
	b->started = pid;
}

static void burst_output(void *arg, const char *data, size_t len)
{
	struct burst_run *b = arg;

	ASSERT(b->started > 0);
	ASSERT_EQ(buf_append(&b->out, data, len), 0);
}

static void burst_exit(void *arg, const struct runner_result *res)
{
	struct burst_run *b = arg;

	b->exits++;
	b->code = res->spawn_error ? res->spawn_error : res->exit_code;
}

static void *burst_thread(void *arg)
{
	struct burst_run *runs = arg;
	char script[BURST][64], *argv[BURST][4];
	struct runner_spec spec;
	uv_loop_t loop;
	int k;

	ASSERT_EQ(uv_loop_init(&loop), 0);
	for (k = 0; k < BURST; k++) {
		snprintf(script[k], sizeof(script[k]), "echo run%d; exit %d", k, k + 1);
		argv[k][0] = "sh";
		argv[k][1] = "-c";
		argv[k][2] = script[k];
		argv[k][3] = NULL;
		memset(&spec, 0, sizeof(spec));
		spec.argv = argv[k];
		spec.env = test_env;
		spec.grace_s = 1;
		spec.on_spawned = burst_spawned;
		spec.on_started = burst_started;
		spec.start_arg = &runs[k];
		buf_init(&runs[k].out);
		ASSERT_EQ(runner_start(&loop, &spec, burst_output, burst_exit, &runs[k],
				       &runs[k].proc), 0);
	}
	ASSERT_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ASSERT_EQ(uv_loop_close(&loop), 0);
	return NULL;
}

TEST(start_bursts_on_two_loops)
{
	static struct burst_run runs[2][BURST];
	pthread_t t[2];
	char want[32];
	int i, k;

	memset(runs, 0, sizeof(runs));
	alarm(60);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, burst_thread, runs[i]), 0);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	alarm(0);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < BURST; k++) {
			struct burst_run *b = &runs[i][k];

			ASSERT_EQ(b->exits, 1);
			ASSERT_EQ(b->code, k + 1);
			ASSERT(b->started > 1);
			ASSERT(b->order_ok);
			ASSERT(b->start_ticks > 0);
			snprintf(want, sizeof(want), "run%d\n", k);
			ASSERT_STREQ(b->out.data, want);
			assert_group_gone(b->started);
			buf_free(&b->out);
		}
	}
	ASSERT_EQ(reap_orphans().count, 0);
}

/* A run as another user ("nobody", as root only): its uid, gid and groups,
 * HOME, USER and LOGNAME are the user's; signals as for any run; cwd is
 * entered as the user (a directory it may not enter fails the spawn with
 * EACCES); cancel ends it and its group. */
TEST(run_as_user)
{
	char *argv[] = { "sh", "-c", "echo \"uid=$(id -u) gid=$(id -g) groups=$(id -G)\"; "
			 "echo \"HOME=$HOME USER=$USER LOGNAME=$LOGNAME\"; pwd; "
			 "grep -E '^Sig(Ign|Blk):' /proc/self/status", NULL };
	char *sleeper[] = { "sh", "-c", "echo started; sleep 100", NULL };
	char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "USER=root", NULL };
	char dir[PATH_MAX], want[256];
	struct runner_user *u = NULL;
	uv_loop_t loop;
	struct run r;
	int i;

	ASSERT_EQ(runner_user_lookup("packetfs-no-such-user", &u), -ENOENT);
	if (geteuid() != 0 || runner_user_lookup("nobody", &u) != 0) {
		printf("  (skipped: needs root and the user nobody)\n");
		return;
	}
	harness_user = u;
	loop_begin(&loop);
	start(&loop, &r, argv, env, "/tmp", 0, NULL);
	loop_end(&loop);
	snprintf(want, sizeof(want), "uid=%d gid=%d groups=", (int)u->uid, (int)u->gid);
	ASSERT_CONTAINS(r.out.data, want);
	for (i = 0; i < u->ngroups; i++) {
		snprintf(want, sizeof(want), "%d", (int)u->groups[i]);
		ASSERT_CONTAINS(r.out.data, want);
	}
	snprintf(want, sizeof(want), "%s %s %s\n/tmp\n", u->env_home, u->env_user, u->env_logname);
	ASSERT_CONTAINS(r.out.data, want);
	ASSERT_CONTAINS(r.out.data, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	assert_exited(&r, 0);
	buf_free(&r.out);

	snprintf(dir, sizeof(dir), "%s/packetfs-runner-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(dir) != NULL);
	ASSERT_EQ(chmod(dir, 0700), 0);
	expect_spawn_error(argv, dir, -EACCES, "packetfs: cannot run sh: Permission denied\n");
	ASSERT_EQ(rmdir(dir), 0);

	loop_begin(&loop);
	start(&loop, &r, sleeper, env, NULL, 0, "started");
	loop_end(&loop);
	ASSERT_EQ(r.res.cancelled, 1);
	ASSERT_EQ(r.res.term_signal, SIGTERM);
	buf_free(&r.out);
	reap_orphans();
	assert_group_gone(r.pid);
	harness_user = NULL;
	runner_user_free(u);
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
	RUN(cwd_and_env);
	RUN(stdin_data);
	RUN(concurrent_runs);
	RUN(start_bursts_on_two_loops);
	RUN(run_as_user);
	return 0;
}
