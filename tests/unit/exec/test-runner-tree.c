/*
 * test-runner-tree.c - the process runner's hold on whole process trees
 * (engine/exec/runner_tree.c), on a real libuv loop with real /bin/sh
 * programs: timeouts and cancellation that end a run's whole tree
 * (SIGTERM, then SIGKILL for programs that ignore it), descendants that
 * left the run's session with setsid() and were orphaned included,
 * leaders that leave children behind, the run's environment marker, other
 * children of the process left alone, a pipe held by an escaped
 * descendant, and runner_kill_group_sync. The harness (runner-harness.h)
 * checks after each run that every process it named is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner-harness.h"
#include "test.h"

/* The runner stopped r's run, by its timeout (by_timeout 1) or by a
 * cancellation (0), not the other way, with sig: the signal that ended the
 * leader and the strongest the group got. Then every process the run named
 * (at least want) is gone; frees r's output and returns how many were named. */
static int assert_stopped(struct run *r, int by_timeout, int sig, int want)
{
	int n;

	ASSERT_EQ(r->res.timed_out, by_timeout);
	ASSERT_EQ(r->res.cancelled, !by_timeout);
	ASSERT_EQ(r->res.term_signal, sig);
	ASSERT_EQ(r->res.kill_signal, sig);
	n = assert_run_gone(r, want);
	buf_free(&r->out);
	return n;
}

/* r's leader exited 0 by itself, leaving leftovers processes behind that
 * the runner then ended with sig (0: nothing to end). Then every process
 * the run named (at least want) is gone; frees r's output. */
static void assert_leftovers(struct run *r, int leftovers, int sig, int want)
{
	assert_exited(r, 0);
	ASSERT_EQ(r->res.leftovers, leftovers);
	ASSERT_EQ(r->res.kill_signal, sig);
	assert_run_gone(r, want);
	buf_free(&r->out);
}

TEST(timeout_kills_group)
{
	struct run r;

	/* The leader, a background child, a grandchild whose parent already
	 * exited, and the leader's foreground child: all must go. */
	run_sh(&r, "sleep 100 & echo pid=$$ pid=$!; (sleep 100 & echo pid=$!); echo ready; "
		   "sleep 100; echo survived", NULL, 1, NULL);
	ASSERT_CONTAINS(r.out.data, "ready");
	ASSERT_EQ(r.res.spawn_error, 0);
	ASSERT(!strstr(r.out.data, "survived"));
	assert_stopped(&r, 1, SIGTERM, 3);
}

TEST(cancel_kills_group)
{
	struct run r;

	run_sh(&r, "sleep 100 & echo pid=$$ pid=$!; (sleep 100 & echo pid=$!); echo ready; wait",
	       NULL, 0, "ready");
	assert_stopped(&r, 0, SIGTERM, 3);
}

TEST(sigterm_ignored_gets_sigkill)
{
	struct run r;

	/* Ignored signals stay ignored across fork and exec: every process of
	 * this group ignores SIGTERM. */
	run_sh(&r, "trap '' TERM; sleep 100 & echo pid=$$ pid=$!; echo ready; sleep 100; "
		   "echo survived", NULL, 1, NULL);
	ASSERT(!strstr(r.out.data, "survived"));
	assert_stopped(&r, 1, SIGKILL, 2);

	/* The same by cancellation. */
	run_sh(&r, "trap '' TERM; echo pid=$$; echo ready; sleep 100; echo survived", NULL, 0,
	       "ready");
	assert_stopped(&r, 0, SIGKILL, 1);
}

TEST(leader_exit_ends_leftovers)
{
	struct run r;

	/* The leader succeeds at once; its background child holds the pipe. */
	run_sh(&r, "sleep 100 & echo pid=$!", NULL, 0, NULL);
	assert_leftovers(&r, 1, SIGTERM, 1);

	/* A leftover that ignores SIGTERM and does not even hold the pipe. */
	run_sh(&r, "trap '' TERM; sleep 100 >/dev/null 2>&1 & echo pid=$!", NULL, 0, NULL);
	assert_leftovers(&r, 1, SIGKILL, 1);

	/* Nothing left: nothing signalled. */
	run_sh(&r, "sleep 0 & wait; echo done", NULL, 0, NULL);
	assert_leftovers(&r, 0, 0, 0);
}

/*
 * The leader exits while this process has a single descriptor free: the
 * sweeps can list /proc but not read a process in it. That is no proof
 * that nothing of the run is left: the leftover still gets its SIGTERM
 * (the run's group is asked instead), and the run ends without it.
 */
TEST(sweep_without_descriptors)
{
	char *argv[] = { "sh", "-c", "sleep 100 & echo pid=$!; sleep 0.3", NULL };
	struct rlimit old, low;
	int fds[512], n = 0, i;
	uv_loop_t loop;
	struct run r;

	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 256;
	loop_begin(&loop);
	start(&loop, &r, argv, test_env, NULL, 0, NULL);
	wait_started(&loop, &r);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < 512 && (fds[n] = fcntl(0, F_DUPFD_CLOEXEC, 0)) >= 0)
		n++;
	ASSERT_EQ(errno, EMFILE);
	ASSERT(n >= 1);
	close(fds[--n]);
	alarm(30);
	while (!r.exits)
		uv_run(&loop, UV_RUN_ONCE);
	alarm(0);
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	loop_end(&loop);
	assert_leftovers(&r, 1, SIGTERM, 1);
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
	ASSERT_EQ(assert_stopped(&r, 0, SIGTERM, 5), 5);
}

TEST(timeout_reaches_escaped_descendants)
{
	struct run r;

	run_escaping_tree(&r, "", "wait", 1);
	assert_stopped(&r, 1, SIGTERM, 5);

	/* Escapees that ignore SIGTERM (as the whole tree does) get SIGKILL. */
	run_escaping_tree(&r, "trap '' TERM;", "wait", 1);
	assert_stopped(&r, 1, SIGKILL, 5);
}

TEST(leader_exit_ends_escaped_descendants)
{
	struct run r;

	/* The leader exits 0 at once, leaving the whole tree behind. */
	run_escaping_tree(&r, "", "exit 0", 0);
	assert_exited(&r, 0);
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

/* The daemon's way out, from a loop on a thread other than the main one:
 * the leader is a child of the pool thread that started it, the orphan
 * goes to the main thread, and the end of the run still finds it. */
static void *escape_on_thread(void *arg)
{
	struct run *r = arg;

	run_sh(r, "f=$(mktemp); (setsid sh -c 'echo $$ > \"$1\"; exec sleep 100' sh \"$f\" "
		  ">/dev/null 2>&1 &); until [ -s \"$f\" ]; do sleep 0.01; done; "
		  "echo pid=$(cat \"$f\"); rm -f \"$f\"", NULL, 0, NULL);
	return NULL;
}

TEST(escaped_from_a_thread_run)
{
	struct run r;
	pthread_t t;
	int k;

	/* Twice: the second run's end asks the threads that started runs
	 * before (the first one's loop thread is gone by then). */
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(pthread_create(&t, NULL, escape_on_thread, &r), 0);
		ASSERT_EQ(pthread_join(t, NULL), 0);
		ASSERT_EQ(r.res.exit_code, 0);
		ASSERT_EQ(r.res.leftovers, 1);
		assert_run_gone(&r, 1);
		buf_free(&r.out);
	}
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
	reaper_stop(); /* the test's own init stays out of it */
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

	/* First: no run started on the main thread yet. */
	RUN(escaped_from_a_thread_run);
	RUN(timeout_kills_group);
	RUN(cancel_kills_group);
	RUN(sigterm_ignored_gets_sigkill);
	RUN(leader_exit_ends_leftovers);
	RUN(sweep_without_descriptors);
	RUN(cancel_reaches_escaped_descendants);
	RUN(timeout_reaches_escaped_descendants);
	RUN(leader_exit_ends_escaped_descendants);
	RUN(marker_in_environment);
	RUN(other_children_not_reaped);
	RUN(escaped_pipe_holder_does_not_hang);
	RUN(kill_group_sync);
	return 0;
}
