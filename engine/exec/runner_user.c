/*
 * runner_user.c - runs as another user (runner.h, struct runner_user;
 * SPEC §5 "run_as"): the user's identity read from the user and group
 * databases, and the start of a process that drops to it before exec.
 *
 * DESIGN: posix_spawn cannot change the credentials of the child, so a run
 * with a user starts with vfork() (the child borrows this process's memory
 * and the calling thread waits only for its exec, as with glibc's
 * posix_spawn). Everything the child needs is computed before: the group
 * list (getgrouplist, which reads NSS and must not run in the child), the
 * path, argv and environment. The child does only system calls: every
 * signal to its default, setsid, stdin and stdout/stderr, then
 * setgroups, setgid, setuid in that order, each checked, then chdir to
 * the run's directory (so that the user must be able to enter it), an
 * empty signal mask, execve. The credentials change through syscall(2),
 * never glibc's setgroups/setgid/setuid: those signal every thread of the
 * process to change all of them together, and in a vfork child the
 * "process" glibc knows is the daemon, whose threads must keep their
 * identity. An error of any step is left in a variable the parent reads
 * once the child has exited; the parent then reaps it.
 *
 * Signals: the calling thread blocks every signal around vfork, so that no
 * handler of the daemon runs in the child before it has set them to their
 * defaults.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner_int.h"

#define MAX_GROUPS 65536

int runner_user_lookup(const char *name, struct runner_user **out)
{
	struct passwd pw, *res = NULL;
	struct runner_user *u;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	char *buf;
	int r, n = 32;

	if (size < 16384)
		size = 16384;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	r = getpwnam_r(name, &pw, buf, (size_t)size, &res);
	if (r || !res) {
		free(buf);
		return r == ENOMEM ? -ENOMEM : r && r != ENOENT && r != ESRCH ? -r : -ENOENT;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		free(buf);
		return -ENOMEM;
	}
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	if (asprintf(&u->env_home, "HOME=%s", pw.pw_dir && pw.pw_dir[0] ? pw.pw_dir : "/") < 0)
		u->env_home = NULL;
	if (asprintf(&u->env_user, "USER=%s", pw.pw_name) < 0)
		u->env_user = NULL;
	if (asprintf(&u->env_logname, "LOGNAME=%s", pw.pw_name) < 0)
		u->env_logname = NULL;
	u->name = strdup(pw.pw_name);
	r = u->env_home && u->env_user && u->env_logname && u->name ? 0 : -ENOMEM;
	/* getgrouplist says how many there are when the array is short. */
	while (r == 0) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(gid_t));
		int want = n;

		if (!g) {
			r = -ENOMEM;
			break;
		}
		u->groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, g, &want) >= 0) {
			u->ngroups = want;
			break;
		}
		if (want <= n)
			want = n * 2;
		if (want > MAX_GROUPS)
			r = -E2BIG;
		n = want;
	}
	free(buf);
	if (r) {
		runner_user_free(u);
		return r;
	}
	*out = u;
	return 0;
}

void runner_user_free(struct runner_user *u)
{
	if (!u)
		return;
	free(u->groups);
	free(u->name);
	free(u->env_home);
	free(u->env_user);
	free(u->env_logname);
	free(u);
}

/* The child of runner__spawn_as: the steps of the top, then execve; on a
 * failure the errno in *err and _exit(127). Only system calls. */
static void __attribute__((noreturn))
child(const char *path, char *const *argv, char *const *env, const struct runner_user *u,
      int in_fd, int out_fd, const char *cwd, volatile int *err)
{
	/* struct sigaction as the kernel takes it, all zero: SIG_DFL, no
	 * flags, an empty mask (larger than any architecture's). */
	unsigned long dfl[8] = {0};
	unsigned long none[2] = {0};
	int sig;

	for (sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, dfl, NULL, _NSIG / 8);
	if (setsid() < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		goto fail;
	if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0)
		goto fail;
	if (syscall(SYS_setresgid, u->gid, u->gid, u->gid) < 0)
		goto fail;
	if (syscall(SYS_setresuid, u->uid, u->uid, u->uid) < 0)
		goto fail;
	if (cwd && chdir(cwd) < 0)
		goto fail;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, none, NULL, _NSIG / 8);
	execve(path, argv, env);
fail:
	*err = errno ? errno : EIO;
	_exit(127);
}

int runner__spawn_as(pid_t *pid, const char *path, char *const *argv, char *const *env,
		     const struct runner_user *u, int in_fd, int out_fd, const char *cwd)
{
	volatile int err = 0;
	sigset_t all, old;
	pid_t c;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	c = vfork();
	if (c == 0)
		child(path, argv, env, u, in_fd, out_fd, cwd, &err);
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
