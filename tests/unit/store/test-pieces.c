/*
 * test-pieces.c - a long document's content in pieces (store_whole.c;
 * schema/0019_whole_pieces.sql): appends to a 40 KB document, small ones
 * and ones larger than a piece, each a revision that reads back byte for
 * byte, now, after the revision cache is dropped and after a reopen; the
 * row of whole is not copied as the document grows; an append to a 4 MiB
 * document reads a few pages, not the document's (SQLite's page cache
 * counts them); a whole write, a truncation and an unlink leave no piece
 * behind; an append run broken and started again; a rename passes the
 * pieces on; appends of 9 KB take about their size in rows; 2,000 writes
 * drawn at random, every revision read back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-pieces-XXXXXX";
static const struct store_who who = {1000, 42, "sh", ""};
static struct store *s;
static int64_t item;

/* The sizes of the revisions of "log.md", index = rev (the reference
 * content's prefix of that length is the revision). */
static size_t sizes[4096];
static int nrev;

static int64_t query(const char *sql, const char *path)
{
	return test_query(s, sql, path);
}

/* Bytes k of a reference: lines of text that differ line by line. */
static void fill(struct buf *ref, size_t len)
{
	char l[64];

	while (len) {
		int n = snprintf(l, sizeof(l), "%08zu a line of the long log, with its number\n",
				 ref->len);
		size_t take = (size_t)n < len ? (size_t)n : len;

		ASSERT_EQ(buf_append(ref, l, take), 0);
		len -= take;
	}
}

/* Appends len bytes of the reference ref's continuation to path, checked:
 * the document's size is then ref's. */
static void append_to(const char *path, struct buf *ref, size_t len)
{
	size_t at = ref->len;
	uint64_t size = 0;

	fill(ref, len);
	ASSERT_EQ(store_doc_append(s, item, path, ref->data + at, len, (mode_t)-1, -1, &who, NULL,
				   &size), 0);
	ASSERT_EQ(size, ref->len);
}

/* append_to log.md, its revision's size kept. */
static void append(struct buf *ref, size_t len)
{
	append_to("log.md", ref, len);
	ASSERT(nrev + 1 < (int)(sizeof(sizes) / sizeof(sizes[0])));
	sizes[++nrev] = ref->len;
}

static void write_whole(struct buf *ref, size_t len)
{
	buf_free(ref);
	fill(ref, len);
	ASSERT_EQ(store_doc_write(s, item, "log.md", ref->data, ref->len, (mode_t)-1, -1, "write",
				  &who, NULL), 0);
	sizes[++nrev] = ref->len;
}

/* Every revision of log.md from rev from on (reference ref for all of
 * them: each is a prefix of it) and the current content. */
static void expect_all(const struct buf *ref, int from)
{
	int k;

	for (k = from; k <= nrev; k++)
		test_expect_rev(s, item, "log.md", k, ref->data, sizes[k]);
	test_expect_rev(s, item, "log.md", 0, ref->data, ref->len);
}

/* The number of pieces of the current revision of path ?1. */
#define PIECES_OF                                                                          \
	"SELECT count(*) FROM whole_pieces w JOIN revisions r ON r.slot = w.slot JOIN "    \
	"documents d ON d.rev_id = r.id AND d.path = ?1"

/* The slot of the current revision of path. */
static int64_t slot_of(const char *path)
{
	return query("SELECT r.slot FROM revisions r JOIN documents d ON d.rev_id = r.id AND "
		     "d.path = ?1", path);
}

/* Pieces whose row of whole is gone: none, ever. */
static void no_orphans(void)
{
	ASSERT_EQ(query("SELECT count(*) FROM whole_pieces WHERE slot NOT IN (SELECT slot FROM "
			"whole) AND ?1 IS NOT NULL", "x"), 0);
}

/* The pages SQLite's cache of the store's connection gave out (hits and
 * misses) since the last call. */
static int64_t pages_fetched(void)
{
	int hit = 0, miss = 0, hi;

	pthread_mutex_lock(&s->lock);
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_HIT, &hit, &hi, 1);
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 1);
	pthread_mutex_unlock(&s->lock);
	return (int64_t)hit + miss;
}

TEST(appends)
{
	struct buf ref;
	int64_t row;
	int k;

	buf_init(&ref);
	write_whole(&ref, 40000);
	row = query("SELECT length(w.content) FROM whole w JOIN documents d ON d.path = ?1 JOIN "
		    "revisions r ON r.id = d.rev_id AND r.slot = w.slot", "log.md");
	/* Small appends, one larger than a piece, small ones again. */
	for (k = 0; k < 600; k++)
		append(&ref, 52 + (size_t)(k % 7) * 13);
	append(&ref, 50000);
	for (k = 0; k < 300; k++)
		append(&ref, 86);
	ASSERT(query("SELECT count(*) FROM whole_pieces WHERE ?1 IS NOT NULL", "x") >= 3);
	/* The first row was never copied: it holds the first 40 KB still. */
	ASSERT_EQ(query("SELECT length(w.content) FROM whole w JOIN documents d ON d.path = ?1 "
			"JOIN revisions r ON r.id = d.rev_id AND r.slot = w.slot", "log.md"), row);
	expect_all(&ref, 1);
	pthread_mutex_lock(&s->lock);
	store__rev_forget(s);
	pthread_mutex_unlock(&s->lock);
	expect_all(&ref, 1);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	expect_all(&ref, 1);
	store_close(s);
	s = test_store_open(dir, 0, 1); /* read-only */
	expect_all(&ref, 1);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	no_orphans();
	buf_free(&ref);
}

/* A whole write after pieces makes one row again; appends start pieces
 * again; a truncation and an unlink leave none behind. */
TEST(rewrites)
{
	struct buf ref;
	int from, k;

	buf_init(&ref);
	write_whole(&ref, 30000);
	from = nrev;
	ASSERT_EQ(query(PIECES_OF, "log.md"), 0);
	no_orphans();
	for (k = 0; k < 400; k++)
		append(&ref, 99);
	ASSERT(query(PIECES_OF, "log.md") >= 1);
	expect_all(&ref, from);
	/* A truncation: the namespace writes the shorter content whole. */
	ref.len = 1000;
	ASSERT_EQ(store_doc_write(s, item, "log.md", ref.data, ref.len, (mode_t)-1, -1, "write",
				  &who, NULL), 0);
	sizes[++nrev] = 1000;
	test_later_drain(s);
	ASSERT_EQ(query("SELECT count(*) FROM whole_pieces WHERE ?1 IS NOT NULL", "x"), 0);
	for (k = 0; k < 50; k++)
		append(&ref, 700);
	expect_all(&ref, nrev - 50);
	ASSERT_EQ(store_doc_unlink(s, item, "log.md", &who), 0);
	no_orphans();
	test_later_drain(s);
	ASSERT_EQ(query("SELECT count(*) FROM whole_pieces WHERE ?1 IS NOT NULL", "x"), 0);
	buf_free(&ref);
}

/* A rename passes the row of whole and its pieces on as they are. */
TEST(rename)
{
	struct buf ref;
	int64_t slot, pieces, rows;
	size_t first;
	int k;

	buf_init(&ref);
	fill(&ref, 20000);
	first = ref.len;
	ASSERT_EQ(store_doc_write(s, item, "r.md", ref.data, ref.len, (mode_t)-1, -1, "create",
				  &who, NULL), 0);
	for (k = 0; k < 300; k++)
		append_to("r.md", &ref, 120);
	slot = slot_of("r.md");
	pieces = query(PIECES_OF, "r.md");
	ASSERT(pieces >= 2);
	rows = query("SELECT count(*) FROM whole WHERE ?1 IS NOT NULL", "x");
	ASSERT_EQ(store_doc_rename(s, item, "r.md", "s.md", 0, &who, NULL), 0);
	ASSERT_EQ(slot_of("s.md"), slot);
	ASSERT_EQ(query(PIECES_OF, "s.md"), pieces);
	ASSERT_EQ(query("SELECT count(*) FROM whole WHERE ?1 IS NOT NULL", "x"), rows);
	test_expect_rev(s, item, "s.md", 0, ref.data, ref.len);
	test_expect_rev(s, item, "r.md", 1, ref.data, first);
	test_expect_rev(s, item, "r.md", 301, ref.data, ref.len);
	no_orphans();
	buf_free(&ref);
}

/* Appends of 9 KB, which a piece of 16 KiB of room holds one of: the rows
 * of a document take about what whole_room pads, not twice its size. */
TEST(space)
{
	struct buf ref;
	int64_t stored;
	int k;

	buf_init(&ref);
	fill(&ref, 30000);
	ASSERT_EQ(store_doc_write(s, item, "wide.md", ref.data, ref.len, (mode_t)-1, -1, "create",
				  &who, NULL), 0);
	for (k = 0; k < 60; k++)
		append_to("wide.md", &ref, 9000);
	stored = query("SELECT length(w.content) + (SELECT COALESCE(sum(length(p.content)), 0) "
		       "FROM whole_pieces p WHERE p.slot = w.slot) FROM whole w JOIN revisions r "
		       "ON r.slot = w.slot JOIN documents d ON d.rev_id = r.id AND d.path = ?1",
		       "wide.md");
	if ((double)stored > 1.15 * (double)ref.len + 40000)
		FAIL_AT("a %zu-byte document takes %lld bytes of rows", ref.len, (long long)stored);
	test_expect_rev(s, item, "wide.md", 0, ref.data, ref.len);
	test_expect_rev(s, item, "wide.md", 30, ref.data, 30000 + 29 * 9000);
	buf_free(&ref);
}

/* FNV-1a of n bytes: what a revision read back is compared with. */
static uint64_t fnv(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 1099511628211ull;
	return h;
}

/* 2,000 writes drawn at random (a fixed seed) on one document: appends
 * of 1 byte to 40 KB, most of them short, and whole writes, shorter and
 * longer, and empty ones; the content reads back after every tenth, and
 * every revision (its size and hash) at the end, after a reopen. */
TEST(random)
{
	static uint64_t hash[2100];
	static size_t size[2100];
	struct buf ref;
	unsigned seed = 7;
	int64_t pieces = 0;
	int k, rev = 0;

	buf_init(&ref);
	for (k = 0; k < 2000; k++) {
		int op = rand_r(&seed) % 100;
		size_t len = (size_t)(rand_r(&seed) % 100 < 90 ? rand_r(&seed) % 200 + 1
							     : rand_r(&seed) % 40000 + 1);

		if (op < 95 && ref.len) {
			append_to("rand.md", &ref, len);
		} else {
			size_t keep = op < 98 && ref.len ? (size_t)rand_r(&seed) % ref.len : 0;

			ref.len = keep;
			if (op >= 97)
				fill(&ref, len * 3);
			ASSERT_EQ(store_doc_write(s, item, "rand.md", ref.data, ref.len, (mode_t)-1,
						  -1, k ? "write" : "create", &who, NULL), 0);
		}
		hash[++rev] = fnv(ref.data, ref.len);
		size[rev] = ref.len;
		if (k % 10 == 0) {
			test_expect_rev(s, item, "rand.md", 0, ref.data, ref.len);
			pieces += query(PIECES_OF, "rand.md");
		}
	}
	ASSERT(pieces > 200); /* the draws went through pieces */
	test_expect_rev(s, item, "rand.md", 0, ref.data, ref.len);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	for (k = 1; k <= rev; k++) {
		char *data;
		size_t len;

		ASSERT_EQ(store_rev_read(s, item, "rand.md", k, &data, &len), 0);
		ASSERT_EQ(len, size[k]);
		if (fnv(data, len) != hash[k])
			FAIL_AT("revision %d of rand.md reads back other bytes", k);
		free(data);
	}
	no_orphans();
	buf_free(&ref);
}

/* 20 appends of a line to big.md (the first ones may read the row once),
 * then 10 whose pages fetched from SQLite's cache must stay a few hundred
 * each; the content read back after. what names the document's state. */
static void appends_stay_small(struct buf *ref, const char *what)
{
	int64_t pages;
	int k;

	for (k = 0; k < 20; k++)
		append_to("big.md", ref, 86);
	pages_fetched();
	for (k = 0; k < 10; k++)
		append_to("big.md", ref, 86);
	pages = pages_fetched();
	if (pages > 10 * 400)
		FAIL_AT("10 appends to %s fetched %lld pages", what, (long long)pages);
	test_expect_rev(s, item, "big.md", 0, ref->data, ref->len);
}

/* An append to a 4 MiB document fetches a few pages of SQLite's cache,
 * not the 4,096 or more of its row: the walk is the last piece's; also
 * once the document is written again shorter, in place, its row keeping
 * room it could append into. */
TEST(long_document)
{
	struct buf ref;

	buf_init(&ref);
	fill(&ref, 4u << 20);
	ASSERT_EQ(store_doc_write(s, item, "big.md", ref.data, ref.len, (mode_t)-1, -1, "create",
				  &who, NULL), 0);
	appends_stay_small(&ref, "a 4 MiB document");
	/* Written again 100 KB shorter: the row is rewritten in place and
	 * keeps its room, which appends leave alone. */
	ref.len -= 100000;
	ASSERT_EQ(store_doc_write(s, item, "big.md", ref.data, ref.len, (mode_t)-1, -1, "write",
				  &who, NULL), 0);
	appends_stay_small(&ref, "a 4 MiB document written again shorter");
	buf_free(&ref);
}

int main(void)
{
	ASSERT(mkdtemp(dir) != NULL);
	s = test_store_new_item(dir, "pieces", &item);
	RUN(appends);
	RUN(rewrites);
	RUN(rename);
	RUN(space);
	RUN(random);
	RUN(long_document);
	store_close(s);
	return test_rmtree(dir);
}
