/*
 * runner.c - child processes on the engine's libuv loop (see runner.h):
 * spawning a run and its life - the output pipe, the leader's end, the
 * timeout, cancel and the exit callback. Which processes are the run's,
 * the signals to them and the reaping of orphans are in runner_tree.c
 * (runner_int.h is what the two share).
 *
 * A run owns five libuv handles, all inside struct runner_proc: the
 * leader's exit watcher (a poll handle on its pidfd, or a SIGCHLD signal
 * handle where no pidfd could be had), the read end of the output pipe,
 * and three timers (timeout, grace, poll).
 *
 * DESIGN: starting a process. The leader starts through proc_start
 * (proc.h, the one start of a program in the tree: posix_spawn, or vfork
 * for a run as another user): its own session (pgid == sid == pid), an
 * empty signal mask and every signal at its default, stdin from /dev/null
 * or a memfd holding the bytes the spec gives, stdout and stderr the
 * pipe's write end, the run's working directory and an explicit
 * environment (with the marker); argv[0] is looked up on the PATH of that
 * environment. The start happens under the leaders' lock, so that a sweep
 * of another loop never sees an unregistered leader. The end of the
 * leader is seen through the pidfd proc_start returns, polled on the loop:
 * readable once it has exited; then waitpid(pid, WNOHANG) reaps it. Where
 * there is no pidfd (old kernel, no file descriptor left) a SIGCHLD signal
 * handle of the run does the same waitpid on every SIGCHLD; the poll
 * timer's ticks check too, so no exit goes unseen.
 *
 * Life of a run:
 *   running   the leader is alive; output chunks go to on_output; the poll
 *             timer sweeps every TRACK_MS. The timeout or runner_cancel()
 *             sends SIGTERM to the run's processes and arms the grace timer,
 *             whose expiry sends SIGKILL.
 *   draining  the leader has exited (leader_exit). If processes of the run
 *             are left, they get SIGTERM (once per run) and the grace timer
 *             runs; the poll timer sweeps every POLL_MS. The run is finished
 *             when the pipe reached EOF and none of its processes is alive.
 *             When the grace timer expires, whatever is alive gets SIGKILL
 *             and the timer is re-armed for KILL_WAIT_MS; when that expires
 *             too, the run is finished regardless (a process stuck in the
 *             kernel, or an unknown holder of the pipe, cannot keep it
 *             open). With nothing alive at the grace expiry the run is
 *             finished at once, EOF or not.
 *   finished  on_exit fired (exactly once); no callback follows. Every handle
 *             is closed and the struct is freed when the last close callback
 *             has run.
 *
 * A program that cannot be started takes the same path: the "cannot run"
 * line and the exit callback are delivered from a 0 ms timer, never from
 * inside runner_start().
 *
 * Invariants: a run's leader is reaped only by its run; handles are freed
 * only in their close callbacks; on_output is never called after on_exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "runner_int.h"
#include "util.h"

#define DEFAULT_GRACE_S 5
#define TRACK_MS 1000       /* sweeps while the leader runs */
#define KILL_WAIT_MS 2000   /* after SIGKILL, for the processes to vanish */

static unsigned marker_seq;

static void on_close(uv_handle_t *h)
{
	struct runner_proc *p = h->data;

	if (--p->nopen == 0) {
		if (p->pidfd >= 0)
			close(p->pidfd);
		free(p->known);
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

	if (p->watch_init)
		close_handle(p, (uv_handle_t *)&p->exit_watch);
	if (p->out_init)
		close_handle(p, (uv_handle_t *)&p->out);
	close_handle(p, (uv_handle_t *)&p->timeout_timer);
	close_handle(p, (uv_handle_t *)&p->grace_timer);
	close_handle(p, (uv_handle_t *)&p->poll_timer);
}

/* Finishes the run once nothing more can come: the leader has exited, the
 * pipe is at EOF, and none of the run's processes is alive. */
static void maybe_finish(struct runner_proc *p)
{
	if (p->leader_exited && p->eof && runner__sweep(p) == 0)
		finish(p);
}

static void check_leader(struct runner_proc *p);

static void on_poll(uv_timer_t *t)
{
	struct runner_proc *p = t->data;
	int alive;

	/* A safety net under the exit watcher; it may finish the run. */
	check_leader(p);
	if (p->finished)
		return;
	alive = runner__sweep(p);
	if (p->leader_exited && p->eof && alive == 0)
		finish(p);
}

/* The grace period ran out: SIGKILL to whatever of the run is alive, and
 * KILL_WAIT_MS more for it to vanish; when that ran out too, the end. */
static void on_grace(uv_timer_t *t)
{
	struct runner_proc *p = t->data;

	if (p->kill_sent) {
		p->deadline = 1;
		if (p->leader_exited)
			finish(p);
		return;
	}
	if (runner__sweep(p) == 0 && p->leader_exited) {
		/* Nothing of the run is alive; only the pipe lacked its EOF
		 * (a holder no sweep can see). */
		finish(p);
		return;
	}
	p->kill_sent = 1;
	if (runner__signal_group(p, SIGKILL) == 0)
		runner__note_signal(p, SIGKILL);
	runner__sweep(p);
	uv_timer_start(&p->grace_timer, on_grace, KILL_WAIT_MS, 0);
	uv_timer_start(&p->poll_timer, on_poll, POLL_MS, POLL_MS);
}

/* SIGTERM to the run's processes (once per run), the grace timer towards
 * SIGKILL, and sweeps every POLL_MS. */
static void terminate(struct runner_proc *p)
{
	if (p->term_sent)
		return;
	p->term_sent = 1;
	if (runner__signal_group(p, SIGTERM) == 0) {
		runner__note_signal(p, SIGTERM);
		p->group_termed = 1;
	}
	runner__sweep(p);
	uv_timer_start(&p->grace_timer, on_grace, p->grace_ms, 0);
	uv_timer_start(&p->poll_timer, on_poll, POLL_MS, POLL_MS);
}

static void on_timeout(uv_timer_t *t)
{
	struct runner_proc *p = t->data;

	p->res.timed_out = 1;
	terminate(p);
}

/* After the leader's end: finishes the run when nothing of it is left,
 * else ends what is left (leftovers) and waits for the pipe's EOF. */
static void settle(struct runner_proc *p)
{
	int alive = runner__sweep(p);

	if (p->eof && alive == 0) {
		finish(p);
		return;
	}
	if (alive > 0 && !p->term_sent)
		p->res.leftovers = alive;
	if (alive > 0)
		terminate(p);
	uv_timer_start(&p->poll_timer, on_poll, POLL_MS, POLL_MS);
	/* The drain deadline: also bounds a wait for EOF from a pipe held
	 * by a process no sweep can see. */
	if (!uv_is_active((uv_handle_t *)&p->grace_timer))
		uv_timer_start(&p->grace_timer, on_grace, p->grace_ms, 0);
}

static void on_settle(uv_timer_t *t)
{
	settle(t->data);
}

/* The leader has exited with wait status status (reaped here: from now on
 * its pid may be reused), or was reaped by someone else (status -1: its
 * exit status is lost and exit_code is -1). */
static void leader_exit(struct runner_proc *p, int status)
{
	p->leader_exited = 1;
	runner__leaders_remove(p->pid);
	if (p->watch_init) {
		if (p->pidfd >= 0)
			uv_poll_stop(&p->exit_watch.poll);
		else
			uv_signal_stop(&p->exit_watch.sig);
	}
	if (status == -1)
		p->res.exit_code = -1;
	else if (WIFSIGNALED(status))
		p->res.term_signal = WTERMSIG(status);
	else
		p->res.exit_code = WEXITSTATUS(status);
	p->res.duration_s = (double)(uv_hrtime() - p->start_ns) / 1e9;
	uv_timer_stop(&p->timeout_timer);
	if (p->deadline) {
		finish(p);
		return;
	}
	if (p->eof) {
		settle(p);
		return;
	}
	/* The pipe's EOF is most often among the events of this same turn
	 * of the loop, after this one: then on_read's maybe_finish ends the
	 * run with one look at the processes, not two. Otherwise settle()
	 * runs on the next turn. */
	uv_timer_start(&p->poll_timer, on_settle, 0, 0);
}

/* Reaps the leader if it has exited, and goes on with its end. A stopped
 * or continued leader is not an end (no WUNTRACED: waitpid reports only
 * exits). */
static void check_leader(struct runner_proc *p)
{
	int status;
	pid_t w;

	if (p->leader_exited || p->pid <= 0)
		return;
	do
		w = waitpid(p->pid, &status, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == p->pid)
		leader_exit(p, status);
	else if (w < 0 && errno == ECHILD)
		leader_exit(p, -1); /* a waitpid(-1) elsewhere took it */
}

static void on_pidfd(uv_poll_t *h, int status, int events)
{
	/* An error of the poll itself: the poll timer's checks remain. */
	if (status < 0)
		uv_poll_stop(h);
	check_leader(h->data);
}

static void on_sigchld(uv_signal_t *h, int signum)
{
	check_leader(h->data);
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

/* Whether entry ("NAME=value") is variable name (len bytes). */
static int is_var(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* env (NULL: ours) less any marker, plus p's marker; with a user u, less
 * HOME, USER and LOGNAME, plus u's: a new array of borrowed strings (free
 * the array only), or NULL on ENOMEM. */
static char **marked_env(struct runner_proc *p, char *const *env, const struct runner_user *u)
{
	extern char **environ;
	char *const *src = env ? env : environ;
	size_t n = 0, k = 0, i, vlen = strlen(RUNNER_MARKER_VAR);
	char **out;

	snprintf(p->marker, sizeof(p->marker), "%s=%d.%u", RUNNER_MARKER_VAR, (int)getpid(),
		 __atomic_add_fetch(&marker_seq, 1, __ATOMIC_RELAXED));
	while (src && src[n])
		n++;
	out = calloc(n + 5, sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (is_var(src[i], RUNNER_MARKER_VAR, vlen))
			continue;
		if (u && (is_var(src[i], "HOME", 4) || is_var(src[i], "USER", 4) ||
			  is_var(src[i], "LOGNAME", 7)))
			continue;
		out[k++] = src[i];
	}
	if (u) {
		out[k++] = u->env_home;
		out[k++] = u->env_user;
		out[k++] = u->env_logname;
	}
	out[k] = p->marker;
	return out;
}

/* fd moved above the standard streams (close-on-exec): a file action
 * dup2(fd, 1) must not find the pipe's write end at 0, or stdin's source
 * at 1. fd itself, a new fd (fd closed), or -1 with errno (fd closed). */
static int above_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/* The leader's exit watcher: a poll on its pidfd, else SIGCHLD (where an
 * exit before the watch started went unsignalled: runner_start has the
 * poll timer check at once). 0 or a negative errno (then the poll timer's
 * checks remain). */
static int watch_leader(struct runner_proc *p)
{
	int r;

	if (p->pidfd >= 0) {
		r = uv_poll_init(p->loop, &p->exit_watch.poll, p->pidfd);
		if (r == 0) {
			p->exit_watch.poll.data = p;
			p->watch_init = 1;
			r = uv_poll_start(&p->exit_watch.poll, UV_READABLE, on_pidfd);
		}
		if (r == 0 || p->watch_init)
			return r;
		close(p->pidfd);
		p->pidfd = -1;
	}
	r = uv_signal_init(p->loop, &p->exit_watch.sig);
	if (r < 0)
		return r;
	p->exit_watch.sig.data = p;
	p->watch_init = 1;
	return uv_signal_start(&p->exit_watch.sig, on_sigchld, SIGCHLD);
}

/* Starts the leader (proc_start: its own session, stdin from /dev/null or
 * the spec's bytes, stdout and stderr to out_fd, as spec->user when there
 * is one), registered among the leaders (runner__leaders_add); p->pidfd is
 * its pidfd or -1. 0 or a negative errno. */
static int spawn_leader(struct runner_proc *p, const struct runner_spec *spec, char **env,
			int out_fd)
{
	struct proc_spec ps = { 0 };
	struct proc_cred cred;
	struct proc child;
	int r;

	ps.argv = spec->argv;
	ps.env = env;
	ps.cwd = spec->cwd;
	ps.in = spec->stdin_data ? PROC_IN_BYTES : PROC_IN_NULL;
	ps.in_data = spec->stdin_data;
	ps.in_len = spec->stdin_len;
	ps.out = PROC_OUT_FD;
	ps.out_fd = out_fd;
	ps.err = PROC_OUT_STDOUT;
	ps.session = 1;
	if (spec->user) {
		cred.uid = spec->user->uid;
		cred.gid = spec->user->gid;
		cred.groups = spec->user->groups;
		cred.ngroups = spec->user->ngroups;
		ps.cred = &cred;
	}
	runner__leaders_lock();
	/* Registered before any sweep of another loop can see it dead. */
	r = runner__leaders_reserve();
	if (!r)
		r = proc_start(&ps, &child);
	if (!r) {
		runner__leaders_add(child.pid);
		p->pid = child.pid;
		p->pidfd = child.pidfd;
	}
	runner__leaders_unlock();
	return r;
}

/* The pipe and the spawn; 0 or the negative errno that stopped the start. */
static int spawn(struct runner_proc *p, const struct runner_spec *spec)
{
	uv_file fds[2];
	char **env;
	int r;

	if (!spec->argv || !spec->argv[0])
		return -EINVAL;
	env = marked_env(p, spec->env, spec->user);
	if (!env)
		return -ENOMEM;
	r = uv_pipe(fds, 0, 0);
	if (r < 0) {
		free(env);
		return r;
	}
	fds[1] = above_stdio(fds[1]);
	if (fds[1] < 0) {
		r = -errno;
		close(fds[0]);
		free(env);
		return r;
	}
	r = uv_pipe_init(p->loop, &p->out, 0);
	if (r < 0)
		goto fail_fds;
	p->out.data = p;
	p->out_init = 1;
	r = uv_pipe_open(&p->out, fds[0]);
	if (r < 0)
		goto fail_fds;

	p->start_ns = uv_hrtime();
	r = spawn_leader(p, spec, env, fds[1]);
	free(env);
	/* Without a watcher the poll timer's checks still see the exit. */
	if (r == 0)
		watch_leader(p);
	close(fds[1]);
	if (r < 0)
		return r;
	if (uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read) < 0)
		p->eof = 1;
	return 0;

fail_fds:
	close(fds[0]);
	close(fds[1]);
	free(env);
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
	p->pidfd = -1;
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
	} else {
		if (spec->timeout_s)
			uv_timer_start(&p->timeout_timer, on_timeout,
				       (uint64_t)spec->timeout_s * 1000, 0);
		/* Without a pidfd the first check comes at once (see
		 * watch_leader). */
		uv_timer_start(&p->poll_timer, on_poll, p->pidfd >= 0 ? TRACK_MS : 0, TRACK_MS);
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
