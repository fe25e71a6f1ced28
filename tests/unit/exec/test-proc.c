/*
 * test-proc.c - the one start of a program (proc.h) and the synchronous
 * run on top of it (capture.h): the deadline kills the whole process group,
 * a grandchild included; the capture cap; -ENOENT for a missing program;
 * exit statuses and signals; cwd, environment and stdin bytes honoured;
 * stderr dropped, merged or in a pipe of its own; a group or a session of
 * its own; the child's signal state; a script without "#!"; a run as
 * another user (as root only); no descriptor left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "proc.h"
#include "test.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether pid is gone or a zombie (its parent not reaping yet). */
static int gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int z = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		z = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return z;
}

/* Runs argv to its end with no options but a 10 s deadline. */
static int run(char *const *argv, struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->argv = argv;
	c->timeout_ms = 10000;
	c->max = 65536;
	return capture_exec(c);
}

TEST(deadline_kills_the_group)
{
	char *argv[] = { "sh", "-c", "sleep 30 & echo $!; sleep 30", NULL };
	struct capture c = { 0 };
	long long t0 = now_ms(), t;
	pid_t grandchild;

	c.argv = argv;
	c.timeout_ms = 300;
	c.max = 100;
	ASSERT_EQ(capture_exec(&c), -ETIMEDOUT);
	t = now_ms() - t0;
	ASSERT(t >= 300 && t < 3000);
	/* What it wrote before the deadline is kept: the grandchild's pid. */
	ASSERT(c.out != NULL);
	grandchild = (pid_t)atoi(c.out);
	ASSERT(grandchild > 1);
	for (t0 = now_ms(); !gone(grandchild) && now_ms() - t0 < 3000;)
		usleep(10000);
	ASSERT(gone(grandchild));
	free(c.out);
}

TEST(capture_cap)
{
	char *argv[] = { "head", "-c", "100000", "/dev/zero", NULL };
	struct capture c = { 0 };

	c.argv = argv;
	c.timeout_ms = 10000;
	c.max = 1000;
	ASSERT_EQ(capture_exec(&c), 0);
	/* The rest was read and dropped: head ended normally, no SIGPIPE. */
	ASSERT_EQ(c.len, 1000);
	ASSERT(WIFEXITED(c.status));
	ASSERT_EQ(WEXITSTATUS(c.status), 0);
	ASSERT_EQ(c.out[1000], '\0');
	free(c.out);
}

TEST(missing_program)
{
	char *argv[] = { "packetfs-no-such-program", NULL };
	char *path[] = { "/nowhere/packetfs-no-such-program", NULL };
	struct proc_spec spec = { 0 };
	struct capture c;
	struct proc p;
	char *out;
	size_t len;

	ASSERT_EQ(run(argv, &c), -ENOENT);
	ASSERT(c.out == NULL);
	ASSERT_EQ(capture_run(path, 1000, 10, &out, &len), -ENOENT);
	ASSERT(out == NULL);
	spec.argv = argv;
	ASSERT_EQ(proc_start(&spec, &p), -ENOENT);
	ASSERT_EQ(p.pid, 0);
	ASSERT_EQ(p.pidfd, -1);
	ASSERT_EQ(p.out, -1);
	spec.argv = NULL;
	ASSERT_EQ(proc_start(&spec, &p), -EINVAL);
}

TEST(exit_status_and_signal)
{
	char *three[] = { "sh", "-c", "echo x; exit 3", NULL };
	char *term[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct capture c;
	char *out;
	size_t len;

	ASSERT_EQ(run(three, &c), 0);
	ASSERT(WIFEXITED(c.status));
	ASSERT_EQ(WEXITSTATUS(c.status), 3);
	ASSERT_STREQ(c.out, "x\n");
	free(c.out);
	ASSERT_EQ(run(term, &c), 0);
	ASSERT(WIFSIGNALED(c.status));
	ASSERT_EQ(WTERMSIG(c.status), SIGTERM);
	free(c.out);
	/* capture_run: non-zero and signals are -EIO, the output kept. */
	ASSERT_EQ(capture_run(three, 10000, 100, &out, &len), -EIO);
	ASSERT_STREQ(out, "x\n");
	free(out);
	ASSERT_EQ(capture_run(term, 10000, 100, &out, &len), -EIO);
	free(out);
}

TEST(cwd_and_env)
{
	char dir[] = "/tmp/test-proc.XXXXXX", real[PATH_MAX], want[PATH_MAX + 16];
	char *argv[] = { "sh", "-c", "pwd -P; echo \"$FOO\"; echo \"${HOME-unset}\"", NULL };
	char *env[] = { "FOO=bar baz", "PATH=/usr/bin:/bin", NULL };
	struct capture c = { 0 };

	ASSERT(mkdtemp(dir) != NULL);
	ASSERT(realpath(dir, real) != NULL);
	c.argv = argv;
	c.env = env;
	c.cwd = dir;
	c.timeout_ms = 10000;
	c.max = 4096;
	ASSERT_EQ(capture_exec(&c), 0);
	snprintf(want, sizeof(want), "%s\nbar baz\nunset\n", real);
	ASSERT_STREQ(c.out, want);
	free(c.out);
	/* A directory that does not exist: the start fails. */
	c.cwd = "/nowhere/at/all";
	ASSERT_EQ(capture_exec(&c), -ENOENT);
	rmdir(dir);
}

TEST(stdin_bytes)
{
	char *argv[] = { "cat", NULL };
	static const char data[] = "hello\0world\n";
	struct capture c = { 0 };

	c.argv = argv;
	c.in_data = data;
	c.in_len = sizeof(data) - 1;
	c.timeout_ms = 10000;
	c.max = 4096;
	ASSERT_EQ(capture_exec(&c), 0);
	ASSERT_EQ(c.len, sizeof(data) - 1);
	ASSERT(memcmp(c.out, data, c.len) == 0);
	free(c.out);
	/* Without bytes stdin is /dev/null: cat ends at once. */
	ASSERT_EQ(run(argv, &c), 0);
	ASSERT_EQ(c.len, 0);
	free(c.out);
}

TEST(stderr_modes)
{
	char *argv[] = { "sh", "-c", "echo out; echo err >&2", NULL };
	struct proc_spec spec = { 0 };
	struct capture c;
	struct proc p;
	char buf[64];
	ssize_t n;
	int status;

	ASSERT_EQ(run(argv, &c), 0);
	ASSERT_STREQ(c.out, "out\n");
	free(c.out);
	memset(&c, 0, sizeof(c));
	c.argv = argv;
	c.err = PROC_OUT_STDOUT;
	c.timeout_ms = 10000;
	c.max = 64;
	ASSERT_EQ(capture_exec(&c), 0);
	ASSERT_STREQ(c.out, "out\nerr\n");
	free(c.out);
	c.err = PROC_OUT_PIPE; /* not one capture_exec takes */
	ASSERT_EQ(capture_exec(&c), -EINVAL);
	/* Two pipes of proc_start. */
	spec.argv = argv;
	spec.out = PROC_OUT_PIPE;
	spec.err = PROC_OUT_PIPE;
	ASSERT_EQ(proc_start(&spec, &p), 0);
	ASSERT(p.out > 2 && p.err > 2 && p.out != p.err);
	n = read(p.err, buf, sizeof(buf) - 1);
	ASSERT_EQ(n, 4);
	ASSERT(memcmp(buf, "err\n", 4) == 0);
	n = read(p.out, buf, sizeof(buf) - 1);
	ASSERT_EQ(n, 4);
	ASSERT(memcmp(buf, "out\n", 4) == 0);
	ASSERT_EQ(waitpid(p.pid, &status, 0), p.pid);
	proc_close(&p);
	ASSERT_EQ(p.out, -1);
	/* stdout may not be "merged into stdout". */
	spec.out = PROC_OUT_STDOUT;
	ASSERT_EQ(proc_start(&spec, &p), -EINVAL);
}

TEST(group_or_session)
{
	char *argv[] = { "sleep", "5", NULL };
	struct proc_spec spec = { 0 };
	struct proc p;
	int status;

	spec.argv = argv;
	ASSERT_EQ(proc_start(&spec, &p), 0);
	ASSERT(p.pidfd >= 0);
	ASSERT_EQ(getpgid(p.pid), p.pid);
	ASSERT_EQ(getsid(p.pid), getsid(0));
	kill(-p.pid, SIGKILL);
	ASSERT_EQ(waitpid(p.pid, &status, 0), p.pid);
	proc_close(&p);
	spec.session = 1;
	ASSERT_EQ(proc_start(&spec, &p), 0);
	ASSERT_EQ(getpgid(p.pid), p.pid);
	ASSERT_EQ(getsid(p.pid), p.pid);
	kill(-p.pid, SIGKILL);
	ASSERT_EQ(waitpid(p.pid, &status, 0), p.pid);
	proc_close(&p);
}

/* The child starts with no signal blocked or ignored, whatever its parent
 * had. */
TEST(signal_state)
{
	char *argv[] = { "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL };
	sigset_t set, old;
	struct capture c;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	ASSERT_EQ(run(argv, &c), 0);
	ASSERT_CONTAINS(c.out, "SigBlk:\t0000000000000000\n");
	ASSERT_CONTAINS(c.out, "SigIgn:\t0000000000000000\n");
	free(c.out);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

/* A script without "#!" runs with /bin/sh, as execvp does it. */
TEST(script_without_interpreter)
{
	char path[] = "/tmp/test-proc-script.XXXXXX";
	char *argv[] = { path, "a1", NULL };
	struct capture c;
	int fd = mkstemp(path);

	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, "echo ran \"$1\"\n", 14), 14);
	close(fd);
	ASSERT_EQ(chmod(path, 0700), 0);
	ASSERT_EQ(run(argv, &c), 0);
	ASSERT_STREQ(c.out, "ran a1\n");
	free(c.out);
	unlink(path);
}

/* As another user (root only: otherwise -EPERM). */
TEST(credentials)
{
	char *argv[] = { "sh", "-c", "id -u; id -g; pwd", NULL };
	char dir[] = "/tmp/test-proc-root.XXXXXX";
	gid_t groups[] = { 65534 };
	struct proc_cred cred = { 65534, 65534, groups, 1 };
	struct proc_spec spec = { 0 };
	struct proc p;
	char buf[256];
	ssize_t n, len = 0;
	int status;

	spec.argv = argv;
	spec.cred = &cred;
	spec.cwd = "/";
	spec.out = PROC_OUT_PIPE;
	spec.err = PROC_OUT_STDOUT;
	if (geteuid() != 0) {
		ASSERT_EQ(proc_start(&spec, &p), -EPERM);
		return;
	}
	ASSERT_EQ(proc_start(&spec, &p), 0);
	while ((n = read(p.out, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	ASSERT_EQ(waitpid(p.pid, &status, 0), p.pid);
	ASSERT_STREQ(buf, "65534\n65534\n/\n");
	proc_close(&p);
	/* A directory the user may not enter (root's, mode 0700): the start
	 * fails there, after the credentials changed. */
	ASSERT(mkdtemp(dir) != NULL);
	spec.cwd = dir;
	ASSERT_EQ(proc_start(&spec, &p), -EACCES);
	rmdir(dir);
}

/* The number of open descriptors of this process. */
static int open_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* No start, failed or not, leaves a descriptor behind (but the one shared
 * /dev/null, opened by the first start). */
TEST(no_descriptor_left)
{
	char *ok[] = { "cat", NULL }, *missing[] = { "packetfs-no-such-program", NULL };
	struct proc_spec spec = { 0 };
	struct capture c;
	struct proc p;
	int before, status;

	ASSERT_EQ(run(ok, &c), 0); /* the shared /dev/null is open from here on */
	free(c.out);
	before = open_fds();
	ASSERT_EQ(run(missing, &c), -ENOENT);
	memset(&c, 0, sizeof(c));
	c.argv = ok;
	c.in_data = "x";
	c.in_len = 1;
	c.timeout_ms = 10000;
	c.max = 10;
	ASSERT_EQ(capture_exec(&c), 0);
	free(c.out);
	spec.argv = ok;
	spec.in = PROC_IN_BYTES;
	spec.in_data = "x";
	spec.in_len = 1;
	spec.out = PROC_OUT_PIPE;
	spec.err = PROC_OUT_PIPE;
	spec.cwd = "/nowhere/at/all";
	ASSERT_EQ(proc_start(&spec, &p), -ENOENT);
	spec.cwd = NULL;
	ASSERT_EQ(proc_start(&spec, &p), 0);
	ASSERT_EQ(waitpid(p.pid, &status, 0), p.pid);
	proc_close(&p);
	ASSERT_EQ(open_fds(), before);
}

int main(void)
{
	RUN(deadline_kills_the_group);
	RUN(capture_cap);
	RUN(missing_program);
	RUN(exit_status_and_signal);
	RUN(cwd_and_env);
	RUN(stdin_bytes);
	RUN(stderr_modes);
	RUN(group_or_session);
	RUN(signal_state);
	RUN(script_without_interpreter);
	RUN(credentials);
	RUN(no_descriptor_left);
	return 0;
}
