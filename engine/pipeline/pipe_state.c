/*
 * pipe_state.c - the item state machine (SPEC §4 `state`), written down
 * once: which state may follow which, and on what event. Every change of
 * an item's state in the pipeline goes through pipe__state_move, which
 * checks this table; store.h names the states (enum item_state) and
 * schema/0013_states.sql keeps any other string out of the store.
 *
 *   from \ to  new  queued running waiting blocked failed done
 *   new          -     Q      S       A       G       C      -
 *   queued       -     Q      S       A       G      C,X     -
 *   waiting      -     Q      S       A       G       C      -
 *   blocked      -     Q      S       A       G       C      -
 *   failed       -     Q      S       A       G       C      -
 *   done         -     Q      S       A       G       C      -
 *   running      R    I,R    H,R     E,R     E,R    E,I,R   E,R
 *
 *   S  a stage starts (advance, run STAGE, a slot frees up, a round's
 *      timer), or `rerun` runs recipes of an item that is not running
 *   Q  a stage would start but max_parallel_items run already
 *   A  an approve gate waits for `approve`
 *   G  a gate refuses (the reason in last_error)
 *   C  a stage cannot start (no next stage, the store refused the run)
 *   X  `cancel` of a queued item
 *   E  a stage or a round ends: waiting (more stages to come, or the next
 *      round), blocked (review out of iterations, rounds out), failed, done
 *      (the last stage succeeded, or the plan's Disposition ended it)
 *   I  the daemon stopped a running stage or recovered one after a crash:
 *      queued or failed as on_interrupt says
 *   R  a rerun ends: the item goes back to the state it had when it began
 *   H  a round moved the branch head: its recipes run at the new head
 *
 * So: new is only where an item begins (store_item_create_owned; an import may
 * make an item in any state but running, outside the pipeline) and comes
 * back only at the end of a rerun that began there; done and new follow
 * running alone; nothing else is refused. A refused move is a bug of the
 * engine: it is logged, the item keeps its state, and a build with
 * assertions (the tests') stops on it.
 */
#include <assert.h>
#include <errno.h>
#include <syslog.h>

#include "pipe_int.h"

#define TO(s) (1u << (s))
/* The states an idle item may go to: each one on the events above. */
#define FROM_IDLE                                                                      \
	(TO(ITEM_QUEUED) | TO(ITEM_RUNNING) | TO(ITEM_WAITING) | TO(ITEM_BLOCKED) | \
	 TO(ITEM_FAILED))

/* allowed[from]: the states that may follow from, one bit each. */
static const unsigned allowed[ITEM_NSTATES] = {
	[ITEM_NEW] = FROM_IDLE,
	[ITEM_QUEUED] = FROM_IDLE,
	[ITEM_WAITING] = FROM_IDLE,
	[ITEM_BLOCKED] = FROM_IDLE,
	[ITEM_FAILED] = FROM_IDLE,
	[ITEM_DONE] = FROM_IDLE,
	/* A stage ends (waiting, blocked, failed, done), the daemon stops it
	 * (queued or failed), a rerun returns to where it began (any state
	 * but running), a round's new head has its recipes run (running). */
	[ITEM_RUNNING] = FROM_IDLE | TO(ITEM_NEW) | TO(ITEM_DONE),
};

int pipe_state_allowed(enum item_state from, enum item_state to)
{
	if ((unsigned)from >= ITEM_NSTATES || (unsigned)to >= ITEM_NSTATES)
		return 0;
	return (allowed[from] & TO(to)) != 0;
}

int pipe__state_move(struct item *it, enum item_state to)
{
	if (!pipe_state_allowed(it->state, to)) {
		util_log(LOG_ERR, "pipeline: %s: refused state change %s -> %s", it->name,
			 item_state_name(it->state), item_state_name(to));
		assert(!"an item state change the state machine refuses (pipe_state.c)");
		return -EINVAL;
	}
	it->state = to;
	return 0;
}
