/*
 * runner.c - child processes on the engine's libuv loop (see runner.h).
 *
 * A run owns five libuv handles, all inside struct runner_proc: the process,
 * the read end of the output pipe, and three timers (timeout, grace, poll).
 * The child is spawned with UV_PROCESS_DETACHED, so it starts a new session
 * and its pid is its process group id; every signal goes to the whole group
 * (kill(-pgid, sig)), never to the leader alone.
 *
 * Life of a run:
 *   running   the leader is alive; output chunks go to on_output. The timeout
 *             or runner_cancel() sends SIGTERM to the group and arms the grace
 *             timer, whose expiry sends SIGKILL.
 *   draining  the leader has exited (exit_cb). If members of its group are
 *             left, they get SIGTERM (once per run) and the grace timer runs;
 *             the poll timer watches for the group to vanish. The run is
 *             finished when the pipe reached EOF and the group is gone (or was
 *             SIGKILLed), or when the grace timer expires: a process that left
 *             the group while holding the pipe cannot keep the run open.
 *   finished  on_exit fired (exactly once); no callback follows. Every handle
 *             is closed and the struct is freed when the last close callback
 *             has run.
 *
 * A program that cannot be started takes the same path: the "cannot run"
 * line and the exit callback are delivered from a 0 ms timer, never from
 * inside runner_start().
 *
 * Invariants: the group is never signalled with a pid <= 1 or our own group;
 * handles are freed only in their close callbacks; on_output is never called
 * after on_exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

#define DEFAULT_GRACE_S 5
#define POLL_MS 50
#define READ_CHUNK 65536

struct runner_proc {
	uv_loop_t *loop;
	uv_process_t proc;
	uv_pipe_t out;             /* read end of the child's stdout/stderr */
	uv_timer_t timeout_timer;  /* spec->timeout_s after the spawn */
	uv_timer_t grace_timer;    /* SIGTERM -> SIGKILL, and the drain deadline */
	uv_timer_t poll_timer;     /* watches a leftover group; spawn failures */
	runner_output_cb on_output;
	runner_exit_cb on_exit;
	void *arg;
	pid_t pid;                 /* == pgid; 0 when the spawn failed */
	uint64_t grace_ms;
	uint64_t start_ns;
	char *prog;                /* for the "cannot run" line */
	int nopen;                 /* handles not yet closed */
	unsigned proc_init : 1;
	unsigned out_init : 1;
	unsigned leader_exited : 1;
	unsigned eof : 1;
	unsigned term_sent : 1;
	unsigned kill_sent : 1;
	unsigned finished : 1;
	struct runner_result res;
	char buf[READ_CHUNK];
};

static int signal_group(struct runner_proc *p, int sig)
{
	if (p->pid <= 1 || p->pid == getpgrp())
		return -ESRCH;
	return kill(-p->pid, sig) == 0 ? 0 : -errno;
}

/* Whether any process of the group still exists (zombies included). */
static int group_alive(struct runner_proc *p)
{
	return signal_group(p, 0) != -ESRCH;
}

static void on_close(uv_handle_t *h)
{
	struct runner_proc *p = h->data;

	if (--p->nopen == 0) {
		free(p->prog);
		free(p);
	}
}

static void close_handle(struct runner_proc *p, uv_handle_t *h)
{
	h->data = p;
	p->nopen++;
	uv_close(h, on_close);
}

static void finish(struct runner_proc *p)
{
	if (p->finished)
		return;
	p->finished = 1;
	uv_timer_stop(&p->timeout_timer);
	uv_timer_stop(&p->grace_timer);
	uv_timer_stop(&p->poll_timer);
	if (p->out_init && !p->eof)
		uv_read_stop((uv_stream_t *)&p->out);

	p->on_exit(p->arg, &p->res);

	if (p->proc_init)
		close_handle(p, (uv_handle_t *)&p->proc);
	if (p->out_init)
		close_handle(p, (uv_handle_t *)&p->out);
	close_handle(p, (uv_handle_t *)&p->timeout_timer);
	close_handle(p, (uv_handle_t *)&p->grace_timer);
	close_handle(p, (uv_handle_t *)&p->poll_timer);
}

/* Finishes the run once nothing more can come: the leader has exited, the
 * pipe is at EOF, and the group is gone or has been sent SIGKILL. */
static void maybe_finish(struct runner_proc *p)
{
	if (p->leader_exited && p->eof && (p->kill_sent || !group_alive(p)))
		finish(p);
}

static void on_grace(uv_timer_t *t)
{
	struct runner_proc *p = t->data;

	if (group_alive(p) && signal_group(p, SIGKILL) == 0)
		p->kill_sent = 1;
	if (p->leader_exited)
		finish(p);
}

static void on_poll(uv_timer_t *t)
{
	maybe_finish(t->data);
}

/* SIGTERM to the group (once per run) and the grace timer towards SIGKILL. */
static void terminate(struct runner_proc *p)
{
	if (p->term_sent)
		return;
	p->term_sent = 1;
	signal_group(p, SIGTERM);
	uv_timer_start(&p->grace_timer, on_grace, p->grace_ms, 0);
}

static void on_timeout(uv_timer_t *t)
{
	struct runner_proc *p = t->data;

	p->res.timed_out = 1;
	terminate(p);
}

static void on_proc_exit(uv_process_t *proc, int64_t exit_status, int term_signal)
{
	struct runner_proc *p = proc->data;

	p->leader_exited = 1;
	p->res.exit_code = (int)exit_status;
	p->res.term_signal = term_signal;
	p->res.duration_s = (double)(uv_hrtime() - p->start_ns) / 1e9;
	uv_timer_stop(&p->timeout_timer);

	if (p->eof && !group_alive(p)) {
		finish(p);
		return;
	}
	if (group_alive(p)) {
		terminate(p);
		uv_timer_start(&p->poll_timer, on_poll, POLL_MS, POLL_MS);
	}
	/* The drain deadline: also bounds a wait for EOF from a pipe held
	 * by a process outside the group, and the wait after a SIGKILL. */
	if (!uv_is_active((uv_handle_t *)&p->grace_timer))
		uv_timer_start(&p->grace_timer, on_grace, p->grace_ms, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	struct runner_proc *p = h->data;

	*b = uv_buf_init(p->buf, sizeof(p->buf));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
	struct runner_proc *p = s->data;

	if (nread > 0) {
		p->on_output(p->arg, b->base, (size_t)nread);
		return;
	}
	if (nread == 0)
		return;
	/* UV_EOF, or a read error: either way no more output will come. */
	p->eof = 1;
	uv_read_stop(s);
	maybe_finish(p);
}

static void on_spawn_failed(uv_timer_t *t)
{
	struct runner_proc *p = t->data;
	char line[512];
	int n;

	n = snprintf(line, sizeof(line), "packetfs: cannot run %s: %s\n", p->prog,
		     strerror(-p->res.spawn_error));
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	p->on_output(p->arg, line, (size_t)n);
	finish(p);
}

/* The pipe and the spawn; 0 or the negative errno that stopped the start. */
static int spawn(struct runner_proc *p, const struct runner_spec *spec)
{
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];
	uv_file fds[2];
	int r;

	if (!spec->argv || !spec->argv[0])
		return -EINVAL;
	r = uv_pipe(fds, 0, 0);
	if (r < 0)
		return r;
	r = uv_pipe_init(p->loop, &p->out, 0);
	if (r < 0)
		goto fail_fds;
	p->out.data = p;
	p->out_init = 1;
	r = uv_pipe_open(&p->out, fds[0]);
	if (r < 0)
		goto fail_fds;

	memset(&opt, 0, sizeof(opt));
	stdio[0].flags = UV_IGNORE; /* libuv opens /dev/null for fds 0-2 */
	stdio[1].flags = UV_INHERIT_FD;
	stdio[1].data.fd = fds[1];
	stdio[2] = stdio[1];
	opt.exit_cb = on_proc_exit;
	opt.file = spec->argv[0];
	opt.args = (char **)spec->argv;
	opt.env = (char **)spec->env;
	opt.cwd = spec->cwd;
	opt.flags = UV_PROCESS_DETACHED;
	opt.stdio_count = 3;
	opt.stdio = stdio;

	p->start_ns = uv_hrtime();
	r = uv_spawn(p->loop, &p->proc, &opt);
	p->proc.data = p;
	p->proc_init = 1; /* uv_spawn initialises the handle even on failure */
	close(fds[1]);
	if (r < 0)
		return r;
	p->pid = p->proc.pid;

	if (uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read) < 0)
		p->eof = 1;
	return 0;

fail_fds:
	close(fds[0]);
	close(fds[1]);
	return r;
}

int runner_start(uv_loop_t *loop, const struct runner_spec *spec, runner_output_cb on_output,
		 runner_exit_cb on_exit, void *arg, struct runner_proc **out)
{
	struct runner_proc *p;
	const char *prog;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	prog = spec->argv && spec->argv[0] ? spec->argv[0] : "(no program)";
	p->prog = strdup(prog);
	if (!p->prog) {
		free(p);
		return -ENOMEM;
	}
	p->loop = loop;
	p->on_output = on_output;
	p->on_exit = on_exit;
	p->arg = arg;
	p->grace_ms = (uint64_t)(spec->grace_s ? spec->grace_s : DEFAULT_GRACE_S) * 1000;
	uv_timer_init(loop, &p->timeout_timer);
	uv_timer_init(loop, &p->grace_timer);
	uv_timer_init(loop, &p->poll_timer);
	p->timeout_timer.data = p;
	p->grace_timer.data = p;
	p->poll_timer.data = p;

	r = spawn(p, spec);
	if (r < 0) {
		p->res.spawn_error = r;
		p->res.exit_code = -1;
		p->leader_exited = 1;
		p->eof = 1;
		uv_timer_start(&p->poll_timer, on_spawn_failed, 0, 0);
	} else if (spec->timeout_s) {
		uv_timer_start(&p->timeout_timer, on_timeout, (uint64_t)spec->timeout_s * 1000, 0);
	}
	*out = p;
	return 0;
}

pid_t runner_pid(const struct runner_proc *p)
{
	return p->pid;
}

void runner_cancel(struct runner_proc *p)
{
	if (p->finished || p->res.cancelled)
		return;
	p->res.cancelled = 1;
	if (p->pid > 0)
		terminate(p);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int runner_kill_group_sync(pid_t pgid, unsigned grace_s)
{
	uint64_t waited_ms = 0;

	if (pgid <= 1 || pgid == getpgrp())
		return -EINVAL;
	if (kill(-pgid, SIGTERM) < 0)
		return errno == ESRCH ? 0 : -errno;
	while (waited_ms < (uint64_t)grace_s * 1000) {
		sleep_ms(POLL_MS);
		waited_ms += POLL_MS;
		if (kill(-pgid, 0) < 0 && errno == ESRCH)
			return 0;
	}
	if (kill(-pgid, SIGKILL) < 0 && errno != ESRCH)
		return -errno;
	return 0;
}
