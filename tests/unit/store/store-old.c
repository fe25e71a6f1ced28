/*
 * store-old.c - the store of an older packetfs made out of a current one
 * (store-old.h), for the tests of migrations.
 */
#include <stdio.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store_int.h"
#include "test.h"

void store_old_undo_compact(const char *dir)
{
	static const char sql_ids[] = "SELECT id FROM revisions WHERE enc != 0";
	static const char sql_put[] = "UPDATE revisions SET content = ?, enc = 0 WHERE id = ?";
	struct store *s = NULL;
	sqlite3_stmt *st;
	int64_t ids[4096];
	char path[256], err[256] = "", *data;
	size_t n = 0, i, len;
	sqlite3 *db;

	ASSERT_EQ(store_open(dir, 0, 0, &s, err, sizeof(err)), 0);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__prepare(s, &st, sql_ids, ""), 0);
	while (store__step(s, st) > 0 && n < sizeof(ids) / sizeof(ids[0]))
		ids[n++] = sqlite3_column_int64(st, 0);
	store__done(st);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(store__rev_content(s, ids[i], &data, &len), 0);
		ASSERT_EQ(store__exec(s, sql_put, "bI", data, len, ids[i]), 0);
		free(data);
	}
	pthread_mutex_unlock(&s->lock);
	store_close(s);

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE revisions DROP COLUMN enc;"
			       "ALTER TABLE revisions DROP COLUMN base;"
			       "ALTER TABLE revisions DROP COLUMN depth;"
			       "ALTER TABLE revisions DROP COLUMN seq;", NULL, NULL, NULL),
		  SQLITE_OK);
	sqlite3_close(db);
}
