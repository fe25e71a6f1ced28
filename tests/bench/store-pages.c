/*
 * store-pages.c - pages and bytes each commit of the store writes to the
 * WAL, through the store API (store.h), without a mount: the measure of
 * what a change costs the store, independent of the machine's load. Built
 * as build/tests/store-pages, run on demand (not a test):
 *
 *	build/tests/store-pages [N] [SIZE]
 *
 * Makes a new store in a temporary directory, and measures each of:
 *   append    N appends of a 52-byte line to a document of SIZE bytes
 *             (default 25,000), one revision each, as `>>` makes them
 *             (store_doc_append)
 *   append (whole)  the same, each revision written whole
 *             (store_doc_write), as a handle that read the document
 *             commits it
 *   create    N new documents of 4 KiB, each made with its content in one
 *             commit, as open(O_CREAT), write and close make them through
 *             the mount (the create itself stores nothing)
 *   create-sh N new documents of 4 KiB made as a shell's redirection
 *             makes them: stored empty at the first close (after its
 *             dup2), then that revision amended with the content
 *   save      N writes of a 4 KiB document with one line changed
 *   temp save N editor-style saves over the documents create made: a
 *             temp file .NAME.swp of 4 KiB with other content stored, then
 *             (measured apart) renamed over NAME, carrying its life there
 *             (STORE_RENAME_CARRY, as a rename by the temp file's creator)
 *   registry  N registry lines (store_registry_append_event: the line and
 *             its event)
 * For each: the pages the store's connection wrote to the WAL per
 * operation (SQLite's own count, sqlite3_db_status CACHE_WRITE), the WAL
 * bytes that makes (a page of the store's page size and its 24-byte frame
 * header each), the commits per operation, and the CPU time of the thread
 * that calls the store per operation (CLOCK_THREAD_CPUTIME_ID: SQLite's
 * work and the system calls of the commit; the checkpointer's thread, which
 * copies the WAL back to the database file meanwhile, is not counted). N
 * defaults to 1,000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"
#include "test.h"

static struct store *s;
static int64_t item;
static const struct store_who who = {1000, 42, "sh", ""};

/* Pages the store's connection has written to the WAL so far. */
static long long pages(void)
{
	int cur = 0, hi = 0;

	pthread_mutex_lock(&s->lock);
	sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
	pthread_mutex_unlock(&s->lock);
	return cur;
}

static long long p0;
static uint64_t c0;
static double t0;

/* The CPU time of the calling thread so far, in microseconds. */
static double thread_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The store's page size in bytes (PRAGMA page_size). */
static int page_size(void)
{
	sqlite3_stmt *st;
	int size = 0;

	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		size = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return size;
}

static void start(void)
{
	p0 = pages();
	c0 = store_commits(s);
	t0 = thread_us();
}

static void report(const char *name, int n)
{
	double us = thread_us() - t0;
	long long p = pages() - p0;

	printf("| %s | %.2f | %.0f | %.2f | %.1f |\n", name, (double)p / n,
	       (double)p * (page_size() + 24) / n, (double)(store_commits(s) - c0) / n, us / n);
}

/* Starts the measure (start), then stores n new documents of the 4 KiB at
 * doc, each in one commit, named by the printf format name (one %06d: 0 to
 * n - 1), as open(O_CREAT), write and close make them through the mount. */
static void creates(const char *name, const char *doc, int n)
{
	char path[64];
	int k;

	start();
	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), name, k);
		ASSERT_EQ(store_doc_write(s, item, path, doc, 4096, 0644, -1, "create", &who, NULL),
			  0);
	}
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/pfs-store-pages-XXXXXX", path[64], line[64];
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 25000, i;
	struct buf b;
	char *doc;
	int k;

	ASSERT(n > 0);
	ASSERT(mkdtemp(dir) != NULL);
	ASSERT_EQ(store_open(dir, 1, 0, &s, NULL, 0), 0);
	ASSERT_EQ(store_item_create_owned(s, "bench", "packetfs/bench", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &item), 0);
	printf("| per operation (%d each) | WAL pages | WAL bytes | commits | CPU µs |\n", n);
	printf("|---|---|---|---|---|\n");

	buf_init(&b);
	for (i = 0; i < size; i++)
		ASSERT_EQ(buf_printf(&b, "%c", i % 52 == 51 ? '\n' : 'a' + (int)(i % 26)), 0);
	ASSERT_EQ(store_doc_write(s, item, "log.md", b.data, b.len, (mode_t)-1, -1, "write", &who,
				  NULL), 0);
	start();
	for (k = 0; k < n; k++) {
		snprintf(line, sizeof(line), "%06d appended line of the log, fifty-two bytes\n", k);
		ASSERT_EQ(buf_printf(&b, "%s", line), 0);
		ASSERT_EQ(store_doc_append(s, item, "log.md", line, strlen(line), (mode_t)-1, -1,
					   &who, NULL, NULL), 0);
	}
	report("append", n);
	start();
	for (k = 0; k < n; k++) {
		snprintf(line, sizeof(line), "%06d appended line of the log, fifty-two bytes\n", k);
		ASSERT_EQ(buf_printf(&b, "%s", line), 0);
		ASSERT_EQ(store_doc_write(s, item, "log.md", b.data, b.len, (mode_t)-1, -1, "write",
					  &who, NULL), 0);
	}
	report("append (whole)", n);

	doc = calloc(1, 4096);
	ASSERT(doc != NULL);
	memset(doc, 'x', 4095);
	doc[4095] = '\n';
	creates("f%06d.txt", doc, n);
	report("create 4 KiB", n);

	start();
	for (k = 0; k < n; k++) {
		struct doc_meta m;

		snprintf(path, sizeof(path), "sh%06d.txt", k);
		ASSERT_EQ(store_doc_write(s, item, path, "", 0, 0644, -1, "create", &who, NULL), 0);
		ASSERT_EQ(store_doc_stat(s, item, path, &m), 0);
		ASSERT_EQ(store_doc_amend(s, item, path, m.rev_id, doc, 4096, 0644, -1), 0);
	}
	report("create 4 KiB by a shell redirection", n);

	start();
	for (k = 0; k < n; k++) {
		memcpy(doc + 100 * (k % 40), "changed", 7);
		ASSERT_EQ(store_doc_write(s, item, "saved.md", doc, 4096, (mode_t)-1, -1, "write",
					  &who, NULL), 0);
	}
	report("save 4 KiB", n);

	memset(doc, 'y', 4095);
	creates(".f%06d.txt.swp", doc, n);
	report("temp save: the temp file", n);
	start();
	for (k = 0; k < n; k++) {
		char to[64];

		snprintf(path, sizeof(path), ".f%06d.txt.swp", k);
		snprintf(to, sizeof(to), "f%06d.txt", k);
		ASSERT_EQ(store_doc_rename(s, item, path, to, STORE_RENAME_CARRY, &who, NULL), 0);
	}
	report("temp save: its rename over the document", n);

	start();
	for (k = 0; k < n; k++) {
		snprintf(line, sizeof(line), "{\"recipe\":\"99-manual\",\"status\":\"validated\",\"n\":%d}",
			 k);
		ASSERT_EQ(store_registry_append_event(s, item, line, "{\"event\":\"registry\"}"), 0);
	}
	report("registry line", n);

	free(doc);
	buf_free(&b);
	store_close(s);
	return test_rmtree(dir);
}
