/*
 * test-slurm-cmd.c - the Slurm executor's commands on the loop
 * (slurm_cmd.c, slurm__cmd_run), with ordinary programs standing in for
 * sbatch and the like: stdout and stderr kept apart, the exit status, a
 * signal, a program that cannot start ("cannot run"), slurm__cmd_kill, and
 * the end of a command seen without a pidfd (the waitpid timer). The
 * deadline's kill is tests/pipeline/slurm-cmd-hang.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "slurm_int.h"
#include "test.h"

/* What the done function saw. */
static int done_calls;
static struct {
	int64_t exit_status;
	int term_signal, spawn_error, failed;
	char out[256], err[256];
} seen;

static void on_done(struct cmd *c)
{
	done_calls++;
	seen.exit_status = c->exit_status;
	seen.term_signal = c->term_signal;
	seen.spawn_error = c->spawn_error;
	seen.failed = slurm__cmd_failed(c);
	snprintf(seen.out, sizeof(seen.out), "%s", c->obuf.data ? c->obuf.data : "");
	snprintf(seen.err, sizeof(seen.err), "%s", c->ebuf.data ? c->ebuf.data : "");
}

/* Runs argv as a command of a job that never finishes (so the done
 * function always runs), to its end and the close of its handles. With
 * kill_sig, the command gets it through slurm__cmd_kill once started. */
static void run_cmd(char *const *argv, int kill_sig)
{
	struct slurm_job *j = calloc(1, sizeof(*j));
	uv_loop_t loop;

	ASSERT(j != NULL);
	j->fd = -1;
	memset(&seen, 0, sizeof(seen));
	done_calls = 0;
	ASSERT_EQ(uv_loop_init(&loop), 0);
	ASSERT_EQ(slurm__cmd_run(&loop, j, NULL, argv, NULL, 4096, on_done), 0);
	if (kill_sig) {
		ASSERT(j->cmds != NULL && j->cmds->pid > 0);
		slurm__cmd_kill(j->cmds, kill_sig);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	ASSERT_EQ(done_calls, 1);
	ASSERT_EQ(j->ncmds, 0); /* every handle closed, the command freed */
	ASSERT(j->cmds == NULL);
	ASSERT_EQ(uv_loop_close(&loop), 0);
	free(j);
}

TEST(output_and_status)
{
	char *argv[] = { "sh", "-c", "echo out; echo 'sbatch: error: no' >&2; exit 3", NULL };
	char line[128];
	struct cmd c;

	run_cmd(argv, 0);
	ASSERT_EQ(seen.exit_status, 3);
	ASSERT_EQ(seen.term_signal, 0);
	ASSERT_EQ(seen.failed, 1);
	ASSERT_STREQ(seen.out, "out\n");
	ASSERT_STREQ(seen.err, "sbatch: error: no\n");
	memset(&c, 0, sizeof(c));
	c.ebuf.data = seen.err;
	slurm__last_error_line(&c, line, sizeof(line));
	ASSERT_STREQ(line, "no");
}

TEST(success)
{
	char *argv[] = { "echo", "12345", NULL };

	run_cmd(argv, 0);
	ASSERT_EQ(seen.failed, 0);
	ASSERT_STREQ(seen.out, "12345\n");
}

TEST(signal_and_kill)
{
	char *self[] = { "sh", "-c", "kill -KILL $$", NULL };
	char *sleeper[] = { "sleep", "30", NULL };

	run_cmd(self, 0);
	ASSERT_EQ(seen.term_signal, SIGKILL);
	ASSERT_EQ(seen.failed, 1);
	run_cmd(sleeper, SIGTERM);
	ASSERT_EQ(seen.term_signal, SIGTERM);
}

TEST(cannot_start)
{
	char *argv[] = { "packetfs-no-such-sbatch", NULL };

	run_cmd(argv, 0);
	ASSERT_EQ(seen.spawn_error, -ENOENT);
	ASSERT_EQ(seen.exit_status, 127);
	ASSERT_EQ(seen.failed, 1);
	ASSERT_STREQ(seen.err, "cannot run packetfs-no-such-sbatch: no such file or directory");
}

/* With no descriptor left for a pidfd (the table filled up to a lowered
 * limit, all but the four of the two pipes and the one libuv keeps for
 * EMFILE, opened by the first stream of a loop), the end is still seen. */
TEST(end_seen_without_pidfd)
{
	char *argv[] = { "sh", "-c", "sleep 0.2; echo late; exit 4", NULL };
	struct slurm_job *j = calloc(1, sizeof(*j));
	struct rlimit old, low;
	int fds[256], n = 0, i;
	uv_loop_t loop;

	ASSERT(j != NULL);
	j->fd = -1;
	memset(&seen, 0, sizeof(seen));
	done_calls = 0;
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 200;
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	ASSERT_EQ(uv_loop_init(&loop), 0);
	while (n < 256 && (fds[n] = fcntl(0, F_DUPFD_CLOEXEC, 0)) >= 0)
		n++;
	ASSERT_EQ(errno, EMFILE);
	ASSERT(n >= 5);
	for (i = 0; i < 5; i++)
		close(fds[--n]);
	ASSERT_EQ(slurm__cmd_run(&loop, j, NULL, argv, NULL, 4096, on_done), 0);
	ASSERT(j->cmds != NULL);
	ASSERT_EQ(j->cmds->spawn_error, 0);
	ASSERT(j->cmds->pid > 0);
	ASSERT_EQ(j->cmds->pidfd, -1);
	ASSERT_EQ(j->cmds->watch_poll, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	ASSERT_EQ(done_calls, 1);
	ASSERT_EQ(seen.exit_status, 4);
	ASSERT_STREQ(seen.out, "late\n");
	ASSERT_EQ(uv_loop_close(&loop), 0);
	free(j);
}

int main(void)
{
	char *warm[] = { "true", NULL };

	/* The first start opens proc.c's shared /dev/null: before the
	 * descriptor table is filled. */
	run_cmd(warm, 0);
	RUN(output_and_status);
	RUN(success);
	RUN(signal_and_kill);
	RUN(cannot_start);
	RUN(end_seen_without_pidfd);
	return 0;
}
