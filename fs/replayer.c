/*
 * replayer.c - the replayer process (see replayer.h).
 *
 * Protocol: a SOCK_SEQPACKET socket pair. Each request is one packet, the
 * operation's letter followed by the path; each answer one packet, an int
 * (0 or errno). The child reads until its socket is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/close_range.h>

#include "replayer.h"

struct replayer {
	pid_t pid;
	int sock;
};

static int do_op(int op, const char *full)
{
	int fd;

	switch (op) {
	case REPLAY_CREATE:
		fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
		/* It exists: a change of it all the same. */
		if (fd < 0 && errno == EEXIST)
			fd = open(full, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		break;
	case REPLAY_WRITE:
		fd = open(full, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		break;
	case REPLAY_RMDIR:
		return rmdir(full) < 0 ? errno : 0;
	case REPLAY_MKDIR:
		return mkdir(full, 0755) < 0 ? errno : 0;
	default:
		return EINVAL;
	}
	if (fd < 0)
		return errno;
	/* One byte: IN_MODIFY (a write of nothing raises no event); the mount
	 * answers the replayer's writes without changing anything. */
	if (pwrite(fd, "", 1, 0) < 0) {
		int e = errno;

		close(fd);
		return e;
	}
	return close(fd) < 0 ? errno : 0;
}

static void child_main(int sock, const char *mountpoint, pid_t parent)
{
	char msg[PATH_MAX + 2], full[2 * PATH_MAX + 2];
	sigset_t all;
	ssize_t n;
	int err;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, "packetfs-replay");
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* Nothing of the daemon's: not the FUSE device, not the store's lock. */
	if (sock != 3) {
		dup2(sock, 3);
		sock = 3;
	}
	close_range(4, ~0U, 0);
	if (chdir("/") < 0)
		_exit(1);
	for (;;) {
		n = recv(sock, msg, sizeof(msg) - 1, 0);
		if (n <= 0)
			_exit(0);
		msg[n] = '\0';
		err = ENAMETOOLONG;
		if ((size_t)snprintf(full, sizeof(full), "%s%s", mountpoint, msg + 1) < sizeof(full))
			err = do_op(msg[0], full);
		if (send(sock, &err, sizeof(err), MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}

int replayer_start(const char *mountpoint, struct replayer **out)
{
	struct replayer *r = calloc(1, sizeof(*r));
	pid_t parent = getpid();
	int sv[2];

	if (!r)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		free(r);
		return -errno;
	}
	/* A helper process of this program, without exec: not a program run
	 * (those start through proc_start of the engine; tests/tree/spawn.sh
	 * names this fork as an exception). */
	r->pid = fork();
	if (r->pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		free(r);
		return -e;
	}
	if (r->pid == 0) {
		close(sv[0]);
		child_main(sv[1], mountpoint, parent);
		_exit(0);
	}
	close(sv[1]);
	r->sock = sv[0];
	*out = r;
	return 0;
}

int replayer_call(struct replayer *r, enum replay_op op, const char *path)
{
	char msg[PATH_MAX + 2];
	int err;
	size_t len = strlen(path);
	ssize_t n;

	if (len + 2 > sizeof(msg))
		return ENAMETOOLONG;
	msg[0] = (char)op;
	memcpy(msg + 1, path, len);
	if (send(r->sock, msg, len + 1, MSG_NOSIGNAL) < 0)
		return -EPIPE;
	do
		n = recv(r->sock, &err, sizeof(err), 0);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(err) ? err : -EPIPE;
}

pid_t replayer_pid(const struct replayer *r)
{
	return r->pid;
}

void replayer_stop(struct replayer *r)
{
	if (!r)
		return;
	close(r->sock);
	while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(r);
}
