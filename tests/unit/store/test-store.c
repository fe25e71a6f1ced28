/*
 * test-store.c - the SQLite store: creation and reopening, items, documents
 * with every revision (write, rename over, directories, unlink keeps
 * history), their times and the times of their directories, run logs read
 * back at any offset with their sha256, the item rows a writable store
 * keeps, the append-only registry (enforced by the database itself),
 * events, a read-only open refusing writes, stores of older versions (1,
 * 3, 4, 6) read read-only and migrated. (The statement layer of
 * store_int.h: test-stmt.c; how revisions are stored: test-revisions.c;
 * the WAL and its checkpoints: test-wal.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"
#include "store-old.h"
#include "test.h"

static char dir[] = "/tmp/pfs-store-XXXXXX";
static const struct store_who who = {1000, 42, "vim", "print"};

TEST(open_missing)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open("/nonexistent/pfs", 0, 0, &s, err, sizeof(err)), -ENOENT);
	ASSERT(s == NULL);
	ASSERT(err[0] != '\0');
}

TEST(items)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct item it;
	int64_t id, id2;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id2), -EEXIST);
	ASSERT_EQ(store_item_get(s, "fix-1", &it), 0);
	ASSERT_EQ(it.state, ITEM_NEW);
	ASSERT_EQ(it.iteration, 1);
	ASSERT_STREQ(it.branch, "packetfs/fix-1");
	it.state = ITEM_RUNNING;
	it.hold = 1;
	ASSERT_EQ(store_item_update(s, &it), 0);
	item_clear(&it);
	ASSERT_EQ(store_item_get_id(s, id, &it), 0);
	ASSERT_EQ(it.state, ITEM_RUNNING);
	ASSERT_EQ(it.hold, 1);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "nope", &it), -ENOENT);
	store_close(s);
}

/* The walk over items reads them a page at a time: every item once, in
 * name order, past several pages; archived ones apart; a stop stops it. */
struct walk {
	char last[32];
	int n, stop_at;
};

static int walk_item(void *arg, const struct item *it)
{
	struct walk *w = arg;

	ASSERT(strcmp(w->last, it->name) < 0);
	snprintf(w->last, sizeof(w->last), "%s", it->name);
	if (strncmp(it->name, "walk-", 5) != 0)
		return 0; /* made by the tests before */
	w->n++;
	return w->n == w->stop_at;
}

TEST(item_each_pages)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct walk w;
	struct item it;
	char name[32];
	int64_t id;
	int i, k;

	for (i = 0; i < 700; i++) {
		k = (i * 37) % 700; /* not in name order */
		snprintf(name, sizeof(name), "walk-%04d", k);
		ASSERT_EQ(store_item_create_owned(s, name, name, "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
		if (k % 7 == 0) {
			ASSERT_EQ(store_item_get_id(s, id, &it), 0);
			it.archived = 1;
			ASSERT_EQ(store_item_update(s, &it), 0);
			item_clear(&it);
		}
	}
	memset(&w, 0, sizeof(w));
	ASSERT_EQ(store_item_each(s, 0, walk_item, &w), 0);
	ASSERT_EQ(w.n, 600);
	ASSERT_STREQ(w.last, "walk-0699");
	memset(&w, 0, sizeof(w));
	ASSERT_EQ(store_item_each(s, 1, walk_item, &w), 0);
	ASSERT_EQ(w.n, 100);
	ASSERT_STREQ(w.last, "walk-0693");
	memset(&w, 0, sizeof(w));
	w.stop_at = 300;
	ASSERT_EQ(store_item_each(s, 0, walk_item, &w), 0);
	ASSERT_EQ(w.n, 300);
	store_close(s);
}

/* The item rows a writable store keeps follow every write of a row, and a
 * read-only store, which another process may write under, keeps none; a
 * shared row stays readable until its holder puts it. */
TEST(item_cache)
{
	struct store *s = test_store_open(dir, 0, 0), *ro;
	struct item it, again;
	int64_t before;

	/* a missing item is not kept as missing */
	ASSERT_EQ(store_item_get(s, "fix-cache", &it), -ENOENT);
	ASSERT_EQ(store_item_create_owned(s, "fix-cache", "packetfs/fix-cache", "main",
					  STORE_ID_DEFAULT, STORE_ID_DEFAULT, 0755, NULL), 0);
	ASSERT_EQ(store_item_get(s, "fix-cache", &it), 0);
	ASSERT_EQ(store_item_get(s, "fix-cache", &again), 0);
	ASSERT_EQ(again.state, it.state);
	ASSERT(again.stage != it.stage); /* each caller owns its copy */
	item_clear(&again);
	ro = test_store_open(dir, 0, 1);
	ASSERT_EQ(store_item_get(ro, "fix-cache", &again), 0);
	ASSERT_STREQ(again.title, "");
	item_clear(&again);
	free(it.title);
	it.title = strdup("cached no more");
	ASSERT_EQ(store_item_update(s, &it), 0);
	ASSERT_EQ(store_item_get(s, "fix-cache", &again), 0);
	ASSERT_STREQ(again.title, "cached no more");
	item_clear(&again);
	ASSERT_EQ(store_item_get(ro, "fix-cache", &again), 0);
	ASSERT_STREQ(again.title, "cached no more");
	item_clear(&again);
	/* a top-level document moves the directory's times */
	before = util_now_ns();
	ASSERT_EQ(store_doc_write(s, it.id, "cache.md", "x", 1, (mode_t)-1, 1, "create", &who, NULL),
		  0);
	ASSERT_EQ(store_item_get(s, "fix-cache", &again), 0);
	ASSERT(again.dir_mtime_ns >= before);
	item_clear(&again);
	ASSERT_EQ(store_item_set_times(s, it.id, 11, 12), 0);
	ASSERT_EQ(store_item_get(s, "fix-cache", &again), 0);
	ASSERT_EQ(again.dir_atime_ns, 11);
	ASSERT_EQ(again.dir_mtime_ns, 12);
	item_clear(&again);

	/* Shared rows: the kept copy's strings, valid while held, through a
	 * write that replaces the copy and after the store let it go. */
	{
		struct item a, b;
		struct item_ref *ra, *rb;

		ASSERT_EQ(store_item_get_shared(s, "fix-cache", &a, &ra), 0);
		ASSERT(ra != NULL);
		ASSERT_EQ(store_item_get_shared(s, "fix-cache", &b, &rb), 0);
		ASSERT(rb == ra && b.title == a.title);
		store_item_put(rb);
		free(it.title);
		it.title = strdup("shared");
		ASSERT_EQ(store_item_update(s, &it), 0);
		ASSERT_EQ(store_item_get_shared(s, "fix-cache", &b, &rb), 0);
		ASSERT(rb != ra);
		ASSERT_STREQ(b.title, "shared");
		ASSERT_STREQ(a.title, "cached no more"); /* the old copy, still held */
		store_item_put(ra);
		store_item_put(rb);
		ASSERT_EQ(store_item_get_shared(ro, "fix-cache", &a, &ra), 0);
		ASSERT(ra == NULL); /* a read-only store keeps none: a copy */
		ASSERT_STREQ(a.title, "shared");
		item_clear(&a);
		ASSERT_EQ(store_item_get_shared(s, "no-such", &a, &ra), -ENOENT);
		ASSERT(ra == NULL);
	}
	item_clear(&it);
	store_close(ro);
	store_close(s);
}

static int count_cb(void *arg, const char *name, const struct doc_meta *m)
{
	(void)name;
	(void)m;
	++*(int *)arg;
	return 0;
}

static int rev_cb(void *arg, const struct rev_info *r)
{
	char *out = arg;

	sprintf(out + strlen(out), "%s@%d:%s:%lld:%s;", r->path, r->rev, r->op, (long long)r->size,
		r->comm);
	return 0;
}

TEST(documents)
{
	struct store *s;
	struct doc_meta m;
	struct item it;
	char *data = NULL, revs[2048] = "";
	int replaced;
	size_t len;
	int rev, n = 0;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_doc_write(s, it.id, "plan.md", "one\n", 4, (mode_t)-1, -1, "create", &who, &rev), 0);
	ASSERT_EQ(rev, 1);
	ASSERT_EQ(store_doc_write(s, it.id, "plan.md", "two\n", 4, (mode_t)-1, -1, "write", &who, &rev), 0);
	ASSERT_EQ(rev, 2);
	ASSERT_EQ(store_doc_stat(s, it.id, "plan.md", &m), 0);
	ASSERT_EQ(m.rev, 2);
	ASSERT_EQ(m.size, 4);
	ASSERT_EQ(m.mode, 0644);
	ASSERT_EQ(store_doc_read(s, it.id, "plan.md", &data, &len), 0);
	ASSERT_STREQ(data, "two\n");
	free(data);
	ASSERT_EQ(store_rev_read(s, it.id, "plan.md", 1, &data, &len), 0);
	ASSERT_STREQ(data, "one\n");
	free(data);

	/* Directories, and rename of a directory with a document inside. */
	ASSERT_EQ(store_doc_mkdir_owned(s, it.id, "notes", 0755, STORE_ID_DEFAULT,
					STORE_ID_DEFAULT),
		  0);
	ASSERT_EQ(store_doc_mkdir_owned(s, it.id, "notes", 0755, STORE_ID_DEFAULT,
					STORE_ID_DEFAULT),
		  -EEXIST);
	ASSERT_EQ(store_doc_write(s, it.id, "notes/a.md", "a", 1, 0600, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, it.id, "notes", "x", 1, (mode_t)-1, -1, "write", &who, NULL), -EISDIR);
	ASSERT_EQ(store_doc_rmdir(s, it.id, "notes"), -ENOTEMPTY);
	ASSERT_EQ(store_doc_rename(s, it.id, "notes", "notes/sub", 0, &who, NULL), -EINVAL);
	ASSERT_EQ(store_doc_rename(s, it.id, "notes", "archive", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_read(s, it.id, "archive/a.md", &data, &len), 0);
	ASSERT_STREQ(data, "a");
	free(data);
	ASSERT_EQ(store_doc_stat(s, it.id, "archive/a.md", &m), 0);
	ASSERT_EQ(m.mode, 0600);
	ASSERT_EQ(store_doc_stat(s, it.id, "notes/a.md", &m), -ENOENT);

	/* Rename over an existing document: the target's history goes on. */
	ASSERT_EQ(store_doc_write(s, it.id, "tmp.swp", "three\n", 6, (mode_t)-1, -1, "create", &who, NULL), 0);
	replaced = -1;
	ASSERT_EQ(store_doc_rename(s, it.id, "tmp.swp", "plan.md", 1, &who, &replaced), -EEXIST);
	ASSERT_EQ(replaced, 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "plan.md", &m), 0);
	ASSERT_EQ(m.rev, 2);
	ASSERT_EQ(store_doc_rename(s, it.id, "tmp.swp", "plan.md", 0, &who, &replaced), 0);
	ASSERT_EQ(replaced, 2); /* what plan.md held: still its revision 2 */
	ASSERT_EQ(store_rev_read(s, it.id, "plan.md", 2, &data, &len), 0);
	ASSERT_STREQ(data, "two\n");
	free(data);
	ASSERT_EQ(store_doc_stat(s, it.id, "plan.md", &m), 0);
	ASSERT_EQ(m.rev, 3);
	ASSERT_EQ(store_doc_rename(s, it.id, "plan.md", "archive", 0, &who, &replaced), -EISDIR);
	ASSERT_EQ(replaced, 0);

	/* Unlink keeps every revision. */
	ASSERT_EQ(store_doc_unlink(s, it.id, "plan.md", &who), 0);
	ASSERT_EQ(store_doc_unlink(s, it.id, "plan.md", &who), -ENOENT);
	ASSERT_EQ(store_doc_read(s, it.id, "plan.md", &data, &len), -ENOENT);
	ASSERT_EQ(store_rev_each(s, it.id, "plan.md", rev_cb, revs), 0);
	ASSERT_STREQ(revs, "plan.md@1:create:4:vim;plan.md@2:write:4:vim;plan.md@3:rename:6:vim;"
			   "plan.md@4:unlink:-1:vim;");
	ASSERT_EQ(store_rev_read(s, it.id, "plan.md", 4, &data, &len), -ENOENT);

	ASSERT_EQ(store_doc_list(s, it.id, "", count_cb, &n), 0);
	ASSERT_EQ(n, 1); /* archive/ */
	n = 0;
	ASSERT_EQ(store_doc_list(s, it.id, "archive", count_cb, &n), 0);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(store_doc_unlink(s, it.id, "archive/a.md", &who), 0);
	ASSERT_EQ(store_doc_rmdir(s, it.id, "archive"), 0);
	item_clear(&it);
	store_close(s);
}

/* Times: utimens-style sets with one time kept, atime following writes and
 * kept by renames, and directory mtimes moving with their entries. */
TEST(times)
{
	struct store *s;
	struct doc_meta m, dm;
	struct item it;
	int64_t before;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT(it.dir_mtime_ns > 0);
	ASSERT_EQ(store_item_set_times(s, it.id, 100, STORE_TIME_OMIT), 0);
	ASSERT_EQ(store_item_set_times(s, it.id, STORE_TIME_OMIT, 200), 0);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "fix-1", &it), 0);
	ASSERT_EQ(it.dir_atime_ns, 100);
	ASSERT_EQ(it.dir_mtime_ns, 200);

	before = util_now_ns();
	ASSERT_EQ(store_doc_mkdir_owned(s, it.id, "t", 0755, STORE_ID_DEFAULT,
					STORE_ID_DEFAULT),
		  0);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "fix-1", &it), 0);
	ASSERT(it.dir_mtime_ns >= before && it.dir_ctime_ns >= before);
	ASSERT_EQ(it.dir_atime_ns, 100);

	ASSERT_EQ(store_doc_set_times(s, it.id, "t", 7, 8), 0);
	ASSERT_EQ(store_doc_set_times(s, it.id, "nothing", 7, 8), -ENOENT);
	before = util_now_ns();
	ASSERT_EQ(store_doc_write(s, it.id, "t/x", "x", 1, (mode_t)-1, 5000, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "t", &dm), 0);
	ASSERT(dm.mtime_ns >= before);
	ASSERT_EQ(dm.atime_ns, 7);
	ASSERT_EQ(store_doc_stat(s, it.id, "t/x", &m), 0);
	ASSERT_EQ(m.mtime_ns, 5000);
	ASSERT_EQ(m.atime_ns, 5000);

	/* A write to an existing document leaves its directory alone. */
	ASSERT_EQ(store_doc_set_times(s, it.id, "t", STORE_TIME_OMIT, 8), 0);
	ASSERT_EQ(store_doc_set_times(s, it.id, "t/x", 9, STORE_TIME_OMIT), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "t/x", &m), 0);
	ASSERT_EQ(m.atime_ns, 9);
	ASSERT_EQ(m.mtime_ns, 5000);
	ASSERT_EQ(store_doc_write(s, it.id, "t/x", "y", 1, (mode_t)-1, 6000, "write", &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "t/x", &m), 0);
	ASSERT_EQ(m.atime_ns, 6000);
	ASSERT_EQ(store_doc_stat(s, it.id, "t", &dm), 0);
	ASSERT_EQ(dm.mtime_ns, 8);

	/* Rename out of t/: both directories move, the document keeps its times. */
	ASSERT_EQ(store_doc_set_times(s, it.id, "t/x", 9, STORE_TIME_OMIT), 0);
	ASSERT_EQ(store_item_set_times(s, it.id, STORE_TIME_OMIT, 200), 0);
	before = util_now_ns();
	ASSERT_EQ(store_doc_rename(s, it.id, "t/x", "y", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "y", &m), 0);
	ASSERT_EQ(m.atime_ns, 9);
	ASSERT_EQ(m.mtime_ns, 6000);
	ASSERT_EQ(store_doc_stat(s, it.id, "t", &dm), 0);
	ASSERT(dm.mtime_ns >= before);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "fix-1", &it), 0);
	ASSERT(it.dir_mtime_ns >= before);

	/* Unlink and rmdir; touch_parent for a directory the store does not keep. */
	ASSERT_EQ(store_doc_set_times(s, it.id, "t", STORE_TIME_OMIT, 8), 0);
	ASSERT_EQ(store_doc_write(s, it.id, "t/z", "z", 1, (mode_t)-1, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_set_times(s, it.id, "t", STORE_TIME_OMIT, 8), 0);
	before = util_now_ns();
	ASSERT_EQ(store_doc_unlink(s, it.id, "t/z", &who), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "t", &dm), 0);
	ASSERT(dm.mtime_ns >= before);
	ASSERT_EQ(store_doc_set_times(s, it.id, "t", STORE_TIME_OMIT, 8), 0);
	ASSERT_EQ(store_doc_touch_parent(s, it.id, "t/new"), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "t", &dm), 0);
	ASSERT(dm.mtime_ns >= before);
	ASSERT_EQ(store_doc_touch_parent(s, it.id, "validation/new"), 0);
	ASSERT_EQ(store_item_set_times(s, it.id, STORE_TIME_OMIT, 200), 0);
	ASSERT_EQ(store_doc_rmdir(s, it.id, "t"), 0);
	ASSERT_EQ(store_doc_unlink(s, it.id, "y", &who), 0);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "fix-1", &it), 0);
	ASSERT(it.dir_mtime_ns >= before);
	item_clear(&it);
	store_close(s);
}

/* store_run_begin's naming callback of the logs test: log_path, which
 * the run does not own. */
static char log_path[] = "validation/logs/x-03-unit-tests-3.log";

static int name_log(void *arg, struct run *r, struct buf *event)
{
	r->log_path = log_path;
	return 0;
}

TEST(logs)
{
	struct store *s;
	struct run r, got;
	struct item it;
	char buf[64], hex[65];
	int64_t size;
	ssize_t n;

	s = test_store_item(dir, 0, "fix-1", &it);
	memset(&r, 0, sizeof(r));
	r.item_id = it.id;
	strcpy(r.kind, "recipe");
	r.name = "03-unit-tests";
	r.status = RUN_RUNNING;
	strcpy(r.started_at, "2026-11-29T16:00:00Z");
	ASSERT_EQ(store_run_begin(s, &r, NULL, name_log, NULL), 0);
	ASSERT_EQ(r.run_no, 1);
	ASSERT_STREQ(r.log_path, log_path);
	ASSERT_EQ(store_log_append(s, r.id, "hello ", 6), 0);
	ASSERT_EQ(store_log_append(s, r.id, "world\n", 6), 0);
	ASSERT_EQ(store_log_append(s, r.id, "bye\n", 4), 0);
	n = store_log_read(s, r.id, 0, buf, sizeof(buf));
	ASSERT_EQ(n, 16);
	ASSERT(memcmp(buf, "hello world\nbye\n", 16) == 0);
	n = store_log_read(s, r.id, 4, buf, 5); /* spans two chunks */
	ASSERT_EQ(n, 5);
	ASSERT(memcmp(buf, "o wor", 5) == 0);
	ASSERT_EQ(store_log_read(s, r.id, 16, buf, 8), 0);
	ASSERT_EQ(store_log_sha256(s, r.id, hex, &size), 0);
	ASSERT_EQ(size, 16);
	{
		char want[65];

		util_sha256_hex("hello world\nbye\n", 16, want);
		ASSERT_STREQ(hex, want);
	}
	ASSERT_EQ(store_run_by_log(s, it.id, "validation/logs/x-03-unit-tests-3.log", &got), 0);
	ASSERT_EQ(got.log_size, 16);
	ASSERT_EQ(got.status, RUN_RUNNING);
	ASSERT_EQ(got.has_exit_code, 0);
	run_clear(&got);
	/* Every mutable field is written; the log's size and offset stay. */
	r.status = RUN_VALIDATED;
	r.has_exit_code = 1;
	r.exit_code = 3;
	r.signal = 9;
	r.note = "a note";
	strcpy(r.head, "0123456789012345678901234567890123456789");
	r.gpus = "[0]";
	strcpy(r.finished_at, "2026-11-29T16:00:02Z");
	r.duration_s = 2.5;
	strcpy(r.log_sha256, hex);
	strcpy(r.executor, "slurm");
	strcpy(r.job_id, "42");
	r.job_output = "/tmp/job.out";
	r.job_offset = 7;
	ASSERT_EQ(store_run_update(s, &r), 0);
	ASSERT_EQ(store_run_get(s, r.id, &got), 0);
	ASSERT_EQ(got.status, RUN_VALIDATED);
	ASSERT_EQ(got.has_exit_code, 1);
	ASSERT_EQ(got.exit_code, 3);
	ASSERT_EQ(got.signal, 9);
	ASSERT_STREQ(got.note, "a note");
	ASSERT_STREQ(got.head, r.head);
	ASSERT_STREQ(got.gpus, "[0]");
	ASSERT_STREQ(got.finished_at, "2026-11-29T16:00:02Z");
	ASSERT(got.duration_s == 2.5);
	ASSERT_STREQ(got.log_sha256, hex);
	ASSERT_STREQ(got.command, "");
	ASSERT_STREQ(got.executor, "slurm");
	ASSERT_STREQ(got.job_id, "42");
	ASSERT_STREQ(got.job_output, "/tmp/job.out");
	ASSERT_EQ(got.job_offset, 7);
	ASSERT_EQ(got.log_size, 16);
	run_clear(&got);
	/* No exit code again: NULL; no finish time: NULL, read as "". */
	r.has_exit_code = 0;
	r.finished_at[0] = '\0';
	ASSERT_EQ(store_run_update(s, &r), 0);
	ASSERT_EQ(store_run_get(s, r.id, &got), 0);
	ASSERT_EQ(got.has_exit_code, 0);
	ASSERT_STREQ(got.finished_at, "");
	run_clear(&got);
	item_clear(&it);
	store_close(s);
}

TEST(registry_append_only)
{
	struct store *s;
	char path[256], **lines = NULL, *msg = NULL;
	struct item it;
	sqlite3 *db;
	size_t n;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_registry_append(s, it.id, "{\"run\":1}", "engine", 0), 0);
	ASSERT_EQ(store_registry_append(s, it.id, "{\"run\":2}", "external", 0), 0);
	ASSERT_EQ(store_registry_append(s, it.id, "{}", "bogus", 0), -EEXIST);
	ASSERT_EQ(store_registry_lines(s, it.id, &lines, &n), 0);
	ASSERT_EQ(n, 2);
	ASSERT_STREQ(lines[1], "{\"run\":2}");
	strv_free(lines);
	/* The database refuses changes to existing lines, whoever asks. */
	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 2000);
	ASSERT(sqlite3_exec(db, "UPDATE registry SET line = 'x'", NULL, NULL, &msg) != SQLITE_OK);
	ASSERT_CONTAINS(msg, "append-only");
	sqlite3_free(msg);
	msg = NULL;
	ASSERT(sqlite3_exec(db, "DELETE FROM registry", NULL, NULL, &msg) != SQLITE_OK);
	sqlite3_free(msg);
	sqlite3_close(db);
	ASSERT_EQ(store_registry_lines(s, it.id, &lines, &n), 0);
	ASSERT_EQ(n, 2);
	strv_free(lines);
	item_clear(&it);
	store_close(s);
}

TEST(events_and_readonly)
{
	struct store *s;
	struct buf b;
	struct item it;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_event_add(s, it.id, "{\"type\":\"a\"}"), 0);
	ASSERT_EQ(store_event_add(s, 0, "{\"type\":\"b\"}"), 0);
	store_close(s);
	s = test_store_open(dir, 0, 1);
	buf_init(&b);
	ASSERT_EQ(store_events_render(s, 0, &b), 0);
	ASSERT_STREQ(b.data, "{\"type\":\"a\"}\n{\"type\":\"b\"}\n");
	buf_free(&b);
	ASSERT_EQ(store_events_render(s, it.id, &b), 0);
	ASSERT_STREQ(b.data, "{\"type\":\"a\"}\n");
	buf_free(&b);
	ASSERT(store_event_add(s, 0, "{}") < 0);
	ASSERT_EQ(store_integrity(s, &b), 0);
	buf_free(&b);
	item_clear(&it);
	store_close(s);
}

static int count_run(void *arg, const struct run *r)
{
	ASSERT_STREQ(r->job_id, "");
	ASSERT_STREQ(r->job_output, "");
	ASSERT_EQ(r->job_offset, 0);
	(*(int *)arg)++;
	return 0;
}

/* Takes the closed store in dir back to schema version, as store_old_downgrade. */
static void downgrade_to(int version, const char *extra)
{
	store_old_downgrade(dir, version, extra);
}

/* A store of version 3 (before 0004_heads): a read-only open reads items
 * with no verdict or assessment head; a read-write open migrates it, and
 * the heads are kept from then on. */
TEST(version_3)
{
	struct store *s;
	struct item it;

	s = test_store_open(dir, 0, 0);
	store_close(s);
	downgrade_to(3, NULL);
	s = test_store_item(dir, 1, "fix-1", &it);
	ASSERT_STREQ(it.verdict_head, "");
	item_clear(&it);
	store_close(s);
	s = test_store_item(dir, 0, "fix-1", &it);
	snprintf(it.verdict_head, sizeof(it.verdict_head), "%040d", 7);
	snprintf(it.assessment_head, sizeof(it.assessment_head), "%040d", 8);
	ASSERT_EQ(store_item_update(s, &it), 0);
	item_clear(&it);
	store_close(s);
	s = test_store_item(dir, 1, "fix-1", &it);
	ASSERT_STREQ(it.verdict_head, "0000000000000000000000000000000000000007");
	ASSERT_STREQ(it.assessment_head, "0000000000000000000000000000000000000008");
	item_clear(&it);
	store_close(s);
}

/* A store of version 4 (before 0005_rounds): a read-only open reads items
 * with no round and no disposition, and finds no learnings row; a
 * read-write open migrates it: the columns are kept, and the learnings row
 * (ITEM_LEARNINGS, listed by no walk of items) exists. */
static int count_learnings(void *arg, const struct item *it)
{
	if (strcmp(it->name, "learnings") == 0)
		(*(int *)arg)++;
	return 0;
}

TEST(version_4)
{
	struct store *s;
	struct item it;
	int n;

	s = test_store_open(dir, 0, 0);
	store_close(s);
	downgrade_to(4, NULL);
	s = test_store_item(dir, 1, "fix-1", &it);
	ASSERT_EQ(it.round, 0);
	ASSERT_STREQ(it.disposition, "");
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "learnings", &it), -ENOENT);
	store_close(s);
	s = test_store_item(dir, 0, "learnings", &it);
	ASSERT_EQ(it.archived, ITEM_LEARNINGS);
	item_clear(&it);
	ASSERT_EQ(store_item_get(s, "fix-1", &it), 0);
	it.round = 3;
	free(it.disposition);
	it.disposition = strdup("duplicate");
	ASSERT_EQ(store_item_update(s, &it), 0);
	item_clear(&it);
	n = 0;
	ASSERT_EQ(store_item_each(s, 0, count_learnings, &n), 0);
	ASSERT_EQ(store_item_each(s, 1, count_learnings, &n), 0);
	ASSERT_EQ(n, 0);
	store_close(s);
	s = test_store_item(dir, 1, "fix-1", &it);
	ASSERT_EQ(it.round, 3);
	ASSERT_STREQ(it.disposition, "duplicate");
	item_clear(&it);
	store_close(s);
}

/* The first k lines of the document version_7 writes, one revision each. */
static void hist_text(struct buf *b, int k)
{
	int i;

	buf_free(b);
	for (i = 1; i <= k; i++)
		ASSERT_EQ(buf_printf(b, "line %d of a document that grows by one line\n", i), 0);
}

/* Every revision 1..n of hist.md reads back as written, and as many as
 * `whole` are stored as written (enc 0). */
static void hist_check(struct store *s, int64_t item, int n, int whole)
{
	struct buf want;
	sqlite3_stmt *st;
	size_t len;
	char *data;
	int k;

	buf_init(&want);
	for (k = 1; k <= n; k++) {
		hist_text(&want, k);
		ASSERT_EQ(store_rev_read(s, item, "hist.md", k, &data, &len), 0);
		ASSERT_EQ(len, want.len);
		ASSERT(memcmp(data, want.data, len) == 0);
		free(data);
	}
	ASSERT_EQ(store_doc_read(s, item, "hist.md", &data, &len), 0);
	ASSERT_STREQ(data, want.data);
	free(data);
	buf_free(&want);
	pthread_mutex_lock(&s->lock);
	ASSERT_EQ(store__first(s, &st, "SELECT count(*) FROM revisions WHERE item_id = ? AND "
			       "path = 'hist.md' AND enc = 0", "I", item), 0);
	ASSERT_EQ(sqlite3_column_int(st, 0), whole);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
}

/* A store of version 7 (before 0008_compact: every revision whole): a
 * read-only open reads every revision; a read-write open encodes all but
 * the current one, which read back the same, as do the revisions after. */
TEST(version_7)
{
	struct store *s;
	struct buf b;
	struct item it;
	int k;

	buf_init(&b);
	s = test_store_item(dir, 0, "fix-1", &it);
	for (k = 1; k <= 40; k++) {
		hist_text(&b, k);
		ASSERT_EQ(store_doc_write(s, it.id, "hist.md", b.data, b.len, (mode_t)-1, -1, "write",
					  &who, NULL), 0);
	}
	hist_check(s, it.id, 40, 1);
	store_close(s);
	downgrade_to(7, NULL);
	s = test_store_open(dir, 0, 1);
	hist_check(s, it.id, 40, 40);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	hist_check(s, it.id, 40, 1);
	hist_text(&b, 41);
	ASSERT_EQ(store_doc_write(s, it.id, "hist.md", b.data, b.len, (mode_t)-1, -1, "write", &who,
				  NULL), 0);
	hist_check(s, it.id, 41, 1);
	store_close(s);
	item_clear(&it);
	buf_free(&b);
}

/* A store of version 1 (before 0002_times and 0003_jobs): a read-only open
 * reads it as the current version (atime = mtime, item directory times =
 * updated_at, runs without a batch job); a read-write open migrates it.
 * Runs last: it rewrites the database. */
TEST(version_1)
{
	int nruns;
	struct store *s;
	struct doc_meta m;
	struct item it;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_doc_write(s, it.id, "v1.md", "v", 1, (mode_t)-1, 4000, "create", &who, NULL), 0);
	item_clear(&it);
	store_close(s);
	downgrade_to(1, "UPDATE items SET updated_at = '2001-02-03T04:05:06Z';");

	s = test_store_item(dir, 1, "fix-1", &it);
	ASSERT_EQ(it.dir_mtime_ns, 981173106000000000LL);
	ASSERT_EQ(it.dir_atime_ns, 981173106000000000LL);
	ASSERT_STREQ(it.verdict_head, "");
	ASSERT_STREQ(it.assessment_head, "");
	ASSERT_EQ(store_doc_stat(s, it.id, "v1.md", &m), 0);
	ASSERT_EQ(m.atime_ns, 4000);
	nruns = 0;
	ASSERT_EQ(store_run_each(s, 0, NULL, RUN_ANY, count_run, &nruns), 0);
	ASSERT(nruns > 0);
	item_clear(&it);
	store_close(s);

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(it.dir_ctime_ns, 981173106000000000LL);
	ASSERT_EQ(store_doc_stat(s, it.id, "v1.md", &m), 0);
	ASSERT_EQ(m.atime_ns, 4000);
	ASSERT_EQ(store_doc_set_times(s, it.id, "v1.md", 3000, STORE_TIME_OMIT), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "v1.md", &m), 0);
	ASSERT_EQ(m.atime_ns, 3000);
	item_clear(&it);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(open_missing), CASE(items), CASE(item_each_pages),
	     CASE(item_cache), CASE(documents), CASE(times), CASE(logs),
	     CASE(registry_append_only), CASE(events_and_readonly), CASE(version_3),
	     CASE(version_4), CASE(version_7), CASE(version_1))
