/*
 * store_state.c - the names of item states and run statuses (store.h): the
 * one table that maps each enum value to the string that SPEC §4 and §6,
 * the items and runs tables (schema/0013_states.sql checks them there) and
 * every view use. The store converts at its edge: rows are read into the
 * enums and written from them through these two tables.
 */
#include <errno.h>
#include <string.h>

#include "store.h"

static const char *const item_state_names[ITEM_NSTATES] = {
	[ITEM_NEW] = "new",         [ITEM_QUEUED] = "queued",   [ITEM_RUNNING] = "running",
	[ITEM_WAITING] = "waiting", [ITEM_BLOCKED] = "blocked", [ITEM_FAILED] = "failed",
	[ITEM_DONE] = "done",
};

static const char *const run_status_names[RUN_NSTATUSES] = {
	[RUN_QUEUED] = "queued",       [RUN_RUNNING] = "running",
	[RUN_SUCCEEDED] = "succeeded", [RUN_FAILED] = "failed",
	[RUN_VALIDATED] = "validated", [RUN_FAILING] = "failing",
	[RUN_BLOCKED] = "blocked",     [RUN_TIMED_OUT] = "timed_out",
	[RUN_CANCELLED] = "cancelled", [RUN_INTERRUPTED] = "interrupted",
};

const char *item_state_name(enum item_state state)
{
	return (unsigned)state < ITEM_NSTATES ? item_state_names[state] : "?";
}

int item_state_parse(const char *name, enum item_state *out)
{
	int i;

	for (i = 0; name && i < ITEM_NSTATES; i++)
		if (strcmp(name, item_state_names[i]) == 0) {
			*out = (enum item_state)i;
			return 0;
		}
	return -EINVAL;
}

const char *run_status_name(enum run_status status)
{
	return (unsigned)status < RUN_NSTATUSES ? run_status_names[status] : "?";
}

int run_status_parse(const char *name, enum run_status *out)
{
	int i;

	for (i = 0; name && i < RUN_NSTATUSES; i++)
		if (strcmp(name, run_status_names[i]) == 0) {
			*out = (enum run_status)i;
			return 0;
		}
	return -EINVAL;
}
