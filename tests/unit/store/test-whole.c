/*
 * test-whole.c - the current revision's content rewritten in place
 * (store_retire.c, whole_store; schema/0015_whole_slots.sql): an append to a
 * 40 KB document commits a few pages to the WAL, not a new copy of the
 * document; content that grows past its row's room, shrinks far below it,
 * becomes empty and comes back reads back byte for byte, current and as
 * history, also after a reopen; a rename writes no new copy of the
 * content; a store of version 14 upgrades with every
 * revision reading back, and a read-only open reads it before that.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "store.h"
#include "store-old.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-whole-XXXXXX";
static const struct store_who who = {1000, 42, "sh", ""};
static int64_t item;

/* A WAL frame: a 4 KiB page and its 24-byte header. */
#define FRAME (4096 + 24)

/* The text of version k of a document that starts at 40 KB and grows by
 * one 52-byte line per version. */
static void grown(struct buf *b, int k)
{
	int i;

	buf_free(b);
	for (i = 1; i <= 800 + k; i++)
		ASSERT_EQ(buf_printf(b, "%06d appended line of the growing document, rev %05d\n", i,
				     i), 0);
}

static long long wal_size(void)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/packetfs.db-wal", dir);
	return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Every row of whole is named by one current revision and every slot
 * names a row: no row left behind, none shared. */
static void expect_slots(struct store *s)
{
	sqlite3_stmt *st;

	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__prepare(s, &st, "SELECT (SELECT count(*) FROM whole), (SELECT "
				 "count(DISTINCT slot) FROM revisions), (SELECT count(*) FROM "
				 "revisions WHERE slot IS NOT NULL), (SELECT count(*) FROM revisions r "
				 "WHERE slot IS NOT NULL AND (enc <> 0 OR NOT EXISTS (SELECT 1 FROM "
				 "whole w WHERE w.slot = r.slot)))", ""), 0);
	ASSERT_EQ(store__step(s, st), 1);
	ASSERT_EQ(sqlite3_column_int(st, 0), sqlite3_column_int(st, 1));
	ASSERT_EQ(sqlite3_column_int(st, 1), sqlite3_column_int(st, 2));
	ASSERT_EQ(sqlite3_column_int(st, 3), 0);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
}

static void put(struct store *s, const char *path, const void *data, size_t len)
{
	ASSERT_EQ(store_doc_write(s, item, path, data, len, (mode_t)-1, -1, "write", &who, NULL), 0);
}

/* 50 appends of a 52-byte line to a 40 KB document: at most 5 pages each
 * reach the WAL (the revisions rows and their index, the documents row,
 * the page of the document that changed, one more now and then: a page
 * split), where a new copy of the document took 10 pages and more, the
 * pages it freed on top (17 each). Every revision reads back. */
TEST(appends)
{
	struct store *s = test_store_open(dir, 0, 0);
	long long before, after;
	struct buf b;
	int k, n = 50;

	buf_init(&b);
	grown(&b, 0);
	put(s, "log.md", b.data, b.len);
	before = wal_size();
	for (k = 1; k <= n; k++) {
		grown(&b, k);
		put(s, "log.md", b.data, b.len);
	}
	after = wal_size();
	if (after < before || (after - before) / FRAME > 5 * n)
		FAIL_AT("%d appends wrote %lld WAL frames (%lld bytes before, %lld after)", n,
			(after - before) / FRAME, before, after);
	test_expect_rev(s, item, "log.md", 0, b.data, b.len);
	for (k = 0; k <= n; k++) {
		grown(&b, k);
		test_expect_rev(s, item, "log.md", k + 1, b.data, b.len);
	}
	expect_slots(s);
	store_close(s);
	buf_free(&b);
}

/* Grown past the room, shrunk far below it, emptied, written again, and
 * an amend of the current revision: each reads back, current and as
 * history, before and after a reopen. */
TEST(sizes)
{
	static const size_t sizes[] = {10, 60, 600, 9000, 200000, 200100, 30, 0, 0, 5000, 4999, 70000};
	const size_t n = sizeof(sizes) / sizeof(sizes[0]);
	struct store *s = test_store_open(dir, 0, 0);
	char *data = malloc(200100);
	struct doc_meta m;
	size_t i, j;
	int pass;

	ASSERT(data != NULL);
	for (i = 0; i < 200100; i++)
		data[i] = (char)('a' + (i * 7 + i / 13) % 26);
	for (i = 0; i < n; i++) {
		data[0] = (char)('A' + i); /* each revision its own bytes */
		put(s, "sizes.txt", data, sizes[i]);
		test_expect_rev(s, item, "sizes.txt", 0, data, sizes[i]);
	}
	ASSERT_EQ(store_doc_stat(s, item, "sizes.txt", &m), 0);
	data[0] = 'z';
	ASSERT_EQ(store_doc_amend(s, item, "sizes.txt", m.rev_id, data, 100, 0644, -1), 0);
	for (pass = 0; pass < 2; pass++) {
		test_expect_rev(s, item, "sizes.txt", 0, data, 100);
		for (j = 0; j < n; j++) {
			data[0] = (char)('A' + j);
			if (j < n - 1)
				test_expect_rev(s, item, "sizes.txt", (int)j + 1, data, sizes[j]);
		}
		data[0] = 'z';
		expect_slots(s);
		store_close(s);
		s = test_store_open(dir, 0, 0);
	}
	store_close(s);
	free(data);
}

/* A rename of a 200 KB document (a copy at the new name, a tombstone at
 * the old one): the copy takes the row of whole over with the same bytes,
 * so at most 12 pages reach the WAL, where writing the copy took 50 and
 * more. Both histories read back. */
TEST(rename)
{
	struct store *s = test_store_open(dir, 0, 0);
	long long before, after;
	char *data = malloc(200000);
	size_t i;

	ASSERT(data != NULL);
	for (i = 0; i < 200000; i++)
		data[i] = (char)('a' + (i * 11 + i / 17) % 26);
	put(s, "from.bin", data, 200000);
	before = wal_size();
	ASSERT_EQ(store_doc_rename(s, item, "from.bin", "to.bin", 0, &who, NULL), 0);
	after = wal_size();
	if (after < before || (after - before) / FRAME > 12)
		FAIL_AT("a rename wrote %lld WAL frames", (after - before) / FRAME);
	test_expect_rev(s, item, "to.bin", 0, data, 200000);
	test_expect_rev(s, item, "to.bin", 1, data, 200000);
	test_expect_rev(s, item, "from.bin", 1, data, 200000);
	expect_slots(s);
	store_close(s);
	free(data);
}

/* A store of version 14 (whole keyed by revision, unpadded, a row for
 * empty content too) reads through a read-only open, then upgrades; every
 * revision reads back, and appends after the upgrade do too, to a document
 * that was empty as well. */
TEST(upgrade)
{
	struct store *s = test_store_open(dir, 0, 0);
	struct buf b;
	int k, pass;

	buf_init(&b);
	for (k = 0; k < 5; k++) {
		grown(&b, k);
		put(s, "old.md", b.data, b.len);
	}
	put(s, "empty.md", "", 0);
	store_close(s);
	store_old_downgrade(dir, 14, NULL);
	for (pass = 0; pass < 2; pass++) {
		/* Read-only first (the store stays at 14), then upgraded. */
		s = test_store_open(dir, 0, pass == 0);
		for (k = 0; k < 5; k++) {
			grown(&b, k);
			test_expect_rev(s, item, "old.md", k + 1, b.data, b.len);
		}
		test_expect_rev(s, item, "old.md", 0, b.data, b.len);
		test_expect_rev(s, item, "empty.md", 0, "", 0);
		store_close(s);
	}
	s = test_store_open(dir, 0, 0);
	for (k = 5; k < 8; k++) {
		grown(&b, k);
		put(s, "old.md", b.data, b.len);
	}
	for (k = 0; k < 8; k++) {
		grown(&b, k);
		test_expect_rev(s, item, "old.md", k + 1, b.data, b.len);
	}
	put(s, "empty.md", "filled\n", 7);
	test_expect_rev(s, item, "empty.md", 0, "filled\n", 7);
	test_expect_rev(s, item, "empty.md", 1, "", 0);
	expect_slots(s);
	store_close(s);
	buf_free(&b);
}

int main(void)
{
	struct store *s;

	ASSERT(mkdtemp(dir) != NULL);
	s = test_store_new_item(dir, "whole", &item);
	store_close(s);
	RUN(appends);
	RUN(sizes);
	RUN(rename);
	RUN(upgrade);
	return test_rmtree(dir);
}
