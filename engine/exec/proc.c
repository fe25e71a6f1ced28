/*
 * proc.c - the one start of a program (proc.h).
 *
 * DESIGN: the daemon is big (SQLite caches, libgit2, FUSE buffers, many
 * threads): fork() would copy its page tables and make every page
 * copy-on-write, then exec throws it all away. So a child starts with
 * posix_spawn (glibc: clone(CLONE_VM | CLONE_VFORK), the calling thread
 * waits only for the child's exec): POSIX_SPAWN_SETSID or SETPGROUP, an
 * empty signal mask and every signal at its default, file actions for the
 * three streams and the working directory, and an explicit environment.
 * Exec errors come back from posix_spawn itself.
 *
 * posix_spawn cannot change the credentials of the child, so a child with
 * a struct proc_cred starts with vfork() instead (the child borrows this
 * process's memory; the calling thread waits only for its exec, as with
 * posix_spawn). Everything that child needs is computed before (the group
 * list comes with the cred, read from NSS by the caller; the path, argv
 * and environment). The child does only system calls: every signal to its
 * default, setsid or setpgid, the three streams, then setgroups, setresgid,
 * setresuid in that order, each checked, then chdir (so that the user must
 * be able to enter the directory), an empty signal mask, execve. The
 * credentials change through syscall(2), never glibc's setgroups/setgid/
 * setuid: those signal every thread of the process to change all of them
 * together, and in a vfork child the "process" glibc knows is the daemon,
 * whose threads must keep their identity. An error of any step is left in
 * a variable the parent reads once the child has exited or exec'd; the
 * parent then reaps it. The calling thread blocks every signal around
 * vfork, so that no handler of the daemon runs in the child before it has
 * set them to their defaults.
 *
 * The program is looked up as execvp does (search), on the PATH of the
 * child's environment; a file the kernel cannot execute (ENOEXEC) runs
 * with /bin/sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

extern char **environ;

/* /dev/null open for reading and writing (close-on-exec, above stdio):
 * every child's /dev/null; opened at the first need, then kept, so that a
 * start needs no descriptor beyond its pipes. */
static int devnull = -1;

/* fd moved above the standard streams (close-on-exec): a dup2(fd, 1) of
 * the child must not find a pipe's write end at 0, or stdin's source at 1.
 * fd itself, a new fd (fd closed), or -1 with errno (fd closed). */
static int above_stdio(int fd)
{
	int nfd, e;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	e = errno;
	close(fd);
	errno = e;
	return nfd;
}

/* The shared /dev/null descriptor, or -1 with errno. */
static int null_fd(void)
{
	int fd = __atomic_load_n(&devnull, __ATOMIC_ACQUIRE), none = -1;

	if (fd >= 0)
		return fd;
	fd = above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
	if (fd < 0)
		return -1;
	if (!__atomic_compare_exchange_n(&devnull, &none, fd, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		close(fd); /* another thread's is kept */
		return none;
	}
	return fd;
}

/* The value of variable name in env (NULL-terminated), or NULL. */
static const char *env_get(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

/* A file holding data[len] (an anonymous memfd, read from its start),
 * close-on-exec and above stdio. The fd, or -1 with errno. */
static int bytes_file(const char *data, size_t len)
{
	int fd = above_stdio(memfd_create("packetfs-stdin", MFD_CLOEXEC)), rc;

	if (fd < 0)
		return -1;
	rc = util_write_all(fd, data, len);
	if (rc == 0 && lseek(fd, 0, SEEK_SET) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		errno = -rc;
		return -1;
	}
	return fd;
}

/* How the child is started: posix_spawn with fa and at, or, with a cred,
 * vfork and the steps of the top. fd[0..2]: what becomes 0, 1 and 2 (-1:
 * left as it is; for 2, the value 1 means "what 1 became"). */
struct how {
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *at;
	const struct proc_cred *cred;
	int fd[3];
	int session;
	const char *cwd;
};

/* The child of a start with credentials: the steps of the top, then
 * execve; on a failure the errno in *err and _exit(127). Only system
 * calls. */
static void __attribute__((noreturn))
child(const char *path, char *const *argv, char *const *env, const struct how *how,
      volatile int *err)
{
	/* struct sigaction as the kernel takes it, all zero: SIG_DFL, no
	 * flags, an empty mask (larger than any architecture's). */
	unsigned long dfl[8] = {0};
	unsigned long none[2] = {0};
	const struct proc_cred *u = how->cred;
	int sig;

	for (sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, dfl, NULL, _NSIG / 8);
	if (how->session ? setsid() < 0 : setpgid(0, 0) < 0)
		goto fail;
	if (how->fd[0] >= 0 && dup2(how->fd[0], 0) < 0)
		goto fail;
	if (how->fd[1] >= 0 && dup2(how->fd[1], 1) < 0)
		goto fail;
	if (how->fd[2] >= 0 && dup2(how->fd[2], 2) < 0)
		goto fail;
	if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0)
		goto fail;
	if (syscall(SYS_setresgid, u->gid, u->gid, u->gid) < 0)
		goto fail;
	if (syscall(SYS_setresuid, u->uid, u->uid, u->uid) < 0)
		goto fail;
	if (how->cwd && chdir(how->cwd) < 0)
		goto fail;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, none, NULL, _NSIG / 8);
	execve(path, argv, env);
fail:
	*err = errno ? errno : EIO;
	_exit(127);
}

/* One start of path as another user; 0 and *pid, or a positive errno
 * (the child then reaped). */
static int spawn_as(pid_t *pid, const char *path, char *const *argv, char *const *env,
		    const struct how *how)
{
	volatile int err = 0;
	sigset_t all, old;
	pid_t c;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	c = vfork();
	if (c == 0)
		child(path, argv, env, how, &err);
	if (c < 0)
		err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (c > 0 && err) {
		while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (err)
		return err;
	*pid = c;
	return 0;
}

/* One start of path, as how says. 0 or a positive errno. */
static int spawn_one(pid_t *pid, const char *path, char *const *argv, char *const *env,
		     const struct how *how)
{
	if (how->cred)
		return spawn_as(pid, path, argv, env, how);
	return posix_spawn(pid, path, how->fa, how->at, argv, env);
}

/* A start of the file path, with argv; a file the kernel does not take
 * for an executable (ENOEXEC: a script without "#!") runs with /bin/sh, as
 * execvp does it. 0 or a positive errno. */
static int spawn_file(pid_t *pid, const char *path, char *const *argv, char *const *env,
		      const struct how *how)
{
	char **shargv;
	size_t n = 0;
	int r;

	r = spawn_one(pid, path, argv, env, how);
	if (r != ENOEXEC)
		return r;
	while (argv[n])
		n++;
	shargv = calloc(n + 2, sizeof(*shargv));
	if (!shargv)
		return ENOMEM;
	shargv[0] = (char *)"/bin/sh";
	shargv[1] = (char *)path;
	if (n > 1)
		memcpy(shargv + 2, argv + 1, (n - 1) * sizeof(*shargv));
	r = spawn_one(pid, "/bin/sh", shargv, env, how);
	free(shargv);
	return r;
}

/*
 * Starts argv[0] as execvp would find it (a name without '/' is looked up
 * in the directories of PATH), with this difference: PATH is the one of
 * env, the child's environment, "/bin:/usr/bin" when env has none. Like
 * execvp it goes on past a candidate that does not exist or cannot be
 * executed (EACCES, reported when nothing else was found). A candidate
 * named by an absolute path that does not exist is skipped without a
 * spawn. 0 or a positive errno.
 */
static int search(pid_t *pid, char *const *argv, char *const *env, const struct how *how)
{
	const char *file = argv[0], *path, *s, *e;
	char cand[PATH_MAX];
	int r, eacces = 0, last = ENOENT, n;

	if (!file[0])
		return ENOENT;
	if (strchr(file, '/'))
		return spawn_file(pid, file, argv, env, how);
	path = env_get(env, "PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (s = path;; s = e + 1) {
		e = strchrnul(s, ':');
		if (e == s)
			n = snprintf(cand, sizeof(cand), "%s", file); /* "": the cwd */
		else
			n = snprintf(cand, sizeof(cand), "%.*s/%s", (int)(e - s), s, file);
		if (n >= (int)sizeof(cand)) {
			r = ENAMETOOLONG;
		} else if (cand[0] == '/' && access(cand, F_OK) < 0 &&
			   (errno == ENOENT || errno == ENOTDIR)) {
			r = errno;
		} else {
			r = spawn_file(pid, cand, argv, env, how);
			if (r == 0)
				return 0;
		}
		switch (r) {
		case EACCES:
			eacces = 1;
			break;
		case ENOENT:
		case ENOTDIR:
		case ESTALE:
		case ENODEV:
		case ETIMEDOUT:
		case ENAMETOOLONG:
			last = r;
			break;
		default:
			return r;
		}
		if (!*e)
			break;
	}
	return eacces ? EACCES : last;
}

/* An output stream's own descriptors: for a pipe, *fd its write end (for
 * the child, then closed) and *rd its read end; else both -1. 0 or a
 * positive errno. */
static int out_stream(enum proc_out mode, int given, int *fd, int *rd)
{
	int fds[2];

	*fd = -1;
	*rd = -1;
	switch (mode) {
	case PROC_OUT_NULL:
		return null_fd() < 0 ? errno : 0; /* the caller takes null_fd() */
	case PROC_OUT_PIPE:
		if (pipe2(fds, O_CLOEXEC) < 0)
			return errno;
		*rd = above_stdio(fds[0]);
		*fd = above_stdio(fds[1]);
		if (*rd < 0 || *fd < 0) {
			int e = errno;

			if (*rd >= 0)
				close(*rd);
			if (*fd >= 0)
				close(*fd);
			*rd = *fd = -1;
			return e;
		}
		return 0;
	case PROC_OUT_FD:
		return given < 0 ? EINVAL : 0;
	case PROC_OUT_INHERIT:
		return 0;
	default:
		return EINVAL;
	}
}

/* What the child's output stream becomes for mode: given, own (a pipe's
 * write end), /dev/null, or -1 (left as it is). */
static int stream_fd(enum proc_out mode, int given, int own)
{
	switch (mode) {
	case PROC_OUT_FD:
		return given;
	case PROC_OUT_NULL:
		return devnull;
	case PROC_OUT_PIPE:
		return own;
	default:
		return -1;
	}
}

/* The file actions and attributes of a start without cred. 0 or a
 * positive errno. */
static int spawn_attrs(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at,
		       const struct how *how)
{
	sigset_t none, all;
	int r = 0, sig;

	sigemptyset(&none);
	sigfillset(&all);
	/* glibc's posix_spawn leaves the signals it keeps for itself (those
	 * below SIGRTMIN: 32 and 33) ignored in the child unless they are in
	 * the default set, which sigaddset() refuses them: their bits go in
	 * directly (bit sig - 1, the kernel's layout), so that no signal at
	 * all is ignored. */
	for (sig = 32; sig < SIGRTMIN; sig++)
		all.__val[(sig - 1) / (8 * sizeof(all.__val[0]))] |=
			1UL << ((sig - 1) % (8 * sizeof(all.__val[0])));
	if (how->fd[0] >= 0)
		r = posix_spawn_file_actions_adddup2(fa, how->fd[0], 0);
	if (!r && how->fd[1] >= 0)
		r = posix_spawn_file_actions_adddup2(fa, how->fd[1], 1);
	if (!r && how->fd[2] >= 0)
		r = posix_spawn_file_actions_adddup2(fa, how->fd[2], 2);
	if (!r && how->cwd)
		r = posix_spawn_file_actions_addchdir_np(fa, how->cwd);
	if (!r)
		r = posix_spawnattr_setflags(at, (how->session ? POSIX_SPAWN_SETSID
							       : POSIX_SPAWN_SETPGROUP) |
						 POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!r && !how->session)
		r = posix_spawnattr_setpgroup(at, 0);
	if (!r)
		r = posix_spawnattr_setsigmask(at, &none);
	if (!r)
		r = posix_spawnattr_setsigdefault(at, &all);
	return r;
}

int proc_start(const struct proc_spec *spec, struct proc *p)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	struct how how = { &fa, &at, spec->cred, { -1, -1, -1 }, spec->session != 0, spec->cwd };
	char *const *env = spec->env ? spec->env : environ;
	int r = 0, own_in = -1, own_out = -1, own_err = -1, rd_out = -1, rd_err = -1;
	pid_t pid;

	p->pid = 0;
	p->pidfd = p->out = p->err = -1;
	if (!spec->argv || !spec->argv[0] || spec->out == PROC_OUT_STDOUT)
		return -EINVAL;
	switch (spec->in) {
	case PROC_IN_NULL:
		how.fd[0] = null_fd();
		r = how.fd[0] < 0 ? errno : 0;
		break;
	case PROC_IN_BYTES:
		own_in = bytes_file(spec->in_data, spec->in_len);
		r = own_in < 0 ? errno : 0;
		how.fd[0] = own_in;
		break;
	case PROC_IN_FD:
		r = spec->in_fd < 0 ? EINVAL : 0;
		how.fd[0] = spec->in_fd;
		break;
	default:
		r = EINVAL;
	}
	if (!r)
		r = out_stream(spec->out, spec->out_fd, &own_out, &rd_out);
	how.fd[1] = stream_fd(spec->out, spec->out_fd, own_out);
	if (!r && spec->err == PROC_OUT_STDOUT) {
		how.fd[2] = 1;
	} else if (!r) {
		r = out_stream(spec->err, spec->err_fd, &own_err, &rd_err);
		how.fd[2] = stream_fd(spec->err, spec->err_fd, own_err);
	}
	if (!r && !spec->cred) {
		r = posix_spawn_file_actions_init(&fa);
		if (!r) {
			r = posix_spawnattr_init(&at);
			if (r)
				posix_spawn_file_actions_destroy(&fa);
		}
		if (!r) {
			r = spawn_attrs(&fa, &at, &how);
			if (!r)
				r = search(&pid, spec->argv, env, &how);
			posix_spawn_file_actions_destroy(&fa);
			posix_spawnattr_destroy(&at);
		}
	} else if (!r) {
		r = search(&pid, spec->argv, env, &how);
	}
	/* Opened while the child's ends of the pipes are still open: it needs
	 * a free descriptor of its own, and where there is none the caller
	 * goes without, as on a kernel without pidfds. */
	if (!r)
		p->pidfd = pidfd_open(pid, 0);
	if (own_in >= 0)
		close(own_in);
	if (own_out >= 0)
		close(own_out);
	if (own_err >= 0)
		close(own_err);
	if (r) {
		if (rd_out >= 0)
			close(rd_out);
		if (rd_err >= 0)
			close(rd_err);
		return -r;
	}
	p->pid = pid;
	p->out = rd_out;
	p->err = rd_err;
	return 0;
}

void proc_close(struct proc *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->out >= 0)
		close(p->out);
	if (p->err >= 0)
		close(p->err);
	p->pidfd = p->out = p->err = -1;
}
