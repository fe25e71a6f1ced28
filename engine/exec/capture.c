/*
 * capture.c - a program run to its end under a deadline, its standard
 * output captured (capture.h).
 *
 * Design: proc_start (no shell) in a process group of its own, so that the
 * child and whatever it starts form a group that one kill ends; its output
 * is read with poll() up to the deadline (a hanging program is cut off
 * there, not when it would close its output); then it is reaped by its
 * pid, waiting on its pidfd (or in short naps where there is none) until
 * the same deadline, past which the group is killed. A child that closed
 * its output and went on running is caught there too.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for p->pid until deadline (ms, now_ms clock); past it kills its
 * process group and reaps it. Returns the wait status, or -1 when the
 * child cannot be waited for; *timed_out is set when it was killed. */
static int reap(const struct proc *p, long long deadline, int *timed_out)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	int status;
	pid_t w;

	for (;;) {
		w = waitpid(p->pid, &status, *timed_out ? 0 : WNOHANG);
		if (w == p->pid)
			return status;
		if (w < 0 && errno != EINTR)
			return -1;
		if (w == 0 && now_ms() >= deadline) {
			kill(-p->pid, SIGKILL);
			kill(p->pid, SIGKILL);
			*timed_out = 1;
		} else if (w == 0 && p->pidfd >= 0) {
			struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
			long long left = deadline - now_ms();

			poll(&pfd, 1, left > 60000 ? 60000 : left < 0 ? 0 : (int)left);
		} else if (w == 0) {
			nanosleep(&nap, NULL);
		}
	}
}

int capture_exec(struct capture *c)
{
	struct proc_spec spec = { 0 };
	struct proc p;
	char *buf, chunk[4096];
	int rc, timed_out = 0;
	long long deadline;
	size_t n = 0;

	c->out = NULL;
	c->len = 0;
	c->status = -1;
	if (c->err != PROC_OUT_NULL && c->err != PROC_OUT_STDOUT && c->err != PROC_OUT_INHERIT)
		return -EINVAL;
	buf = malloc(c->max + 1);
	if (!buf)
		return -ENOMEM;
	spec.argv = c->argv;
	spec.env = c->env;
	spec.cwd = c->cwd;
	spec.in = c->in_data ? PROC_IN_BYTES : PROC_IN_NULL;
	spec.in_data = c->in_data;
	spec.in_len = c->in_len;
	spec.out = PROC_OUT_PIPE;
	spec.err = c->err;
	rc = proc_start(&spec, &p);
	if (rc) {
		free(buf);
		return rc;
	}
	deadline = now_ms() + c->timeout_ms;
	for (;;) {
		struct pollfd pfd = { .fd = p.out, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (r <= 0)
			continue; /* EINTR, or the deadline: checked above */
		r = read(p.out, chunk, sizeof(chunk));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		if ((size_t)r > c->max - n)
			r = (ssize_t)(c->max - n); /* keep draining, keep nothing */
		memcpy(buf + n, chunk, (size_t)r);
		n += (size_t)r;
	}
	close(p.out);
	p.out = -1;
	c->status = reap(&p, deadline, &timed_out);
	proc_close(&p);
	buf[n] = '\0';
	c->out = buf;
	c->len = n;
	return timed_out ? -ETIMEDOUT : 0;
}

int capture_run(char *const *argv, int timeout_ms, size_t max, char **out, size_t *len)
{
	struct capture c = { .argv = argv, .timeout_ms = timeout_ms, .max = max };
	int rc = capture_exec(&c);

	*out = NULL;
	*len = 0;
	if (rc) {
		free(c.out);
		return rc;
	}
	*out = c.out;
	*len = c.len;
	return c.status != -1 && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0 ? 0 : -EIO;
}
