/*
 * runner-harness.c - what the runner's unit tests (test-runner.c,
 * test-runner-tree.c) share: a real libuv loop with a reaper that plays
 * init, runs of /bin/sh scripts, and the checks that every process a run
 * named ("pid=N" in its output) is dead and its group gone. See
 * runner-harness.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner-harness.h"
#include "test.h"

#define MAX_LEADERS 8

static pid_t leaders[MAX_LEADERS]; /* leaders started on the current loop */
static int nleaders;
static int starting;               /* runs whose on_started has not come */
static struct reaped reaped;       /* orphans reaped since the last reap_orphans */
static uv_timer_t reaper;

char *const test_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
const struct runner_user *harness_user;
const char *harness_stdin;
size_t harness_stdin_len;

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

	ASSERT_EQ(r->started, 1);
	r->exits++;
	r->res = *res;
}

/* A hang guard, not a timing check: every wait guarded by it ends within
 * the runs' few seconds of timeouts and grace periods when all is well. */
void on_alarm(int sig)
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

/* Reaps dead orphans; stops at a dead leader, which its run reaps, and
 * while a run starts (its leader may be dead already). */
static void on_reaper(uv_timer_t *t)
{
	siginfo_t si;
	int st, i;

	while (starting == 0) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		for (i = 0; i < nleaders && leaders[i] != si.si_pid; i++)
			;
		if (i < nleaders)
			return;
		ASSERT_EQ(waitpid(si.si_pid, &st, 0), si.si_pid);
		count_reaped(st);
	}
}

void loop_begin(uv_loop_t *loop)
{
	ASSERT_EQ(uv_loop_init(loop), 0);
	ASSERT_EQ(uv_timer_init(loop, &reaper), 0);
	ASSERT_EQ(uv_timer_start(&reaper, on_reaper, 10, 10), 0);
	uv_unref((uv_handle_t *)&reaper);
	nleaders = 0;
}

void reaper_stop(void)
{
	uv_timer_stop(&reaper);
}

/* Runs the loop until every run has ended; no runner handle may be left. */
void loop_end(uv_loop_t *loop)
{
	alarm(30);
	ASSERT_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
	alarm(0);
	uv_close((uv_handle_t *)&reaper, NULL);
	ASSERT_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
	ASSERT_EQ(uv_loop_close(loop), 0);
	nleaders = 0;
}

static void on_started(void *arg, pid_t pid)
{
	struct run *r = arg;

	ASSERT_EQ(r->started, 0);
	ASSERT_EQ(r->exits, 0);
	ASSERT(starting > 0);
	starting--;
	r->started++;
	r->pid = pid;
	if (pid > 0) {
		ASSERT(nleaders < MAX_LEADERS);
		leaders[nleaders++] = pid;
	}
}

/* Starts one run on loop (not yet running the loop). */
void start(uv_loop_t *loop, struct run *r, char *const *argv, char *const *env,
		  const char *cwd, unsigned timeout_s, const char *cancel_on)
{
	struct runner_spec spec = {
		.argv = argv, .env = env, .cwd = cwd, .timeout_s = timeout_s, .grace_s = 1,
		.user = harness_user, .stdin_data = harness_stdin, .stdin_len = harness_stdin_len,
		.on_started = on_started, .start_arg = r,
	};

	memset(r, 0, sizeof(*r));
	buf_init(&r->out);
	ASSERT_EQ(buf_puts(&r->out, ""), 0);
	r->cancel_on = cancel_on;
	starting++;
	ASSERT_EQ(runner_start(loop, &spec, on_output, on_exit_cb, r, &r->proc), 0);
	ASSERT(r->proc != NULL);
	/* Never a callback from inside runner_start. */
	ASSERT_EQ(r->started, 0);
	ASSERT_EQ(r->exits, 0);
	ASSERT_EQ(runner_pid(r->proc), 0);
}

void wait_started(uv_loop_t *loop, struct run *r)
{
	alarm(30);
	while (!r->started)
		uv_run(loop, UV_RUN_ONCE);
	alarm(0);
	ASSERT_EQ(runner_pid(r->proc), r->pid);
}

/* Runs argv to its end; the loop must be left without a single handle. */
void run_sh(struct run *r, const char *script, const char *cwd, unsigned timeout_s,
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

void assert_exited(const struct run *r, int code)
{
	ASSERT_EQ(r->res.exit_code, code);
	ASSERT_EQ(r->res.term_signal, 0);
	ASSERT_EQ(r->res.timed_out, 0);
	ASSERT_EQ(r->res.cancelled, 0);
}

/*
 * Reaps every child of this process (the orphans of finished runs) and
 * returns the count of all orphans reaped since the last call. Every one
 * of them was signalled before the run ended, so the wait is short; a
 * survivor would block it, which the alarm turns into a failure.
 */
struct reaped reap_orphans(void)
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

void assert_group_gone(pid_t pgid)
{
	ASSERT(pgid > 1);
	errno = 0;
	ASSERT_EQ(kill(-pgid, 0), -1);
	ASSERT_EQ(errno, ESRCH);
}

/* Whether process pid is dead: gone, or a zombie. */
int dead(pid_t pid)
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
int pids_of(const char *text, pid_t *pids, int max, int want)
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
int assert_run_gone(struct run *r, int want)
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

