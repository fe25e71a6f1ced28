/*
 * store-old.c - what the store tests share (store-old.h): opening a store
 * (with a new item), a new run, a revision's content checked, and the
 * store of an older packetfs made out of a current one, for the tests of
 * migrations (stores of a few thousand revisions at most).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

struct store *test_store_open(const char *dir, int create, int readonly)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(dir, create, readonly, &s, err, sizeof(err)), 0);
	return s;
}

struct store *test_store_new_item(const char *dir, const char *name, int64_t *id)
{
	struct store *s = test_store_open(dir, 1, 0);
	char branch[256];

	snprintf(branch, sizeof(branch), "packetfs/%s", name);
	ASSERT_EQ(store_item_create_owned(s, name, branch, "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, id), 0);
	return s;
}

void test_run_new(struct run *r, int64_t item_id, const char *kind, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->item_id = item_id;
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	r->name = strdup(name);
	ASSERT(r->name != NULL);
	r->status = RUN_RUNNING;
}

int64_t test_query(struct store *s, const char *sql, const char *path)
{
	sqlite3_stmt *st;
	int64_t v;

	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__prepare(s, &st, sql, "s", path), 0);
	ASSERT_EQ(store__step(s, st), 1);
	v = sqlite3_column_int64(st, 0);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return v;
}

void test_later_drain(struct store *s)
{
	int left;

	while ((left = store_later_run(s, 16)) > 0)
		;
	ASSERT_EQ(left, 0);
}

void test_expect_rev(struct store *s, int64_t item_id, const char *path, int rev,
		     const void *want, size_t wlen)
{
	size_t len;
	char *data;

	if (rev)
		ASSERT_EQ(store_rev_read(s, item_id, path, rev, &data, &len), 0);
	else
		ASSERT_EQ(store_doc_read(s, item_id, path, &data, &len), 0);
	ASSERT_EQ(len, wlen);
	ASSERT(len == 0 || memcmp(data, want, len) == 0); /* want may be NULL when empty */
	ASSERT_EQ(data[len], '\0');
	free(data);
}

struct store *test_store_item(const char *dir, int readonly, const char *name, struct item *it)
{
	struct store *s = test_store_open(dir, 0, readonly);

	ASSERT_EQ(store_item_get(s, name, it), 0);
	return s;
}

void store_old_undo_compact(const char *dir)
{
	static const char sql_ids[] = "SELECT id FROM revisions WHERE content IS NOT NULL";
	static const char sql_put[] = "UPDATE revisions SET content = ? WHERE id = ?";
	struct store *s = NULL;
	sqlite3_stmt *st;
	int64_t ids[8192];
	static char *datas[8192];
	static size_t lens[8192];
	char err[256] = "";
	size_t n = 0, i;

	ASSERT_EQ(store_open(dir, 0, 0, &s, err, sizeof(err)), 0);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__prepare(s, &st, sql_ids, ""), 0);
	while (store__step(s, st) > 0 && n < sizeof(ids) / sizeof(ids[0]))
		ids[n++] = sqlite3_column_int64(st, 0);
	store__done(st);
	/* Every content first: a delta's base is decoded from its stored form. */
	for (i = 0; i < n; i++)
		ASSERT_EQ(store__rev_content(s, ids[i], &datas[i], &lens[i]), 0);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(store__exec(s, sql_put, "bI", datas[i], lens[i], ids[i]), 0);
		free(datas[i]);
	}
	pthread_mutex_unlock(&s->lock);
	store_close(s);
}

/*
 * What each migration of schema/ added, undone: undo[v] takes a store of
 * version v + 1 back to version v (0020 retire later, 0019 whole pieces, 0018 check
 * lists, 0017 append runs, 0016 append revisions, 0015 whole slots ... 0002 times;
 * 0008 compact, which needs the store to decode: store_old_undo_compact).
 */
static const char *const undo[] = {
	[1] = "ALTER TABLE documents DROP COLUMN atime_ns;"
	      "ALTER TABLE items DROP COLUMN dir_mtime_ns;"
	      "ALTER TABLE items DROP COLUMN dir_ctime_ns;"
	      "ALTER TABLE items DROP COLUMN dir_atime_ns;",
	[2] = "ALTER TABLE runs DROP COLUMN job_id;"
	      "ALTER TABLE runs DROP COLUMN job_output;"
	      "ALTER TABLE runs DROP COLUMN job_offset;",
	[3] = "ALTER TABLE items DROP COLUMN verdict_head;"
	      "ALTER TABLE items DROP COLUMN assessment_head;",
	[4] = "ALTER TABLE items DROP COLUMN round;"
	      "ALTER TABLE items DROP COLUMN disposition;"
	      "DELETE FROM items WHERE name = 'learnings';",
	[5] = "ALTER TABLE documents DROP COLUMN uid;"
	      "ALTER TABLE documents DROP COLUMN gid;"
	      "ALTER TABLE items DROP COLUMN dir_uid;"
	      "ALTER TABLE items DROP COLUMN dir_gid;"
	      "ALTER TABLE items DROP COLUMN dir_mode;",
	[6] = "DROP TABLE xattrs;",
	/* 0008_compact: the contents put back by store_old_undo_compact */
	[7] = "DROP TABLE whole;"
	      "ALTER TABLE revisions DROP COLUMN enc;"
	      "ALTER TABLE revisions DROP COLUMN base;"
	      "ALTER TABLE revisions DROP COLUMN depth;"
	      "ALTER TABLE revisions DROP COLUMN seq;",
	[8] = "ALTER TABLE documents DROP COLUMN kind;"
	      "ALTER TABLE documents DROP COLUMN rdev;"
	      "ALTER TABLE revisions DROP COLUMN kind;"
	      "ALTER TABLE revisions DROP COLUMN rdev;",
	[9] = "DROP INDEX documents_link;"
	      "ALTER TABLE documents DROP COLUMN link;",
	/* 0011_carry: the registry as 0001_init made it (no imported row) */
	[10] = "CREATE TABLE registry_v10 (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL "
	       "REFERENCES items(id), line TEXT NOT NULL, source TEXT NOT NULL CHECK (source IN "
	       "('engine', 'external')), run_id INTEGER REFERENCES runs(id));"
	       "INSERT INTO registry_v10 SELECT id, item_id, line, source, run_id FROM registry "
	       "WHERE source <> 'imported';"
	       "DROP TABLE registry;"
	       "ALTER TABLE registry_v10 RENAME TO registry;"
	       "CREATE INDEX registry_item ON registry(item_id, id);"
	       "CREATE TRIGGER registry_no_update BEFORE UPDATE ON registry "
	       "BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;"
	       "CREATE TRIGGER registry_no_delete BEFORE DELETE ON registry "
	       "BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;",
	[11] = "DROP INDEX documents_dirs;",
	/* 0013_states: items and runs as before, without their CHECKs */
	[12] = "CREATE TABLE items_v12 (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
	       "title TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'new', "
	       "stage TEXT NOT NULL DEFAULT '', stage_ok INTEGER NOT NULL DEFAULT 0, "
	       "iteration INTEGER NOT NULL DEFAULT 1, branch TEXT NOT NULL, base TEXT NOT NULL, "
	       "verdict TEXT NOT NULL DEFAULT '', assessment TEXT NOT NULL DEFAULT '', "
	       "hold INTEGER NOT NULL DEFAULT 0, approved INTEGER NOT NULL DEFAULT 0, "
	       "last_error TEXT NOT NULL DEFAULT '', last_result TEXT NOT NULL DEFAULT '', "
	       "archived INTEGER NOT NULL DEFAULT 0, run_seq INTEGER NOT NULL DEFAULT 0, "
	       "created_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
	       "dir_mtime_ns INTEGER NOT NULL DEFAULT 0, dir_ctime_ns INTEGER NOT NULL DEFAULT 0, "
	       "dir_atime_ns INTEGER NOT NULL DEFAULT 0, verdict_head TEXT NOT NULL DEFAULT '', "
	       "assessment_head TEXT NOT NULL DEFAULT '', round INTEGER NOT NULL DEFAULT 0, "
	       "disposition TEXT NOT NULL DEFAULT '', dir_uid INTEGER NOT NULL DEFAULT -1, "
	       "dir_gid INTEGER NOT NULL DEFAULT -1, dir_mode INTEGER NOT NULL DEFAULT 493);"
	       "INSERT INTO items_v12 SELECT * FROM items ORDER BY id;"
	       "DROP TABLE items;"
	       "ALTER TABLE items_v12 RENAME TO items;"
	       "CREATE TABLE runs_v12 (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL "
	       "REFERENCES items(id), run_no INTEGER NOT NULL, kind TEXT NOT NULL CHECK (kind IN "
	       "('stage', 'recipe')), name TEXT NOT NULL, iteration INTEGER NOT NULL, "
	       "status TEXT NOT NULL, command TEXT NOT NULL DEFAULT '', log_path TEXT NOT NULL, "
	       "pgid INTEGER NOT NULL DEFAULT 0, exit_code INTEGER, signal INTEGER, "
	       "note TEXT NOT NULL DEFAULT '', head TEXT NOT NULL DEFAULT '', "
	       "gpus TEXT NOT NULL DEFAULT '[]', executor TEXT NOT NULL DEFAULT 'local', "
	       "started_at TEXT NOT NULL, finished_at TEXT, duration_s REAL, "
	       "log_size INTEGER NOT NULL DEFAULT 0, log_sha256 TEXT NOT NULL DEFAULT '', "
	       "job_id TEXT NOT NULL DEFAULT '', job_output TEXT NOT NULL DEFAULT '', "
	       "job_offset INTEGER NOT NULL DEFAULT 0, UNIQUE (item_id, run_no));"
	       "INSERT INTO runs_v12 SELECT * FROM runs ORDER BY id;"
	       "DROP TABLE runs;"
	       "ALTER TABLE runs_v12 RENAME TO runs;",
	[13] = "ALTER TABLE items DROP COLUMN route;"
	       "ALTER TABLE items DROP COLUMN template;"
	       "ALTER TABLE items DROP COLUMN engine;"
	       "ALTER TABLE items DROP COLUMN review_request;",
	/* 0015_whole_slots: whole keyed by revision, its content unpadded */
	[14] = "CREATE TABLE whole_v14 (rev_id INTEGER PRIMARY KEY, content BLOB NOT NULL);"
	       "INSERT INTO whole_v14 SELECT r.id, substr(w.content, 1, r.size) FROM whole w "
	       "JOIN revisions r ON r.slot = w.slot;"
	       "INSERT INTO whole_v14 SELECT id, X'' FROM revisions WHERE enc = 0 AND content "
	       "IS NOT NULL AND slot IS NULL;"
	       "DROP TABLE whole;"
	       "ALTER TABLE whole_v14 RENAME TO whole;"
	       "ALTER TABLE revisions DROP COLUMN slot;",
	/* 0016_append_revisions: no table changed (a store made by a test has
	 * no revision stored as an append until it is written through again) */
	[15] = "",
	/* 0017_append_runs */
	[16] = "ALTER TABLE revisions DROP COLUMN grown_from;",
	/* 0018_check_lists: the three tables with their CHECKs as IN lists, as
	 * 0011 and 0013 made them (the same columns in the same order) */
	[17] = "CREATE TABLE items_v17 (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
	       "title TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'new' CHECK (state "
	       "IN ('new', 'queued', 'running', 'waiting', 'blocked', 'failed', 'done')), "
	       "stage TEXT NOT NULL DEFAULT '', stage_ok INTEGER NOT NULL DEFAULT 0, "
	       "iteration INTEGER NOT NULL DEFAULT 1, branch TEXT NOT NULL, base TEXT NOT NULL, "
	       "verdict TEXT NOT NULL DEFAULT '', assessment TEXT NOT NULL DEFAULT '', "
	       "hold INTEGER NOT NULL DEFAULT 0, approved INTEGER NOT NULL DEFAULT 0, "
	       "last_error TEXT NOT NULL DEFAULT '', last_result TEXT NOT NULL DEFAULT '', "
	       "archived INTEGER NOT NULL DEFAULT 0, run_seq INTEGER NOT NULL DEFAULT 0, "
	       "created_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
	       "dir_mtime_ns INTEGER NOT NULL DEFAULT 0, dir_ctime_ns INTEGER NOT NULL DEFAULT 0, "
	       "dir_atime_ns INTEGER NOT NULL DEFAULT 0, verdict_head TEXT NOT NULL DEFAULT '', "
	       "assessment_head TEXT NOT NULL DEFAULT '', round INTEGER NOT NULL DEFAULT 0, "
	       "disposition TEXT NOT NULL DEFAULT '', dir_uid INTEGER NOT NULL DEFAULT -1, "
	       "dir_gid INTEGER NOT NULL DEFAULT -1, dir_mode INTEGER NOT NULL DEFAULT 493, "
	       "route TEXT NOT NULL DEFAULT '', template TEXT NOT NULL DEFAULT '', "
	       "engine TEXT NOT NULL DEFAULT '', review_request TEXT NOT NULL DEFAULT '');"
	       "INSERT INTO items_v17 SELECT * FROM items ORDER BY id;"
	       "DROP TABLE items;"
	       "ALTER TABLE items_v17 RENAME TO items;"
	       "CREATE TABLE runs_v17 (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL "
	       "REFERENCES items(id), run_no INTEGER NOT NULL, kind TEXT NOT NULL CHECK (kind IN "
	       "('stage', 'recipe')), name TEXT NOT NULL, iteration INTEGER NOT NULL, "
	       "status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', "
	       "'failed', 'validated', 'failing', 'blocked', 'timed_out', 'cancelled', "
	       "'interrupted')), command TEXT NOT NULL DEFAULT '', log_path TEXT NOT NULL, "
	       "pgid INTEGER NOT NULL DEFAULT 0, exit_code INTEGER, signal INTEGER, "
	       "note TEXT NOT NULL DEFAULT '', head TEXT NOT NULL DEFAULT '', "
	       "gpus TEXT NOT NULL DEFAULT '[]', executor TEXT NOT NULL DEFAULT 'local', "
	       "started_at TEXT NOT NULL, finished_at TEXT, duration_s REAL, "
	       "log_size INTEGER NOT NULL DEFAULT 0, log_sha256 TEXT NOT NULL DEFAULT '', "
	       "job_id TEXT NOT NULL DEFAULT '', job_output TEXT NOT NULL DEFAULT '', "
	       "job_offset INTEGER NOT NULL DEFAULT 0, UNIQUE (item_id, run_no));"
	       "INSERT INTO runs_v17 SELECT * FROM runs ORDER BY id;"
	       "DROP TABLE runs;"
	       "ALTER TABLE runs_v17 RENAME TO runs;"
	       "CREATE TABLE registry_v17 (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL "
	       "REFERENCES items(id), line TEXT NOT NULL, source TEXT NOT NULL CHECK (source IN "
	       "('engine', 'external', 'imported')), run_id INTEGER REFERENCES runs(id), "
	       "why TEXT NOT NULL DEFAULT '');"
	       "INSERT INTO registry_v17 SELECT * FROM registry ORDER BY id;"
	       "DROP TABLE registry;"
	       "ALTER TABLE registry_v17 RENAME TO registry;"
	       "CREATE INDEX registry_item ON registry(item_id, id);"
	       "CREATE TRIGGER registry_no_update BEFORE UPDATE ON registry "
	       "BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;"
	       "CREATE TRIGGER registry_no_delete BEFORE DELETE ON registry "
	       "BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;",
	/* 0019_whole_pieces (a store made by a test to be downgraded holds no
	 * piece: its documents are shorter than WHOLE_PIECE) */
	[18] = "DROP TRIGGER whole_pieces_gone;"
	       "DROP TABLE whole_pieces;",
	/* 0020_retire_later (a closed store has no revision waiting:
	 * store_close retired them) */
	[19] = "DROP TRIGGER retire_later_gone;"
	       "DROP TABLE retire_later;",
};

void store_old_downgrade(const char *dir, int version, const char *extra)
{
	char path[256], sql[96];
	sqlite3_stmt *st;
	sqlite3 *db;
	int v, from;

	if (version <= 7)
		store_old_undo_compact(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	/* From the store's own version down: a store downgraded before (or
	 * whose upgrade was refused) is not undone twice. */
	ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = "
				     "'schema_version'", -1, &st, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
	from = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (from > (int)(sizeof(undo) / sizeof(undo[0])))
		from = (int)(sizeof(undo) / sizeof(undo[0]));
	for (v = from - 1; v >= version; v--)
		ASSERT_EQ(sqlite3_exec(db, undo[v], NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, extra ? extra : "", NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = 'schema_version';",
		 version);
	ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}
