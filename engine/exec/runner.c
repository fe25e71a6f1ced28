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
 * environment. proc_start returns only once the child has exec'd (or
 * failed to), which takes a few hundred microseconds of the child's own
 * work; so it runs on a thread of libuv's pool (uv_queue_work), with a
 * copy of what it needs, and the loop goes on meanwhile (spawning). The
 * leader is registered among the leaders as the start returns (see
 * runner_tree.c). The end of the
 * leader is seen through the pidfd proc_start returns, polled on the loop:
 * readable once it has exited; then waitpid(pid, WNOHANG) reaps it. Where
 * there is no pidfd (old kernel, no file descriptor left) a SIGCHLD signal
 * handle of the run does the same waitpid on every SIGCHLD; the poll
 * timer's ticks check too, so no exit goes unseen.
 *
 * Life of a run:
 *   spawning  queued on the pool: no pid, no watcher, no timer, no read; a
 *             runner_cancel() is noted and acted on when the start returns
 *             (spawn_done), which starts what follows and calls on_started.
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
 * A program that cannot be started takes the same path: on_started with
 * pid 0, the "cannot run" line and the exit callback are delivered from
 * spawn_done, or from a 0 ms timer when the start could not even be
 * queued, never from inside runner_start().
 *
 * Invariants: a run's leader is reaped only by its run; handles are freed
 * only in their close callbacks; on_output is never called after on_exit.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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
	/* Never while the pool may still write to the start's job. */
	assert(!p->spawning);
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

/* The program could not start (p->res.spawn_error): on_started with no
 * pid, the "cannot run" line, the end. */
static void spawn_failed(struct runner_proc *p)
{
	char line[512];
	int n;

	p->res.exit_code = -1;
	p->leader_exited = 1;
	p->eof = 1;
	if (p->on_started)
		p->on_started(p->start_arg, 0);
	n = snprintf(line, sizeof(line), "packetfs: cannot run %s: %s\n", p->prog,
		     strerror(-p->res.spawn_error));
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	p->on_output(p->arg, line, (size_t)n);
	finish(p);
}

static void on_spawn_failed(uv_timer_t *t)
{
	spawn_failed(t->data);
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

/* The leader's start on a thread of libuv's pool: what proc_start needs,
 * copied from the spec (whose strings the caller may free once
 * runner_start returns), and what the start gave. Made on the loop, used
 * by the pool thread alone until spawn_done (on the loop again) frees it. */
struct spawn_job {
	uv_work_t req;
	struct runner_proc *p;     /* the run: for spawn_done only */
	struct proc_spec ps;       /* pointing into the copies below */
	char **argv, **env, *cwd, *in_data;
	struct proc_cred cred;
	gid_t *groups;
	int out_fd;                /* the pipe's write end: closed after the start */
	runner_spawned_cb on_spawned;
	void *start_arg;
	int rc;                    /* 0, or the negative errno of the start */
	struct proc child;
	pid_t tid;                 /* the pool thread that started it */
	uint64_t start_ns;
};

static void spawn_job_free(struct spawn_job *j)
{
	strv_free(j->argv);
	strv_free(j->env);
	free(j->cwd);
	free(j->in_data);
	free(j->groups);
	free(j);
}

/* The start of spec with environment env (borrowed) and out_fd as stdout
 * and stderr: a new spawn_job, or NULL on ENOMEM. */
static struct spawn_job *spawn_job_new(struct runner_proc *p, const struct runner_spec *spec,
				       char **env, int out_fd)
{
	struct spawn_job *j = calloc(1, sizeof(*j));
	const struct runner_user *u = spec->user;

	if (!j)
		return NULL;
	j->p = p;
	j->out_fd = out_fd;
	j->on_spawned = spec->on_spawned;
	j->start_arg = spec->start_arg;
	j->argv = strv_dup(spec->argv);
	j->env = strv_dup(env);
	j->cwd = spec->cwd ? strdup(spec->cwd) : NULL;
	j->in_data = spec->stdin_data ? malloc(spec->stdin_len + 1) : NULL;
	j->groups = u ? malloc(((size_t)u->ngroups + 1) * sizeof(*j->groups)) : NULL;
	if (!j->argv || !j->env || (spec->cwd && !j->cwd) || (spec->stdin_data && !j->in_data) ||
	    (u && !j->groups)) {
		spawn_job_free(j);
		return NULL;
	}
	j->ps.argv = j->argv;
	j->ps.env = j->env;
	j->ps.cwd = j->cwd;
	if (spec->stdin_data) {
		memcpy(j->in_data, spec->stdin_data, spec->stdin_len);
		j->ps.in = PROC_IN_BYTES;
		j->ps.in_data = j->in_data;
		j->ps.in_len = spec->stdin_len;
	}
	j->ps.out = PROC_OUT_FD;
	j->ps.out_fd = out_fd;
	j->ps.err = PROC_OUT_STDOUT;
	j->ps.session = 1;
	if (u) {
		memcpy(j->groups, u->groups, (size_t)u->ngroups * sizeof(*j->groups));
		j->cred.uid = u->uid;
		j->cred.gid = u->gid;
		j->cred.groups = j->groups;
		j->cred.ngroups = u->ngroups;
		j->ps.cred = &j->cred;
	}
	return j;
}

/* On a pool thread: starts the leader (proc_start, which returns once the
 * child has exec'd), registered among the leaders (runner__spawn_begin and
 * _end); closes the pipe's write end; tells on_spawned. */
static void spawn_work(uv_work_t *req)
{
	struct spawn_job *j = req->data;
	unsigned long long start = 0;
	int locked;

	j->tid = (pid_t)syscall(SYS_gettid);
	j->start_ns = uv_hrtime();
	j->rc = runner__spawn_begin(&locked);
	if (j->rc == 0) {
		j->rc = proc_start(&j->ps, &j->child);
		runner__spawn_end(j->rc == 0 ? j->child.pid : 0, locked);
	}
	close(j->out_fd);
	j->out_fd = -1;
	if (j->rc == 0 && j->on_spawned) {
		(void)runner__start_time(j->child.pid, &start);
		j->on_spawned(j->start_arg, j->child.pid, start);
	}
}

/* On the loop, after spawn_work: the run goes on (its exit watcher, the
 * pipe's reads, the timers; a cancel that came meanwhile), or ends when
 * the program could not start. */
static void spawn_done(uv_work_t *req, int status)
{
	struct spawn_job *j = req->data;
	struct runner_proc *p = j->p;
	int r = status < 0 ? status : j->rc;

	p->spawning = 0;
	p->start_ns = j->start_ns;
	p->spawner = j->tid;
	if (r == 0) {
		p->pid = j->child.pid;
		p->pidfd = j->child.pidfd;
	}
	spawn_job_free(j);
	if (r < 0) {
		p->res.spawn_error = r;
		spawn_failed(p);
		return;
	}
	/* Without a watcher the poll timer's checks still see the exit. */
	watch_leader(p);
	if (uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read) < 0)
		p->eof = 1;
	if (p->timeout_s)
		uv_timer_start(&p->timeout_timer, on_timeout, (uint64_t)p->timeout_s * 1000, 0);
	/* Without a pidfd the first check comes at once (see watch_leader). */
	uv_timer_start(&p->poll_timer, on_poll, p->pidfd >= 0 ? TRACK_MS : 0, TRACK_MS);
	if (p->res.cancelled)
		terminate(p);
	if (p->on_started)
		p->on_started(p->start_arg, p->pid);
}

/* The pipe, and the start queued on the pool; 0 or the negative errno that
 * stopped it. */
static int spawn(struct runner_proc *p, const struct runner_spec *spec)
{
	struct spawn_job *j;
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
	j = spawn_job_new(p, spec, env, fds[1]);
	free(env);
	if (!j) {
		r = -ENOMEM;
		goto fail_fds;
	}
	r = uv_pipe_init(p->loop, &p->out, 0);
	if (r < 0)
		goto fail_job;
	p->out.data = p;
	p->out_init = 1;
	r = uv_pipe_open(&p->out, fds[0]);
	if (r < 0)
		goto fail_job;
	/* From here fds[0] is p->out's. */
	j->req.data = j;
	r = uv_queue_work(p->loop, &j->req, spawn_work, spawn_done);
	if (r < 0) {
		spawn_job_free(j);
		close(fds[1]);
		return r;
	}
	p->spawning = 1;
	return 0;

fail_job:
	spawn_job_free(j);
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
	p->pidfd = -1;
	p->on_output = on_output;
	p->on_exit = on_exit;
	p->arg = arg;
	p->on_started = spec->on_started;
	p->start_arg = spec->start_arg;
	p->timeout_s = spec->timeout_s;
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
		uv_timer_start(&p->poll_timer, on_spawn_failed, 0, 0);
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
	/* While it starts there is no pid yet: spawn_done acts on the cancel. */
	assert(!p->spawning || p->pid == 0);
	if (p->pid > 0)
		terminate(p);
}
