/*
 * store-old.c - what the store tests share (store-old.h): opening a store,
 * and the store of an older packetfs made out of a current one, for the
 * tests of migrations (stores of a few thousand revisions at most).
 */
#include <stdio.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store_int.h"
#include "test.h"

struct store *test_store_open(const char *dir, int create, int readonly)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(dir, create, readonly, &s, err, sizeof(err)), 0);
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
	char path[256], err[256] = "";
	size_t n = 0, i;
	sqlite3 *db;

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

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "DROP TABLE whole;"
			       "ALTER TABLE revisions DROP COLUMN enc;"
			       "ALTER TABLE revisions DROP COLUMN base;"
			       "ALTER TABLE revisions DROP COLUMN depth;"
			       "ALTER TABLE revisions DROP COLUMN seq;", NULL, NULL, NULL),
		  SQLITE_OK);
	sqlite3_close(db);
}

/*
 * What each migration of schema/ added, undone: undo[v] takes a store of
 * version v + 1 back to version v (0007 xattrs ... 0002 times; 0008
 * compact, which needs the store to decode: store_old_undo_compact).
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
	[7] = "", /* 0008_compact: store_old_undo_compact */
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
	[12] = "ALTER TABLE items DROP COLUMN route;"
	       "ALTER TABLE items DROP COLUMN template;"
	       "ALTER TABLE items DROP COLUMN engine;"
	       "ALTER TABLE items DROP COLUMN review_request;",
};

void store_old_downgrade(const char *dir, int version, const char *extra)
{
	char path[256], sql[96];
	sqlite3 *db;
	int v;

	if (version <= 7)
		store_old_undo_compact(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	for (v = (int)(sizeof(undo) / sizeof(undo[0])) - 1; v >= version; v--)
		ASSERT_EQ(sqlite3_exec(db, undo[v], NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, extra ? extra : "", NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = 'schema_version';",
		 version);
	ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}
