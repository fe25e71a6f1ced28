/*
 * test-stmt.c - the statement layer of the store (store_int.h,
 * store_stmt.c) on a store's own connection: each letter of a bind format,
 * stepping, and the errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-stmt-XXXXXX";

static struct store *open_store(int create, int readonly)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(dir, create, readonly, &s, err, sizeof(err)), 0);
	return s;
}

/* The statement layer (store_int.h) on a store's own connection: each
 * letter of a bind format, stepping, and the errors. */
TEST(statements)
{
	static const char sql_all[] = "SELECT ?1, ?2, ?3, ?4, ?5, typeof(?6), ?7, typeof(?8), "
				      "typeof(?9), typeof(?10), typeof(?11)";
	static const char sql_one[] = "SELECT ?1 WHERE ?2";
	static const char sql_two[] = "SELECT 1 UNION ALL SELECT 2";
	static const char sql_put[] = "INSERT INTO meta(key, value) VALUES (?1, ?2)";
	struct store *s = open_store(1, 0);
	sqlite3_stmt *st;
	size_t len = 3;

	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__prepare(s, &st, sql_all, "Iidsbbtt-ss", (int64_t)1 << 40, -7, 2.5, "text",
				 "abc", len, NULL, (size_t)0, (int64_t)99, STORE_TIME_OMIT, NULL,
				 "x"),
		  0);
	ASSERT_EQ(store__step(s, st), 1);
	ASSERT_EQ(sqlite3_column_int64(st, 0), (int64_t)1 << 40);
	ASSERT_EQ(sqlite3_column_int(st, 1), -7);
	ASSERT(sqlite3_column_double(st, 2) == 2.5);
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 3), "text");
	ASSERT_EQ(sqlite3_column_type(st, 4), SQLITE_BLOB);
	ASSERT_EQ(sqlite3_column_bytes(st, 4), 3);
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 5), "null");
	ASSERT_EQ(sqlite3_column_int64(st, 6), 99);
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 7), "null");
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 8), "null");
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 9), "null");
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 10), "text");
	ASSERT_EQ(store__step(s, st), 0);
	store__done(st);

	/* store__first: a row, or -ENOENT. */
	ASSERT_EQ(store__first(s, &st, sql_one, "si", "yes", 1), 0);
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 0), "yes");
	store__done(st);
	ASSERT_EQ(store__first(s, &st, sql_one, "si", "no", 0), -ENOENT);
	store__done(st);
	ASSERT_EQ(store__prepare(s, &st, sql_two, ""), 0);
	ASSERT_EQ(store__step(s, st), 1);
	ASSERT_EQ(store__step(s, st), 1);
	ASSERT_EQ(store__step(s, st), 0);
	store__done(st);

	/* store__exec, and SQLite's codes as errno values. */
	ASSERT_EQ(store__exec(s, sql_put, "ss", "stmt-test", "1"), 0);
	ASSERT_EQ(sqlite3_changes(s->db), 1);
	ASSERT_EQ(store__exec(s, sql_put, "ss", "stmt-test", "2"), -EEXIST);
	ASSERT_EQ(store__exec(s, sql_put, "s-", "stmt-null"), -EEXIST); /* NOT NULL */

	/* A bad letter, a letter short or too many, SQL that does not prepare. */
	ASSERT_EQ(store__prepare(s, &st, sql_one, "sx", "a", 1), -EINVAL);
	ASSERT(st == NULL);
	ASSERT_EQ(store__prepare(s, &st, sql_one, "s", "a"), -EINVAL);
	ASSERT(st == NULL);
	ASSERT_EQ(store__prepare(s, &st, sql_one, "sii", "a", 1, 2), -EINVAL);
	ASSERT(st == NULL);
	ASSERT_EQ(store__prepare(s, &st, "SELECT FROM", ""), -EIO);
	ASSERT(st == NULL);
	store__done(st);
	/* The statement that failed to bind is whole again. */
	ASSERT_EQ(store__first(s, &st, sql_one, "si", "again", 1), 0);
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 0), "again");
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(statements))
