/*
 * test-revisions.c - how the store keeps revisions (store_rev.c): the
 * current revision whole, every other one encoded once it stops being
 * current (a write, an editor's save by rename, an unlink), each reading
 * back byte for byte; chains of deltas no deeper than the skip-delta bound;
 * a document grown by appends taking a small multiple of its final size,
 * each append stored as its suffix; appends and edits mixed in one chain;
 * an in-place amend; a temp-file save carried by its maker's process; a
 * damaged or missing base reported as EIO, not as wrong content. (A store
 * of an older version converted: test-store.c.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-revs-XXXXXX";
static const struct store_who who = {1000, 42, "sh", ""};
static struct store *s;
static int64_t item;

/* The text of version k of a document that grows by one 52-byte line per
 * version (k = 0: empty). */
static void grown(struct buf *b, int k)
{
	int i;

	buf_free(b);
	for (i = 1; i <= k; i++)
		ASSERT_EQ(buf_printf(b, "%06d appended line of the growing document, rev %05d\n", i,
				     i), 0);
	ASSERT_EQ(buf_printf(b, "%s", ""), 0);
}

/* One integer the SQL gives (path bound to ?1). */
static int64_t query(const char *sql, const char *path)
{
	return test_query(s, sql, path);
}

/* How many content revisions of path are deeper than popcount(seq - 1). */
static int too_deep(const char *path)
{
	sqlite3_stmt *st;
	int n = 0;

	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__prepare(s, &st, "SELECT seq, depth FROM revisions WHERE path = ? AND "
				 "content IS NOT NULL", "s", path), 0);
	while (store__step(s, st) > 0)
		if (sqlite3_column_int(st, 1) >
		    __builtin_popcountll((unsigned long long)sqlite3_column_int64(st, 0) - 1))
			n++;
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void expect_rev(const char *path, int rev, const void *want, size_t wlen)
{
	test_expect_rev(s, item, path, rev, want, wlen);
}

/* 1,000 appends: every revision reads back; only the current one is whole;
 * every other one but the first is an append (its suffix alone); each depth
 * is at most popcount(seq - 1); the revisions take less than 4 times the
 * final size (whole, they would take 500 times). */
TEST(appends)
{
	static const char sql_bytes[] = "SELECT sum(length(content)) FROM revisions WHERE path = ?1";
	static const char sql_whole[] = "SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0";
	static const char sql_max[] = "SELECT max(depth) FROM revisions WHERE path = ?1";
	static const char sql_append[] = "SELECT count(*) FROM revisions WHERE path = ?1 AND "
					 "enc = 4";
	struct buf b;
	int k, n = 1000;

	buf_init(&b);
	for (k = 1; k <= n; k++) {
		grown(&b, k);
		ASSERT_EQ(store_doc_write(s, item, "log.md", b.data, b.len, (mode_t)-1, -1, "write",
					  &who, NULL), 0);
	}
	pthread_mutex_lock(&s->lock);
	store__rev_forget(s); /* decoded from the store, not from memory */
	pthread_mutex_unlock(&s->lock);
	for (k = 1; k <= n; k++) {
		grown(&b, k);
		expect_rev("log.md", k, b.data, b.len);
	}
	ASSERT_EQ(query(sql_whole, "log.md"), 1);
	ASSERT_EQ(query(sql_append, "log.md"), n - 2);
	ASSERT_EQ(too_deep("log.md"), 0);
	ASSERT(query(sql_max, "log.md") >= 5);
	ASSERT(query(sql_max, "log.md") <= 9);
	if (query(sql_bytes, "log.md") > 4 * (int64_t)b.len)
		FAIL_AT("%lld bytes of revisions for a %zu-byte document",
			(long long)query(sql_bytes, "log.md"), b.len);
	buf_free(&b);
}

/* Version k of a document that grows by one line per version and has one
 * of its first lines rewritten every third version: appends and edits in
 * one chain of revisions. */
static void edited(struct buf *b, int k)
{
	grown(b, k);
	if (k % 3 == 0 && b->len > 6)
		memcpy(b->data, "edited", 6);
	if (k % 6 == 0 && b->len > 60)
		memcpy(b->data + 53, "EDITED", 6);
}

/* Appends and edits mixed: an append whose base is an edit's delta and an
 * edit whose base is an append both read back, from the store; both kinds
 * are there. */
TEST(appends_and_edits)
{
	struct buf b;
	int k, n = 300;

	buf_init(&b);
	for (k = 1; k <= n; k++) {
		edited(&b, k);
		ASSERT_EQ(store_doc_write(s, item, "mixed.md", b.data, b.len, (mode_t)-1, -1,
					  "write", &who, NULL), 0);
	}
	pthread_mutex_lock(&s->lock);
	store__rev_forget(s);
	pthread_mutex_unlock(&s->lock);
	for (k = n; k >= 1; k--) {
		edited(&b, k);
		expect_rev("mixed.md", k, b.data, b.len);
	}
	ASSERT(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 4", "mixed.md") > 0);
	ASSERT(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 3", "mixed.md") > 0);
	ASSERT_EQ(too_deep("mixed.md"), 0);
	buf_free(&b);
}

/* Editor saves (write a temporary file, rename it over the document),
 * unlinks and re-creation, a tiny revision (kept as it is), an empty one,
 * an amend of the current revision: all read back. */
TEST(saves_and_unlinks)
{
	struct buf b, t;
	char *data;
	size_t len;
	int k, n = 60;

	buf_init(&b);
	buf_init(&t);
	for (k = 1; k <= n; k++) {
		grown(&b, 100 + k);
		ASSERT_EQ(store_doc_write(s, item, ".doc.swp", b.data, b.len, 0600, -1, "create",
					  &who, NULL), 0);
		ASSERT_EQ(store_doc_rename(s, item, ".doc.swp", "doc", 0, &who, NULL), 0);
	}
	for (k = 1; k <= n; k++) {
		grown(&b, 100 + k);
		expect_rev("doc", k, b.data, b.len);
		expect_rev(".doc.swp", 2 * k - 1, b.data, b.len);
		ASSERT_EQ(store_rev_read(s, item, ".doc.swp", 2 * k, &data, &len), -ENOENT);
	}
	test_later_drain(s);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0 AND content IS NOT NULL", "doc"), 1);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0 AND content IS NOT NULL", ".doc.swp"), 0);

	/* Unlinked: its last revision is encoded too, and a new document at
	 * the path starts over from it. */
	ASSERT_EQ(store_doc_unlink(s, item, "doc", &who), 0);
	test_later_drain(s);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0 AND content IS NOT NULL", "doc"), 0);
	ASSERT_EQ(store_doc_write(s, item, "doc", "x", 1, (mode_t)-1, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, item, "doc", "", 0, (mode_t)-1, -1, "write", &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, item, "doc", "yz", 2, (mode_t)-1, -1, "write", &who, NULL), 0);
	expect_rev("doc", n, b.data, b.len);
	expect_rev("doc", n + 2, "x", 1);
	expect_rev("doc", n + 3, "", 0);
	expect_rev("doc", n + 4, "yz", 2);
	/* seq numbers the content revisions alone: the tombstone has 0, and the
	 * content after it goes on from the last content revision's. */
	ASSERT_EQ(query("SELECT seq FROM revisions WHERE path = ?1 AND rev = 61", "doc"), 0);
	ASSERT_EQ(query("SELECT seq FROM revisions WHERE path = ?1 AND rev = 62", "doc"), n + 1);
	ASSERT_EQ(query("SELECT seq FROM revisions WHERE path = ?1 AND rev = 64", "doc"), n + 3);
	/* "x" cannot be made smaller: kept as it is. */
	ASSERT_EQ(query("SELECT enc FROM revisions WHERE path = ?1 AND rev = 62", "doc"), 1);

	/* An amend replaces the current revision in place. */
	ASSERT_EQ(store_doc_amend(s, item, "doc",
				  query("SELECT rev_id FROM documents WHERE path = ?1", "doc"), "abc", 3,
				  0644, -1), 0);
	expect_rev("doc", n + 4, "abc", 3);
	ASSERT_EQ(store_doc_read(s, item, "doc", &data, &len), 0);
	ASSERT_STREQ(data, "abc");
	free(data);
	buf_free(&b);
	buf_free(&t);
}

/* Saves that carry the temp name's life (STORE_RENAME_CARRY): each one
 * revision of the document, decoded as written, the temp name without
 * revisions; onto a free name too. A backup by rename that a new document
 * replaced, then removed, and an empty probe removed by its maker leave no
 * history; removed by another process, a probe keeps it. */
TEST(carried_saves)
{
	static const struct store_who other = {1000, 43, "rm", ""};
	struct buf b;
	char *data;
	size_t len;
	int k, n = 40;

	buf_init(&b);
	grown(&b, 1);
	ASSERT_EQ(store_doc_write(s, item, "plan", b.data, b.len, 0644, -1, "create", &who, NULL), 0);
	for (k = 2; k <= n; k++) {
		grown(&b, k);
		ASSERT_EQ(store_doc_write(s, item, "plan.tmp.1.a", b.data, b.len, 0644, -1, "create",
					  &who, NULL), 0);
		ASSERT_EQ(store_doc_rename(s, item, "plan.tmp.1.a", "plan", STORE_RENAME_CARRY, &who, NULL),
			  0);
	}
	for (k = 1; k <= n; k++) {
		grown(&b, k);
		expect_rev("plan", k, b.data, b.len);
	}
	ASSERT_EQ(store_rev_read(s, item, "plan", n + 1, &data, &len), -ENOENT);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "plan.tmp.1.a"), 0);
	ASSERT_EQ(query("SELECT max(seq) FROM revisions WHERE path = ?1", "plan"), n);
	ASSERT_EQ(too_deep("plan"), 0);
	ASSERT_EQ(store_doc_read(s, item, "plan", &data, &len), 0);
	ASSERT_EQ(len, b.len);
	free(data);

	/* Onto a free name. */
	ASSERT_EQ(store_doc_write(s, item, "new.tmp", "new", 3, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, item, "new.tmp", "new", STORE_RENAME_CARRY, &who, NULL), 0);
	expect_rev("new", 1, "new", 3);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "new.tmp"), 0);

	/* vim's writebackup: rename away, a new document, the backup removed. */
	ASSERT_EQ(store_doc_write(s, item, "vdoc", "v1", 2, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, item, "vdoc", "vdoc~", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, item, "vdoc", "v2", 2, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, item, "vdoc~", &who), 0);
	expect_rev("vdoc", 1, "v1", 2);
	expect_rev("vdoc", 2, "v2", 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "vdoc"), 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "vdoc~"), 0);
	/* Renamed away and removed with no new document: history kept. */
	ASSERT_EQ(store_doc_rename(s, item, "vdoc", "vdoc~", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, item, "vdoc~", &who), 0);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "vdoc~"), 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "vdoc"), 3);

	/* Probes. */
	ASSERT_EQ(store_doc_write(s, item, "4913", "", 0, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, item, "4913", &who), 0);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "4913"), 0);
	ASSERT_EQ(store_doc_write(s, item, "4913", "", 0, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, item, "4913", &other), 0);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "4913"), 2);
	buf_free(&b);
}

/* A delta (enc 3, or 4: an append) of path whose bytes are damaged, or
 * whose base is gone, reads as EIO. */
/* A rename with STORE_RENAME_SAVE by the thread that made the temp name,
 * by another thread of its process: a carry (one revision, the temp name
 * without history); by another process, or of a name whose life did not
 * begin with a create: a copy and a tombstone. */
struct save_by {
	const char *from, *to;
	int rc;
};

static void *rename_from_thread(void *arg)
{
	struct save_by *a = arg;
	struct store_who w = {1000, (pid_t)gettid(), "node", ""};

	a->rc = store_doc_rename(s, item, a->from, a->to, STORE_RENAME_SAVE, &w, NULL);
	return NULL;
}

TEST(saves_by_process)
{
	struct store_who self = {1000, getpid(), "python3", ""};
	struct store_who init = {0, 1, "init", ""};
	struct save_by a = {"t.tmp", "t", -1};
	pthread_t th;

	ASSERT_EQ(store_doc_write(s, item, "t", "t1", 2, 0644, -1, "create", &self, NULL), 0);
	ASSERT_EQ(store_doc_write(s, item, "t.tmp", "t2", 2, 0644, -1, "create", &self, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, item, "t.tmp", "t", STORE_RENAME_SAVE, &self, NULL), 0);
	expect_rev("t", 2, "t2", 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "t.tmp"), 0);

	/* Another thread of this process. */
	ASSERT_EQ(store_doc_write(s, item, "t.tmp", "t3", 2, 0644, -1, "create", &self, NULL), 0);
	ASSERT_EQ(pthread_create(&th, NULL, rename_from_thread, &a), 0);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	ASSERT_EQ(a.rc, 0);
	expect_rev("t", 3, "t3", 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "t.tmp"), 0);

	/* Made by another process (pid 1): history kept at both names. */
	ASSERT_EQ(store_doc_write(s, item, "t.tmp", "t4", 2, 0644, -1, "create", &init, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, item, "t.tmp", "t", STORE_RENAME_SAVE, &self, NULL), 0);
	expect_rev("t", 4, "t4", 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "t.tmp"), 2);

	/* A name with an earlier life, ended by a tombstone (the rename's
	 * above): the new life alone goes, numbered after t's. */
	ASSERT_EQ(store_doc_write(s, item, "t.tmp", "t5", 2, 0644, -1, "create", &self, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, item, "t.tmp", "t", STORE_RENAME_SAVE, &self, NULL), 0);
	expect_rev("t", 5, "t5", 2);
	expect_rev("t.tmp", 1, "t4", 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "t.tmp"), 2);

	/* A life that began with a rename, not a create: mv of a document
	 * (by another process first, so that u's life is that rename's copy). */
	ASSERT_EQ(store_doc_rename(s, item, "t", "u", STORE_RENAME_SAVE, &init, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, item, "u", "v", STORE_RENAME_SAVE, &self, NULL), 0);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "u"), 2);
	expect_rev("v", 1, "t5", 2);
}

/* The waiting revisions of path ?1. */
#define WAITING "SELECT count(*) FROM retire_later WHERE rev_id IN (SELECT id FROM revisions " \
		"WHERE path = ?1)"

/* n saves of "later" by a temp file renamed over it, versions 1..n. */
static void saved_later(struct buf *b, int n)
{
	for (int k = 1; k <= n; k++) {
		grown(b, k);
		ASSERT_EQ(store_doc_write(s, item, "later.tmp", b->data, b->len, 0644, -1, "create",
					  &who, NULL), 0);
		ASSERT_EQ(store_doc_rename(s, item, "later.tmp", "later", STORE_RENAME_CARRY, &who,
					   NULL), 0);
	}
}

/* The revision a rename over a document or an unlink ends waits to be
 * retired: whole in its row of whole and read back as it was. A write
 * that retires a revision whose base waits retires that base first (no
 * delta deeper than its bound); a revision deleted takes its waiting row
 * with it; the thread of a store opened on waiting rows retires them once
 * no commit comes. */
TEST(retired_later)
{
	struct store *other;
	struct buf b;
	int k;

	test_later_drain(s);
	store__later_hold(s, 1);
	buf_init(&b);
	saved_later(&b, 6);
	ASSERT_EQ(query(WAITING, "later"), 5);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0 AND "
			"slot IS NOT NULL", "later"), 6);
	for (k = 1; k <= 6; k++) {
		grown(&b, k);
		expect_rev("later", k, b.data, b.len);
	}
	/* A write retires revision 6, whose base waits: its bases go first. */
	grown(&b, 7);
	ASSERT_EQ(store_doc_write(s, item, "later", b.data, b.len, 0644, -1, "write", &who, NULL),
		  0);
	ASSERT_EQ(query(WAITING " AND rev_id IN (SELECT base FROM revisions WHERE path = ?1)",
			"later"), 0);
	ASSERT_EQ(too_deep("later"), 0);
	for (k = 1; k <= 7; k++) {
		grown(&b, k);
		expect_rev("later", k, b.data, b.len);
	}
	/* An unlink: the current revision waits; a revision deleted (the
	 * store's own statement, as gc's) takes its row with it. */
	ASSERT_EQ(store_doc_unlink(s, item, "later", &who), 0);
	ASSERT(query(WAITING, "later") >= 1);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__exec(s, "DELETE FROM revisions WHERE id = (SELECT max(rev_id) FROM "
			      "retire_later)", ""), 0);
	pthread_mutex_unlock(&s->lock);
	ASSERT_EQ(query("SELECT count(*) FROM retire_later WHERE rev_id NOT IN (SELECT id FROM "
			"revisions) AND ?1 IS NOT NULL", "x"), 0);
	/* Waiting rows that another connection left (as a daemon killed with
	 * them waiting would): a store opened on them retires them once no
	 * commit comes, while this one's thread is still held. */
	saved_later(&b, 3);
	ASSERT_EQ(query(WAITING, "later"), 2);
	other = test_store_open(dir, 0, 0);
	for (k = 0; k < 500 && test_query(other, WAITING, "later") > 0; k++)
		usleep(20000);
	ASSERT_EQ(test_query(other, WAITING, "later"), 0);
	store_close(other);
	store__later_hold(s, 0);
	/* Whole in a row of whole: the current revision alone. */
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0 AND "
			"slot IS NOT NULL", "later"), 1);
	ASSERT_EQ(too_deep("later"), 0);
	for (k = 1; k <= 6; k++) {
		grown(&b, k);
		expect_rev("later", k, b.data, b.len);
	}
	buf_free(&b);
}

static void damage(const char *path, int enc)
{
	/* Three texts: statements are cached by their text's address. */
	char q_id[100], q_base[200], q_rev[200];
	int64_t id, base;
	int rev;
	char *data;
	size_t len;

	snprintf(q_id, sizeof(q_id), "SELECT max(id) FROM revisions WHERE path = ?1 AND enc = %d",
		 enc);
	snprintf(q_base, sizeof(q_base), "SELECT base FROM revisions WHERE id = (%s)", q_id);
	snprintf(q_rev, sizeof(q_rev), "SELECT rev FROM revisions WHERE id = (%s)", q_id);
	id = query(q_id, path);
	base = query(q_base, path);
	rev = (int)query(q_rev, path);
	ASSERT(id > 0 && base > 0);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__exec(s, "UPDATE revisions SET content = substr(content, 1, "
			      "length(content) / 2) WHERE id = ?", "I", id), 0);
	store__rev_forget(s); /* what was decoded before the damage */
	pthread_mutex_unlock(&s->lock);
	ASSERT_EQ(store_rev_read(s, item, path, rev, &data, &len), -EIO);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__exec(s, "UPDATE revisions SET base = -1 WHERE id = ?", "I", id), 0);
	pthread_mutex_unlock(&s->lock);
	ASSERT_EQ(store_rev_read(s, item, path, rev, &data, &len), -EIO);
	/* Its neighbours still read. */
	ASSERT_EQ(store_rev_read(s, item, path, rev - 1, &data, &len), 0);
	free(data);
}

TEST(damage)
{
	damage("log.md", 4);
	damage("mixed.md", 3);
}

int main(void)
{
	ASSERT(mkdtemp(dir) != NULL);
	s = test_store_new_item(dir, "revs", &item);
	RUN(appends);
	RUN(appends_and_edits);
	RUN(saves_and_unlinks);
	RUN(carried_saves);
	RUN(saves_by_process);
	RUN(retired_later);
	RUN(damage);
	store_close(s);
	return test_rmtree(dir);
}
