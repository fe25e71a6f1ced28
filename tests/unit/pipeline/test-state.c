/*
 * test-state.c - the item state machine (pipe_state.c): the table
 * pipe_state_allowed answers from, pair by pair, and pipe__state_move,
 * which makes an allowed move and refuses any other (the item keeps its
 * state; with assertions, as in the tests' build, the process stops).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipe_int.h"
#include "test.h"

/* want[from][to]: 1 where the table allows the move (pipe_state.c's). */
static const int want[ITEM_NSTATES][ITEM_NSTATES] = {
	/*                new queued running waiting blocked failed done */
	[ITEM_NEW] = { 0, 1, 1, 1, 1, 1, 0 },
	[ITEM_QUEUED] = { 0, 1, 1, 1, 1, 1, 0 },
	[ITEM_RUNNING] = { 1, 1, 1, 1, 1, 1, 1 },
	[ITEM_WAITING] = { 0, 1, 1, 1, 1, 1, 0 },
	[ITEM_BLOCKED] = { 0, 1, 1, 1, 1, 1, 0 },
	[ITEM_FAILED] = { 0, 1, 1, 1, 1, 1, 0 },
	[ITEM_DONE] = { 0, 1, 1, 1, 1, 1, 0 },
};

TEST(table)
{
	int from, to;

	for (from = 0; from < ITEM_NSTATES; from++)
		for (to = 0; to < ITEM_NSTATES; to++)
			if (pipe_state_allowed(from, to) != want[from][to])
				FAIL_AT("%s -> %s: allowed %d, want %d",
					item_state_name(from), item_state_name(to),
					pipe_state_allowed(from, to), want[from][to]);
	/* What must never be: an item that ends without running, an item
	 * made new again but by the end of a rerun. */
	ASSERT(!pipe_state_allowed(ITEM_WAITING, ITEM_DONE));
	ASSERT(!pipe_state_allowed(ITEM_NEW, ITEM_DONE));
	ASSERT(!pipe_state_allowed(ITEM_DONE, ITEM_NEW));
	ASSERT(!pipe_state_allowed(ITEM_FAILED, ITEM_NEW));
	ASSERT(pipe_state_allowed(ITEM_RUNNING, ITEM_NEW));
	/* Values out of range are refused both ways. */
	ASSERT(!pipe_state_allowed(ITEM_NSTATES, ITEM_RUNNING));
	ASSERT(!pipe_state_allowed(ITEM_RUNNING, ITEM_NSTATES));
	ASSERT(!pipe_state_allowed((enum item_state)-1, ITEM_QUEUED));
}

TEST(move)
{
	struct item it;

	memset(&it, 0, sizeof(it));
	it.name = "fix-1";
	it.state = ITEM_NEW;
	ASSERT_EQ(pipe__state_move(&it, ITEM_RUNNING), 0);
	ASSERT_EQ(it.state, ITEM_RUNNING);
	ASSERT_EQ(pipe__state_move(&it, ITEM_DONE), 0);
	ASSERT_EQ(it.state, ITEM_DONE);
	ASSERT_EQ(pipe__state_move(&it, ITEM_QUEUED), 0);
	ASSERT_EQ(it.state, ITEM_QUEUED);
}

/* A refused move: the child either stops on the assertion (SIGABRT) or,
 * built without assertions, gets -EINVAL with the state kept. */
TEST(refused)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct item it;
		int rc;

		memset(&it, 0, sizeof(it));
		it.name = "fix-1";
		it.state = ITEM_WAITING;
		rc = pipe__state_move(&it, ITEM_DONE);
		_exit(rc == -EINVAL && it.state == ITEM_WAITING ? 3 : 4);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
#ifdef NDEBUG
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 3);
#else
	ASSERT(WIFSIGNALED(status));
	ASSERT_EQ(WTERMSIG(status), SIGABRT);
#endif
}

int main(void)
{
	RUN(table);
	RUN(move);
	RUN(refused);
	return 0;
}
