/*
 * test-append.c - appends committed as appends (store_doc_append;
 * store_retire.c: runs of appends): each one a revision that reads back
 * byte for byte, stored as its suffix; retired against a base of its own
 * run without the document being read (the revision cache shows which way
 * a retire went); a run broken by a whole write, an amend, an unlink;
 * appends that fit the row of whole and ones that outgrow it; a document
 * with two names; and what is refused, with nothing changed. And a
 * revision grown in place (store_doc_grow).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store-old.h"
#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-append-XXXXXX";
static const struct store_who who = {1000, 42, "sh", ""};
static struct store *s;
static int64_t item;

/* Line k of a log (52 bytes, newline included). */
static void line(char out[64], int k)
{
	snprintf(out, 64, "%06d appended line of the growing document, rev %05d\n", k, k);
}

/* One integer the SQL gives (path bound to ?1). */
static int64_t query(const char *sql, const char *path)
{
	return test_query(s, sql, path);
}

/* Whether the revision cache holds revision id: a retire that compared the
 * whole content keeps it there, one that read only its run's suffix does
 * not. */
static int kept(int64_t id)
{
	int i, found = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < REV_CACHE; i++)
		found |= s->revs[i].id == id;
	pthread_mutex_unlock(&s->lock);
	return found;
}

static void forget(void)
{
	pthread_mutex_lock(&s->lock);
	store__rev_forget(s);
	pthread_mutex_unlock(&s->lock);
}

static void expect_rev(const char *path, int rev, const void *want, size_t wlen)
{
	test_expect_rev(s, item, path, rev, want, wlen);
}

/* One append of data (len bytes) to path, checked: the new revision is
 * current and the document's size is its size. Returns its id. */
static int64_t append(const char *path, const void *data, size_t len, uint64_t want_size)
{
	uint64_t size = 0;
	int64_t id = 0;
	struct doc_meta m;

	ASSERT_EQ(store_doc_append(s, item, path, data, len, (mode_t)-1, -1, &who, &id, &size), 0);
	ASSERT_EQ(size, want_size);
	ASSERT_EQ(store_doc_stat(s, item, path, &m), 0);
	ASSERT_EQ(m.rev_id, id);
	ASSERT_EQ(m.size, want_size);
	return id;
}

/* 1,000 appends after a first write: every revision reads back from the
 * store; every one but the first two is stored as its suffix; every retire
 * after the run's first went by the run (the retired revision is not in
 * the cache); the revisions take less than 4 times the final size; the
 * first revisions of the run name it. */
TEST(runs)
{
	struct buf b;
	char l[64];
	int64_t prev = 0, id;
	int k, n = 1000, by_run = 0;

	buf_init(&b);
	line(l, 1);
	ASSERT_EQ(buf_puts(&b, l), 0);
	ASSERT_EQ(store_doc_write(s, item, "log.md", b.data, b.len, (mode_t)-1, -1, "create", &who,
				  NULL), 0);
	for (k = 2; k <= n; k++) {
		line(l, k);
		ASSERT_EQ(buf_puts(&b, l), 0);
		id = append("log.md", l, strlen(l), b.len);
		if (prev && !kept(prev))
			by_run++;
		prev = id;
	}
	ASSERT_EQ(by_run, n - 2);
	forget();
	buf_free(&b);
	for (k = 1; k <= n; k++) {
		line(l, k);
		ASSERT_EQ(buf_puts(&b, l), 0);
		expect_rev("log.md", k, b.data, b.len);
	}
	expect_rev("log.md", 0, b.data, b.len);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 4", "log.md"),
		  n - 2);
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 0", "log.md"), 1);
	ASSERT_EQ(query("SELECT count(DISTINCT grown_from) FROM revisions WHERE path = ?1", "log.md"),
		  1);
	ASSERT_EQ(query("SELECT grown_from FROM revisions WHERE path = ?1 AND rev = 2", "log.md"),
		  query("SELECT id FROM revisions WHERE path = ?1 AND rev = 1", "log.md"));
	if (query("SELECT sum(length(content)) FROM revisions WHERE path = ?1", "log.md") >
	    4 * (int64_t)b.len)
		FAIL_AT("%lld bytes of revisions for a %zu-byte document",
			(long long)query("SELECT sum(length(content)) FROM revisions WHERE "
					 "path = ?1", "log.md"), b.len);
	buf_free(&b);
}

/* Appends mixed with whole writes (which end a run), an amend (which takes
 * the amended revision out of any run), appends to an empty document and
 * ones larger than the row's room: every revision reads back. */
TEST(mixed)
{
	struct buf b, *v;
	char l[64], *big;
	int k, n = 200, rev;
	size_t big_len = 100000;

	v = calloc((size_t)n + 8, sizeof(*v));
	ASSERT(v != NULL);
	buf_init(&b);
	ASSERT_EQ(store_doc_write(s, item, "mixed.md", "", 0, (mode_t)-1, -1, "create", &who,
				  NULL), 0);
	rev = 1;
	buf_init(&v[rev]);
	for (k = 1; k <= n; k++) {
		line(l, k);
		if (k % 7 == 0 && b.len > 6) {
			memcpy(b.data, "EDITED", 6); /* a whole write */
			ASSERT_EQ(buf_puts(&b, l), 0);
			ASSERT_EQ(store_doc_write(s, item, "mixed.md", b.data, b.len, (mode_t)-1, -1,
						  "write", &who, NULL), 0);
		} else {
			ASSERT_EQ(buf_puts(&b, l), 0);
			append("mixed.md", l, strlen(l), b.len);
		}
		rev++;
		buf_init(&v[rev]);
		ASSERT_EQ(buf_append(&v[rev], b.data, b.len), 0);
	}
	/* An append larger than anything before it: a new row of whole. */
	big = malloc(big_len);
	ASSERT(big != NULL);
	for (k = 0; k < (int)big_len; k++)
		big[k] = (char)('a' + k % 23);
	ASSERT_EQ(buf_append(&b, big, big_len), 0);
	append("mixed.md", big, big_len, b.len);
	rev++;
	buf_init(&v[rev]);
	ASSERT_EQ(buf_append(&v[rev], b.data, b.len), 0);
	/* An amend of the current revision, then an append to it. */
	ASSERT_EQ(store_doc_amend(s, item, "mixed.md",
				  query("SELECT rev_id FROM documents WHERE path = ?1", "mixed.md"),
				  "amended\n", 8, 0644, -1), 0);
	ASSERT_EQ(query("SELECT count(*) FROM revisions r JOIN documents d ON d.rev_id = r.id "
			"WHERE d.path = ?1 AND r.grown_from IS NOT NULL", "mixed.md"), 0);
	buf_free(&v[rev]);
	ASSERT_EQ(buf_puts(&v[rev], "amended\n"), 0);
	append("mixed.md", "more\n", 5, 13);
	rev++;
	buf_init(&v[rev]);
	ASSERT_EQ(buf_puts(&v[rev], "amended\nmore\n"), 0);
	forget();
	for (k = rev; k >= 1; k--)
		expect_rev("mixed.md", k, v[k].data ? v[k].data : "", v[k].len);
	expect_rev("mixed.md", 0, "amended\nmore\n", 13);
	ASSERT(query("SELECT count(*) FROM revisions WHERE path = ?1 AND enc = 4", "mixed.md") > 0);
	for (k = 1; k <= rev; k++)
		buf_free(&v[k]);
	free(v);
	free(big);
	buf_free(&b);

	/* Unlinked and made again: a new document, appended to from empty. */
	ASSERT_EQ(store_doc_unlink(s, item, "mixed.md", &who), 0);
	ASSERT_EQ(store_doc_append(s, item, "mixed.md", "x", 1, (mode_t)-1, -1, &who, NULL, NULL),
		  -ESTALE);
	ASSERT_EQ(store_doc_write(s, item, "mixed.md", "a", 1, (mode_t)-1, -1, "create", &who,
				  NULL), 0);
	append("mixed.md", "b", 1, 2);
	expect_rev("mixed.md", 0, "ab", 2);
}

/* A document with two names: an append through one is the content of
 * both. */
TEST(two_names)
{
	ASSERT_EQ(store_doc_write(s, item, "one", "1\n", 2, (mode_t)-1, -1, "create", &who, NULL),
		  0);
	ASSERT_EQ(store_doc_link(s, item, "one", "two", &who), 0);
	append("two", "2\n", 2, 4);
	append("one", "3\n", 2, 6);
	test_expect_rev(s, item, "one", 0, "1\n2\n3\n", 6);
	test_expect_rev(s, item, "two", 0, "1\n2\n3\n", 6);
}

/* Refused, with nothing changed: no document, a directory, a symlink, a
 * FIFO, an empty append. */
TEST(refused)
{
	int64_t before = query("SELECT count(*) FROM revisions WHERE ?1 IS NOT NULL", "x");
	uint64_t size = 7;

	ASSERT_EQ(store_doc_append(s, item, "none", "x", 1, (mode_t)-1, -1, &who, NULL, &size),
		  -ESTALE);
	ASSERT_EQ(size, 7);
	ASSERT_EQ(store_doc_mkdir_owned(s, item, "dir", 0755, STORE_ID_DEFAULT, STORE_ID_DEFAULT),
		  0);
	ASSERT_EQ(store_doc_append(s, item, "dir", "x", 1, (mode_t)-1, -1, &who, NULL, NULL),
		  -ESTALE);
	ASSERT_EQ(store_doc_make_node(s, item, "link", S_IFLNK, 0, "one", 3, 0777,
				      STORE_ID_DEFAULT, STORE_ID_DEFAULT, &who), 0);
	ASSERT_EQ(store_doc_append(s, item, "link", "x", 1, (mode_t)-1, -1, &who, NULL, NULL),
		  -ESTALE);
	ASSERT_EQ(store_doc_make_node(s, item, "fifo", S_IFIFO, 0, NULL, 0, 0644,
				      STORE_ID_DEFAULT, STORE_ID_DEFAULT, &who), 0);
	ASSERT_EQ(store_doc_append(s, item, "fifo", "x", 1, (mode_t)-1, -1, &who, NULL, NULL),
		  -ESTALE);
	ASSERT_EQ(store_doc_append(s, item, "one", "x", 0, (mode_t)-1, -1, &who, NULL, NULL),
		  -EINVAL);
	/* The two nodes made above are a revision each; nothing else. */
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE ?1 IS NOT NULL", "x"), before + 2);
	test_expect_rev(s, item, "one", 0, "1\n2\n3\n", 6);
}

/* A revision grown in place (store_doc_grow: a write-through handle's
 * later writes): still one revision, its content the longer one, past the
 * row of whole into pieces; after a later append every revision reads back;
 * refused (-ESTALE, nothing changed) once it is not current, for a path
 * that is no document, and for nothing to add (-EINVAL); through one name
 * of a document with two, the content of both. */
TEST(grown)
{
	static char big[20000];
	struct buf b;
	struct doc_meta m;
	uint64_t size = 0;
	int64_t id, before;

	memset(big, 'g', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	buf_init(&b);
	ASSERT_EQ(store_doc_write(s, item, "grown.md", "a\n", 2, (mode_t)-1, -1, "create", &who,
				  NULL), 0);
	id = append("grown.md", "b\n", 2, 4);
	before = query("SELECT count(*) FROM revisions WHERE path = ?1", "grown.md");
	ASSERT_EQ(store_doc_grow(s, item, "grown.md", id, "c\n", 2, -1, &size), 0);
	ASSERT_EQ(size, 6);
	ASSERT_EQ(store_doc_grow(s, item, "grown.md", id, big, sizeof(big), -1, &size), 0);
	ASSERT_EQ(size, 6 + sizeof(big));
	ASSERT_EQ(query("SELECT count(*) FROM revisions WHERE path = ?1", "grown.md"), before);
	ASSERT_EQ(store_doc_stat(s, item, "grown.md", &m), 0);
	ASSERT_EQ(m.rev_id, id);
	ASSERT_EQ(m.size, 6 + sizeof(big));
	ASSERT_EQ(buf_append(&b, "a\nb\nc\n", 6), 0);
	ASSERT_EQ(buf_append(&b, big, sizeof(big)), 0);
	forget();
	expect_rev("grown.md", 0, b.data, b.len);
	append("grown.md", "d\n", 2, b.len + 2);
	forget();
	expect_rev("grown.md", 2, b.data, b.len);
	expect_rev("grown.md", 1, "a\n", 2);
	ASSERT_EQ(buf_append(&b, "d\n", 2), 0);
	expect_rev("grown.md", 3, b.data, b.len);
	size = 7;
	ASSERT_EQ(store_doc_grow(s, item, "grown.md", id, "x", 1, -1, &size), -ESTALE);
	ASSERT_EQ(size, 7);
	ASSERT_EQ(store_doc_grow(s, item, "none", id, "x", 1, -1, NULL), -ESTALE);
	ASSERT_EQ(store_doc_stat(s, item, "grown.md", &m), 0);
	ASSERT_EQ(store_doc_grow(s, item, "grown.md", m.rev_id, "x", 0, -1, NULL), -EINVAL);
	expect_rev("grown.md", 0, b.data, b.len);
	buf_free(&b);

	ASSERT_EQ(store_doc_write(s, item, "first", "1\n", 2, (mode_t)-1, -1, "create", &who,
				  NULL), 0);
	ASSERT_EQ(store_doc_link(s, item, "first", "second", &who), 0);
	id = append("second", "2\n", 2, 4);
	ASSERT_EQ(store_doc_grow(s, item, "second", id, "3\n", 2, -1, NULL), 0);
	test_expect_rev(s, item, "first", 0, "1\n2\n3\n", 6);
	test_expect_rev(s, item, "second", 0, "1\n2\n3\n", 6);
	ASSERT_EQ(store_doc_stat(s, item, "first", &m), 0);
	ASSERT_EQ(m.size, 6);
}

int main(void)
{
	ASSERT(mkdtemp(dir) != NULL);
	s = test_store_new_item(dir, "append", &item);
	RUN(runs);
	RUN(mixed);
	RUN(two_names);
	RUN(refused);
	RUN(grown);
	store_close(s);
	return test_rmtree(dir);
}
