/*
 * capture.c - a helper program run to its end under a deadline, its
 * standard output captured (capture.h).
 *
 * Design: posix_spawnp (no shell) with POSIX_SPAWN_SETPGROUP, so that the
 * child and whatever it starts form a group of their own that one kill
 * ends; its output is read with poll() up to the deadline (a hanging
 * program is cut off there, not when it would close its output); then it
 * is reaped by its pid, polling waitpid(WNOHANG) until the same deadline,
 * past which the group is killed. A child that closed its output and went
 * on running is caught there too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"

extern char **environ;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Moves fd to a descriptor >= 3 (close-on-exec), so that the child's
 * dup2 onto 1 never meets itself. Returns the descriptor, or -1. */
static int above_stdio(int fd)
{
	int nfd;

	if (fd >= 3)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/* Waits for pid until deadline (ms, now_ms clock); past it kills its
 * process group and reaps it. Returns the wait status, or -1 when pid
 * cannot be waited for; *timed_out is set when it was killed. */
static int reap(pid_t pid, long long deadline, int *timed_out)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	int status;
	pid_t w;

	for (;;) {
		w = waitpid(pid, &status, *timed_out ? 0 : WNOHANG);
		if (w == pid)
			return status;
		if (w < 0 && errno != EINTR)
			return -1;
		if (w == 0 && now_ms() >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			*timed_out = 1;
		} else if (w == 0) {
			nanosleep(&nap, NULL);
		}
	}
}

/* Spawns argv in a process group of its own with stdout on fd; *pid. 0 or
 * a negative errno. */
static int spawn(char *const *argv, int fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t mask, def;
	int rc;

	sigemptyset(&mask);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGCHLD);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGHUP);
	sigaddset(&def, SIGQUIT);
	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return -rc;
	rc = posix_spawnattr_init(&at);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		return -rc;
	}
	rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fd, 1);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
						   POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &mask);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&at, &def);
	if (!rc)
		rc = posix_spawnp(pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return -rc;
}

int capture_run(char *const *argv, int timeout_ms, size_t max, char **out, size_t *len)
{
	char *buf, chunk[4096];
	int fds[2], rc, status, timed_out = 0;
	long long deadline;
	size_t n = 0;
	pid_t pid;

	*out = NULL;
	*len = 0;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		rc = -errno;
		free(buf);
		return rc;
	}
	fds[0] = above_stdio(fds[0]);
	fds[1] = above_stdio(fds[1]);
	rc = fds[0] < 0 || fds[1] < 0 ? -errno : spawn(argv, fds[1], &pid);
	if (fds[1] >= 0)
		close(fds[1]);
	if (rc) {
		if (fds[0] >= 0)
			close(fds[0]);
		free(buf);
		return rc;
	}
	deadline = now_ms() + timeout_ms;
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (r <= 0)
			continue; /* EINTR, or the deadline: checked above */
		r = read(fds[0], chunk, sizeof(chunk));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		if ((size_t)r > max - n)
			r = (ssize_t)(max - n); /* keep draining, keep nothing */
		memcpy(buf + n, chunk, (size_t)r);
		n += (size_t)r;
	}
	close(fds[0]);
	status = reap(pid, deadline, &timed_out);
	buf[n] = '\0';
	if (timed_out) {
		free(buf);
		return -ETIMEDOUT;
	}
	*out = buf;
	*len = n;
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
