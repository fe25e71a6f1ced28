/*
 * slurm_cmd.c - the Slurm commands of slurm.c (sbatch, squeue, scontrol,
 * scancel) as child processes on the loop (slurm_int.h).
 *
 * Each command is a struct cmd: a process started with proc_start (proc.h)
 * with its stdout and stderr pipes, read on the loop into buffers, an exit
 * watcher (a poll handle on its pidfd, readable once it exited; where
 * there is no pidfd, a timer that tries waitpid every CMD_REAP_MS), and a
 * deadline timer; the command is reaped by its pid (waitpid(pid), never
 * waitpid(-1)). Its done function runs once the process exited and both
 * pipes reached EOF, unless its job finished or its poller is closing
 * meanwhile. The command runs in a process group of its own (in this
 * process's session: see slurm_int.h); at its deadline that group is
 * killed, which ends the process and closes its pipes, so a command that
 * hangs (a controller that does not answer) fails like one that exits
 * non-zero. It is on the list of its job, or of the poller for the squeue,
 * until its four handles are closed; the last one closed frees it and lets
 * slurm.c free the job or poller that waited for it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "slurm_int.h"

#define CMD_REAP_MS 50 /* waitpid tries where there is no pidfd */

static void cmd_closed(uv_handle_t *h)
{
	struct cmd *c = h->data;
	struct slurm_job *j = c->job;
	struct slurm_poller *sp = c->poller;
	struct cmd **pp;

	if (--c->handles > 0)
		return;
	for (pp = j ? &j->cmds : &sp->cmds; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->pidfd >= 0)
		close(c->pidfd);
	buf_free(&c->obuf);
	buf_free(&c->ebuf);
	free(c);
	if (j) {
		j->ncmds--;
		slurm__job_maybe_free(j);
	} else {
		sp->ncmds--;
		slurm__poller_maybe_free(sp);
	}
}

static void cmd_close(struct cmd *c, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, cmd_closed);
}

/* Runs the done function once the process exited and both pipes ended,
 * unless its job finished or its poller is closing meanwhile. */
static void cmd_check(struct cmd *c)
{
	if (!c->exited || c->eofs < 2)
		return;
	if (c->job ? !c->job->finished : !c->poller->closing)
		c->done(c);
	cmd_close(c, (uv_handle_t *)&c->out);
	cmd_close(c, (uv_handle_t *)&c->err);
	cmd_close(c, (uv_handle_t *)&c->watch);
	cmd_close(c, (uv_handle_t *)&c->deadline);
}

int slurm__cmd_failed(const struct cmd *c)
{
	return c->spawn_error || c->term_signal || c->exit_status != 0;
}

static void cmd_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	static char scratch[16 * 1024]; /* loop thread only */

	(void)h;
	(void)suggested;
	b->base = scratch;
	b->len = sizeof(scratch);
}

static void cmd_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct cmd *c = s->data;
	struct buf *into = s == (uv_stream_t *)&c->out ? &c->obuf : &c->ebuf;

	if (n > 0) {
		if (into->len + (size_t)n > c->max || buf_append(into, b->base, (size_t)n))
			c->truncated = 1;
		return;
	}
	if (n < 0) {
		uv_read_stop(s);
		c->eofs++;
		cmd_check(c);
	}
}

/* The command's end: status is its wait status (-1: it could not be
 * waited for). */
static void cmd_exit(struct cmd *c, int status)
{
	c->exit_status = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	c->term_signal = status != -1 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	c->exited = 1;
	if (c->watch_poll)
		uv_poll_stop(&c->watch.poll);
	else
		uv_timer_stop(&c->watch.timer);
	uv_timer_stop(&c->deadline);
	if (c->timed_out && c->eofs < 2) {
		/* A process that left the group may hold the pipes: not waited for. */
		uv_read_stop((uv_stream_t *)&c->out);
		uv_read_stop((uv_stream_t *)&c->err);
		c->eofs = 2;
	}
	cmd_check(c);
}

/* Reaps the command if it has exited. */
static void cmd_wait(struct cmd *c)
{
	int status;
	pid_t w;

	if (c->exited)
		return;
	do
		w = waitpid(c->pid, &status, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == c->pid)
		cmd_exit(c, status);
	else if (w < 0)
		cmd_exit(c, -1); /* reaped elsewhere: its status is lost */
}

static void cmd_pidfd(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	cmd_wait(h->data);
}

static void cmd_reap_tick(uv_timer_t *t)
{
	cmd_wait(t->data);
}

void slurm__cmd_kill(struct cmd *c, int sig)
{
	if (!c->exited && c->pid > 0)
		kill(c->pid, sig);
}

/* The deadline: the command's process group is killed; its exit and the
 * end of its pipes follow. */
static void cmd_deadline(uv_timer_t *t)
{
	struct cmd *c = t->data;

	if (c->exited)
		return;
	c->timed_out = 1;
	buf_printf(&c->ebuf, "\n%s: error: no answer within %d s (killed)\n", c->prog,
		   SLURM_CMD_TIMEOUT_MS / 1000);
	if (kill(-c->pid, SIGKILL) < 0)
		kill(c->pid, SIGKILL);
}

int slurm__cmd_run(uv_loop_t *loop, struct slurm_job *j, struct slurm_poller *sp,
		   char *const *argv, char *const *env, size_t max, void (*done)(struct cmd *))
{
	struct proc_spec spec = { 0 };
	struct cmd *c = calloc(1, sizeof(*c));
	struct proc p;
	int rc;

	if (!c)
		return -ENOMEM;
	c->job = j;
	c->poller = j ? NULL : sp;
	c->done = done;
	c->max = max;
	c->pidfd = -1;
	buf_init(&c->obuf);
	buf_init(&c->ebuf);
	uv_pipe_init(loop, &c->out, 0);
	uv_pipe_init(loop, &c->err, 0);
	uv_timer_init(loop, &c->deadline);
	c->out.data = c->err.data = c->deadline.data = c;
	c->handles = 4;
	snprintf(c->prog, sizeof(c->prog), "%s", argv[0]);
	if (j) {
		j->ncmds++;
		c->next = j->cmds;
		j->cmds = c;
	} else {
		sp->ncmds++;
		c->next = sp->cmds;
		sp->cmds = c;
	}
	spec.argv = argv;
	spec.env = env;
	spec.out = PROC_OUT_PIPE;
	spec.err = PROC_OUT_PIPE;
	rc = proc_start(&spec, &p); /* its own group, for the deadline's kill */
	if (rc == 0) {
		c->pid = p.pid;
		c->pidfd = p.pidfd;
		/* A pipe that cannot be read on the loop is taken for at EOF:
		 * the exit still counts. */
		if (uv_pipe_open(&c->out, p.out) < 0) {
			close(p.out);
			c->eofs++;
		}
		if (uv_pipe_open(&c->err, p.err) < 0) {
			close(p.err);
			c->eofs++;
		}
	}
	if (rc == 0 && c->pidfd >= 0 && uv_poll_init(loop, &c->watch.poll, c->pidfd) == 0) {
		c->watch_poll = 1;
		c->watch.poll.data = c;
		uv_poll_start(&c->watch.poll, UV_READABLE, cmd_pidfd);
	} else {
		uv_timer_init(loop, &c->watch.timer);
		c->watch.timer.data = c;
		if (rc == 0)
			uv_timer_start(&c->watch.timer, cmd_reap_tick, CMD_REAP_MS, CMD_REAP_MS);
	}
	if (rc) {
		c->spawn_error = rc;
		c->exit_status = 127;
		buf_printf(&c->ebuf, "cannot run %s: %s", argv[0], uv_strerror(rc));
		c->exited = 1;
		c->eofs = 2;
		cmd_check(c);
		return 0;
	}
	if (uv_is_readable((uv_stream_t *)&c->out))
		uv_read_start((uv_stream_t *)&c->out, cmd_alloc, cmd_read);
	if (uv_is_readable((uv_stream_t *)&c->err))
		uv_read_start((uv_stream_t *)&c->err, cmd_alloc, cmd_read);
	uv_timer_start(&c->deadline, cmd_deadline, SLURM_CMD_TIMEOUT_MS, 0);
	return 0;
}

void slurm__last_error_line(const struct cmd *c, char *out, size_t size)
{
	const char *s = c->ebuf.data ? c->ebuf.data : "", *line = s, *p, *end;
	size_t len;

	for (p = s; *p; p++)
		if (*p == '\n' && p[1] && p[1] != '\n')
			line = p + 1;
	end = strchr(line, '\n');
	len = end ? (size_t)(end - line) : strlen(line);
	p = memmem(line, len, "error: ", 7);
	if (p) {
		len -= (size_t)(p + 7 - line);
		line = p + 7;
	}
	if (len == 0) {
		if (c->term_signal)
			snprintf(out, size, "killed by signal %d", c->term_signal);
		else
			snprintf(out, size, "exit status %lld", (long long)c->exit_status);
		return;
	}
	snprintf(out, size, "%.*s", (int)len, line);
}
