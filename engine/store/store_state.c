/*
 * store_state.c - the names of item states and run statuses (store.h): the
 * one table that maps each enum value to the string that SPEC §4 and §6,
 * the items and runs tables (schema/0013_states.sql checks them there) and
 * every view use. The store converts at its edge: rows are read into the
 * enums and written from them through these two tables. Also the check
 * that a store holds no other name before schema/0013_states.sql makes
 * them constraints.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store_int.h"

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

/* The index of name in names[0..n-1], or -1 (name NULL or not there). */
static int name_index(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; name && i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

const char *item_state_name(enum item_state state)
{
	return (unsigned)state < ITEM_NSTATES ? item_state_names[state] : "?";
}

int item_state_parse(const char *name, enum item_state *out)
{
	int i = name_index(item_state_names, ITEM_NSTATES, name);

	return i < 0 ? -EINVAL : (*out = (enum item_state)i, 0);
}

const char *run_status_name(enum run_status status)
{
	return (unsigned)status < RUN_NSTATUSES ? run_status_names[status] : "?";
}

int run_status_parse(const char *name, enum run_status *out)
{
	int i = name_index(run_status_names, RUN_NSTATUSES, name);

	return i < 0 ? -EINVAL : (*out = (enum run_status)i, 0);
}

/* The names of a table, "a, b, c", into out (size bytes). */
static void names_list(const char *const *names, int n, char *out, size_t size)
{
	size_t len = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
}

/* The SQL list of names, "('a', 'b')", into out (size bytes). */
static void names_sql(const char *const *names, int n, char *out, size_t size)
{
	size_t len = 0;
	int i;

	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s'%s'", i ? ", " : "(", names[i]);
	if (len < size)
		snprintf(out + len, size - len, ")");
}

/* Prepares the query fmt, whose %s is the SQL list of names[0..n), and
 * steps it once into *st (the caller finalizes *st, which may be NULL).
 * Not cached: made once per upgrade. Returns the SQLite result: SQLITE_ROW
 * for the first row outside the names, SQLITE_DONE when there is none. */
static int first_outside(struct store *s, const char *fmt, const char *const *names, int n,
			 sqlite3_stmt **st)
{
	char sql[512], in[256];
	int rc;

	names_sql(names, n, in, sizeof(in));
	snprintf(sql, sizeof(sql), fmt, in);
	rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	return rc == SQLITE_OK ? sqlite3_step(*st) : rc;
}

int store__states_check(struct store *s, char *err, size_t errlen)
{
	char list[256];
	sqlite3_stmt *st = NULL;
	int rc;

	rc = first_outside(s, "SELECT name, quote(state) FROM items WHERE state NOT IN %s "
			   "ORDER BY id LIMIT 1", item_state_names, ITEM_NSTATES, &st);
	if (rc == SQLITE_ROW) {
		names_list(item_state_names, ITEM_NSTATES, list, sizeof(list));
		snprintf(err, errlen, "cannot upgrade the store: item '%s' has the state %s, "
			 "none of %s", (const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1), list);
		sqlite3_finalize(st);
		return -EUCLEAN;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store__err(s, rc);
	rc = first_outside(s, "SELECT i.name, r.run_no, quote(r.status) FROM runs r "
			   "LEFT JOIN items i ON i.id = r.item_id WHERE r.status NOT IN %s "
			   "ORDER BY r.id LIMIT 1", run_status_names, RUN_NSTATUSES, &st);
	if (rc == SQLITE_ROW) {
		names_list(run_status_names, RUN_NSTATUSES, list, sizeof(list));
		snprintf(err, errlen, "cannot upgrade the store: run %d of item '%s' has the "
			 "status %s, none of %s", sqlite3_column_int(st, 1),
			 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "?",
			 (const char *)sqlite3_column_text(st, 2), list);
		sqlite3_finalize(st);
		return -EUCLEAN;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store__err(s, rc);
}
