/*
 * test-states.c - item states and run statuses in the store (store.h:
 * enum item_state, enum run_status; schema/0013_states.sql): the names
 * and their parsing, the CHECK constraints that refuse any other string
 * (SQLITE_CONSTRAINT), the store's API refusing a value out of range, and
 * the migration of a store of version 12: its rows, ids, logs and registry
 * kept, the constraints added, foreign keys on again; a store whose rows
 * hold an unknown state or status refused with the row named and left as
 * it was; the migration of a store of version 17 (schema/0018_check_lists.sql),
 * after which no statement of a hot path fills a table to check a value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "schema.h"
#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-states-XXXXXX";

/* The names as SPEC §4 and §6 spell them, in the enums' order. */
static const char *const item_names[] = { "new", "queued", "running", "waiting",
					  "blocked", "failed", "done" };
static const char *const run_names[] = { "queued", "running", "succeeded", "failed",
					 "validated", "failing", "blocked", "timed_out",
					 "cancelled", "interrupted" };

TEST(names)
{
	static const char *const bad[] = { "", "Running", "done ", "paused", "passed", "?" };
	enum item_state st;
	enum run_status rs;
	size_t i;

	ASSERT_EQ(sizeof(item_names) / sizeof(item_names[0]), ITEM_NSTATES);
	ASSERT_EQ(sizeof(run_names) / sizeof(run_names[0]), RUN_NSTATUSES);
	for (i = 0; i < ITEM_NSTATES; i++) {
		ASSERT_STREQ(item_state_name((enum item_state)i), item_names[i]);
		ASSERT_EQ(item_state_parse(item_names[i], &st), 0);
		ASSERT_EQ(st, i);
	}
	for (i = 0; i < RUN_NSTATUSES; i++) {
		ASSERT_STREQ(run_status_name((enum run_status)i), run_names[i]);
		ASSERT_EQ(run_status_parse(run_names[i], &rs), 0);
		ASSERT_EQ(rs, i);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st = ITEM_DONE;
		rs = RUN_FAILING;
		ASSERT_EQ(item_state_parse(bad[i], &st), -EINVAL);
		ASSERT_EQ(run_status_parse(bad[i], &rs), -EINVAL);
		ASSERT_EQ(st, ITEM_DONE); /* untouched */
		ASSERT_EQ(rs, RUN_FAILING);
	}
	ASSERT_EQ(item_state_parse(NULL, &st), -EINVAL);
	ASSERT_EQ(run_status_parse(NULL, &rs), -EINVAL);
	ASSERT_EQ(item_state_parse("succeeded", &st), -EINVAL); /* a run's, not an item's */
	ASSERT_EQ(run_status_parse("new", &rs), -EINVAL);
	ASSERT_STREQ(item_state_name(ITEM_NSTATES), "?");
	ASSERT_STREQ(item_state_name((enum item_state)-1), "?");
	ASSERT_STREQ(run_status_name(RUN_NSTATUSES), "?");
	ASSERT_STREQ(run_status_name(RUN_ANY), "?");
}

/* Adds a run of status st to item (run number no) with a log, and a
 * registry line naming it. */
static void add_run(struct store *s, int64_t item, int no, enum run_status st)
{
	struct run r;
	char log[64], line[96];

	memset(&r, 0, sizeof(r));
	r.item_id = item;
	r.run_no = no;
	strcpy(r.kind, no % 2 ? "stage" : "recipe");
	r.name = "01-build";
	snprintf(log, sizeof(log), "validation/logs/x-01-build-%d.log", no);
	r.log_path = log;
	r.status = st;
	strcpy(r.started_at, "2026-12-03T10:00:00Z");
	snprintf(line, sizeof(line), "log of run %d\n", no);
	ASSERT_EQ(store_carry_run(s, &r, line, strlen(line)), 0);
	snprintf(line, sizeof(line), "{\"run\":%d,\"status\":\"%s\"}", no, run_names[st]);
	ASSERT_EQ(store_registry_append(s, item, line, "engine", r.id), 0);
}

/* A new store with an item "st-N" in each state N and, on st-0, a run of
 * each status (run_no = status + 1), closed. */
static void make_store(void)
{
	struct store *s;
	struct item it;
	char name[16], cmd[128];
	int i;

	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir %s", dir, dir);
	ASSERT_EQ(system(cmd), 0);
	s = test_store_open(dir, 1, 0);
	for (i = 0; i < ITEM_NSTATES; i++) {
		snprintf(name, sizeof(name), "st-%d", i);
		ASSERT_EQ(store_item_create_owned(s, name, name, "main", STORE_ID_DEFAULT,
						  STORE_ID_DEFAULT, 0755, NULL), 0);
		ASSERT_EQ(store_item_get(s, name, &it), 0);
		ASSERT_EQ(it.state, ITEM_NEW);
		it.state = (enum item_state)i;
		ASSERT_EQ(store_item_update(s, &it), 0);
		if (i == 0)
			for (int k = 0; k < RUN_NSTATUSES; k++)
				add_run(s, it.id, k + 1, (enum run_status)k);
		item_clear(&it);
	}
	store_close(s);
}

static int check_run(void *arg, const struct run *r)
{
	char buf[64], want[64];
	ssize_t n;

	ASSERT_EQ(r->status, r->run_no - 1);
	snprintf(want, sizeof(want), "log of run %d\n", r->run_no);
	n = store_log_read(arg, r->id, 0, buf, sizeof(buf));
	ASSERT_EQ(n, (ssize_t)strlen(want));
	ASSERT(memcmp(buf, want, (size_t)n) == 0);
	return 0;
}

/* Every item has its state, every run its status and log, the registry
 * its lines. */
static void check_rows(struct store *s)
{
	struct item it;
	char name[16], **lines;
	size_t n;
	int i;

	for (i = 0; i < ITEM_NSTATES; i++) {
		snprintf(name, sizeof(name), "st-%d", i);
		ASSERT_EQ(store_item_get(s, name, &it), 0);
		ASSERT_EQ(it.state, i);
		ASSERT_STREQ(it.branch, name);
		item_clear(&it);
	}
	ASSERT_EQ(store_item_get(s, "st-0", &it), 0);
	ASSERT_EQ(store_run_each(s, it.id, NULL, RUN_ANY, check_run, s), 0);
	ASSERT_EQ(store_registry_raw_lines(s, it.id, &lines, &n), 0);
	ASSERT_EQ(n, RUN_NSTATUSES);
	ASSERT_CONTAINS(lines[RUN_TIMED_OUT], "\"status\":\"timed_out\"");
	strv_free(lines);
	item_clear(&it);
}

/* Runs sql on the closed store with a connection of its own: the SQLite
 * result code. */
static int raw(const char *sql)
{
	char path[256];
	sqlite3 *db;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		rc = sqlite3_extended_errcode(db);
	sqlite3_close(db);
	return rc;
}

/* The text of the first column of the first row of sql on the closed
 * store, into out. */
static void raw_text(const char *sql, char *out, size_t size)
{
	char path[256];
	sqlite3 *db;
	sqlite3_stmt *st;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
	snprintf(out, size, "%s", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
							     : "(null)");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* The constraints refuse what the enums do not name, on every path in. */
static void check_constraints(void)
{
	ASSERT_EQ(raw("UPDATE items SET state = 'paused' WHERE name = 'st-1'"),
		  SQLITE_CONSTRAINT_CHECK);
	ASSERT_EQ(raw("UPDATE items SET state = 'Running' WHERE name = 'st-1'"),
		  SQLITE_CONSTRAINT_CHECK);
	ASSERT_EQ(raw("INSERT INTO items(name, state, branch, base, created_at, updated_at) "
		      "VALUES ('x', 'archived', 'x', 'main', 'now', 'now')"),
		  SQLITE_CONSTRAINT_CHECK);
	ASSERT_EQ(raw("UPDATE runs SET status = 'passed' WHERE run_no = 1"),
		  SQLITE_CONSTRAINT_CHECK);
	ASSERT_EQ(raw("INSERT INTO runs(item_id, run_no, kind, name, iteration, status, log_path, "
		      "started_at) SELECT id, 99, 'recipe', 'r', 1, 'ok', 'l', 'now' FROM items "
		      "WHERE name = 'st-0'"),
		  SQLITE_CONSTRAINT_CHECK);
	ASSERT_EQ(raw("INSERT INTO registry(item_id, line, source) SELECT id, '{}', 'forged' "
		      "FROM items WHERE name = 'st-0'"),
		  SQLITE_CONSTRAINT_CHECK);
	/* and take what they name */
	ASSERT_EQ(raw("UPDATE items SET state = 'blocked' WHERE name = 'st-4'"), SQLITE_OK);
	ASSERT_EQ(raw("UPDATE runs SET status = 'timed_out' WHERE run_no = 8"), SQLITE_OK);
}

/* The statements of the hot paths that check a constraint: a registry
 * line, a run made and one updated, an item's state written. */
static const char *const checked[] = {
	"INSERT INTO registry(item_id, line, source) VALUES (1, '{}', 'external')",
	"INSERT INTO runs(item_id, run_no, kind, name, iteration, status, log_path, started_at) "
	"VALUES (1, 99, 'recipe', 'r', 1, 'queued', 'l', 'now')",
	"UPDATE runs SET status = 'validated' WHERE id = 1",
	"UPDATE items SET state = 'queued' WHERE id = 1",
};

/* The number of ephemeral tables the program of sql opens (EXPLAIN's
 * OpenEphemeral): what an IN list in a CHECK costs at every row. */
static int ephemeral_tables(const char *sql)
{
	char path[256], explain[512];
	sqlite3_stmt *st;
	sqlite3 *db;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	snprintf(explain, sizeof(explain), "EXPLAIN %s", sql);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, explain, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		n += strcmp((const char *)sqlite3_column_text(st, 1), "OpenEphemeral") == 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static int ephemeral_tables_all(void)
{
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(checked) / sizeof(checked[0]); i++)
		n += ephemeral_tables(checked[i]);
	return n;
}

TEST(check)
{
	struct store *s;
	struct item it;
	struct run r;
	char v[16];

	make_store();
	raw_text("SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof(v));
	ASSERT_EQ(atoi(v), schema_version);
	check_constraints();
	ASSERT_EQ(ephemeral_tables_all(), 0);
	s = test_store_open(dir, 0, 0);
	check_rows(s);
	/* The API refuses a value out of range before SQLite sees it. */
	ASSERT_EQ(store_item_get(s, "st-2", &it), 0);
	it.state = ITEM_NSTATES;
	ASSERT_EQ(store_item_update(s, &it), -EINVAL);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "st-2", &it), 0);
	ASSERT_EQ(it.state, ITEM_RUNNING);
	ASSERT_EQ(store_run_get(s, 1, &r), 0);
	r.status = RUN_ANY;
	ASSERT_EQ(store_run_update(s, &r), -EINVAL);
	r.status = RUN_NSTATUSES;
	ASSERT_EQ(store_carry_run(s, &r, "", 0), -EINVAL);
	run_clear(&r);
	ASSERT_EQ(store_run_get(s, 1, &r), 0);
	ASSERT_EQ(r.status, RUN_QUEUED);
	run_clear(&r);
	item_clear(&it);
	store_close(s);
}

TEST(migrate_12)
{
	struct store *s;
	sqlite3_stmt *st;
	char sql[4096];

	make_store();
	store_old_downgrade(dir, 12, NULL);
	raw_text("SELECT sql FROM sqlite_master WHERE name = 'items'", sql, sizeof(sql));
	ASSERT(strstr(sql, "CHECK") == NULL);
	/* Version 12 took any string (what the migration must look at). */
	ASSERT_EQ(raw("UPDATE runs SET status = 'passed' WHERE run_no = 1;"
		      "UPDATE runs SET status = 'queued' WHERE run_no = 1"), SQLITE_OK);
	s = test_store_open(dir, 0, 1); /* read-only: as it is */
	check_rows(s);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	check_rows(s);
	/* Foreign keys are on again after the upgrade turned them off. */
	pthread_mutex_lock(&s->lock); /* store__ helpers run under the store's lock */
	ASSERT_EQ(store__first(s, &st, "PRAGMA foreign_keys", ""), 0);
	ASSERT_EQ(sqlite3_column_int(st, 0), 1);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	store_close(s);
	raw_text("SELECT value FROM meta WHERE key = 'schema_version'", sql, sizeof(sql));
	ASSERT_EQ(atoi(sql), schema_version);
	raw_text("SELECT count(*) FROM pragma_foreign_key_check", sql, sizeof(sql));
	ASSERT_STREQ(sql, "0");
	check_constraints();
}

/* An upgrade that meets a row it cannot keep fails, naming it, and leaves
 * the store as it was: version 12, every row there. */
static void refused(const char *extra, const char *what)
{
	struct store *s = NULL;
	char err[512] = "", v[64];
	int rc;

	store_old_downgrade(dir, 12, extra);
	rc = store_open(dir, 0, 0, &s, err, sizeof(err));
	ASSERT_EQ(rc, -EUCLEAN);
	ASSERT(s == NULL);
	ASSERT_CONTAINS(err, what);
	ASSERT_CONTAINS(err, "cannot upgrade the store");
	raw_text("SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof(v));
	ASSERT_STREQ(v, "12");
	raw_text("SELECT count(*) FROM items", v, sizeof(v));
	ASSERT_STREQ(v, "8"); /* learnings and st-0 ... st-6 */
	raw_text("SELECT count(*) FROM runs", v, sizeof(v));
	ASSERT_STREQ(v, "10");
}

TEST(migrate_refused)
{
	struct store *s;
	struct item it;
	char v[64];

	make_store();
	refused("UPDATE items SET state = 'paused' WHERE name = 'st-3'",
		"item 'st-3' has the state 'paused', none of new, queued, running, waiting, "
		"blocked, failed, done");
	raw_text("SELECT state FROM items WHERE name = 'st-3'", v, sizeof(v));
	ASSERT_STREQ(v, "paused");
	/* A read-only open reads the store, but not that row. */
	s = test_store_open(dir, 0, 1);
	ASSERT_EQ(store_item_get(s, "st-3", &it), -EIO);
	ASSERT_EQ(store_item_get(s, "st-4", &it), 0);
	ASSERT_EQ(it.state, ITEM_BLOCKED);
	item_clear(&it);
	store_close(s);
	ASSERT_EQ(raw("UPDATE items SET state = 'waiting' WHERE name = 'st-3'"), SQLITE_OK);
	refused("UPDATE runs SET status = 'passed' WHERE run_no = 5",
		"run 5 of item 'st-0' has the status 'passed', none of queued, running, "
		"succeeded, failed, validated, failing, blocked, timed_out, cancelled, interrupted");
	ASSERT_EQ(raw("UPDATE runs SET status = 'validated' WHERE run_no = 5"), SQLITE_OK);
	s = test_store_open(dir, 0, 0);
	check_rows(s);
	store_close(s);
}

/* A store of version 4 goes through every migration to 13 (0013 among
 * them) with its states. */
TEST(migrate_4)
{
	struct store *s;
	char v[16];

	make_store();
	store_old_downgrade(dir, 4, NULL);
	s = test_store_open(dir, 0, 0);
	check_rows(s);
	store_close(s);
	raw_text("SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof(v));
	ASSERT_EQ(atoi(v), schema_version);
	check_constraints();
}

/* A store of version 17 (CHECKs as IN lists, an ephemeral table at every
 * row checked) is made again with the same rows, ids and constraints,
 * checked by comparisons. */
TEST(migrate_17)
{
	struct store *s;
	char v[16];

	make_store();
	store_old_downgrade(dir, 17, NULL);
	ASSERT_EQ(ephemeral_tables_all(), 4); /* one a statement: registry, runs twice, items */
	s = test_store_open(dir, 0, 1); /* read-only: as it is */
	check_rows(s);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	check_rows(s);
	store_close(s);
	raw_text("SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof(v));
	ASSERT_EQ(atoi(v), schema_version);
	raw_text("SELECT count(*) FROM pragma_foreign_key_check", v, sizeof(v));
	ASSERT_STREQ(v, "0");
	ASSERT_EQ(ephemeral_tables_all(), 0);
	check_constraints();
}

int main(void)
{
	char cmd[128];

	ASSERT(mkdtemp(dir) != NULL);
	RUN(names);
	RUN(check);
	RUN(migrate_12);
	RUN(migrate_refused);
	RUN(migrate_4);
	RUN(migrate_17);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
