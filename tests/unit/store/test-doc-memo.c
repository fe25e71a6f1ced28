/*
 * test-doc-memo.c - documents rows remembered between changes
 * (store_doc_memo.c): a row read outside a transaction is given again
 * until the connection changes a row or commits, inside a transaction too
 * until its first change; a change rolled back is not given; an absent
 * row is remembered as absent; a long path is not kept; the oldest of
 * DOC_MEMO rows is dropped first; a read-only store remembers nothing. A
 * commit of a document's content (write, append, amend) leaves its row,
 * the row a read after the commit finds, and so do chmod, chown and
 * utimensat; a create and a rename also leave the directory they changed,
 * a rename the old name's absence; a transaction rolled back leaves
 * nothing. The read of a directory's row counts its subdirectories
 * (doc_meta.subdirs, what store_doc_subdirs counts), and a directory made
 * or removed below it gives the new count, remembered or not.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store.h"
#include "store_int.h"
#include "test.h"

static char dir[] = "/tmp/pfs-doc-memo-XXXXXX";
static const struct store_who who = {1000, 42, "sh", ""};

static struct store *open_store(int create, int readonly)
{
	struct store *s = NULL;
	char err[256] = "";

	ASSERT_EQ(store_open(dir, create, readonly, &s, err, sizeof(err)), 0);
	return s;
}

/* store__doc_memo_get under the lock: 1 with *rc and *m when remembered. */
static int memo(struct store *s, int64_t item, const char *path, struct doc_meta *m, int *rc)
{
	int hit;

	pthread_mutex_lock(&s->lock);
	hit = store__doc_memo_get(s, item, path, m, rc);
	pthread_mutex_unlock(&s->lock);
	return hit;
}

/* The row of (item, path) as another connection reads it now: a read-only
 * store beside s, which remembers nothing. */
static int fresh(int64_t item, const char *path, struct doc_meta *m)
{
	struct store *r = open_store(0, 1);
	int rc = store_doc_stat(r, item, path, m);

	store_close(r);
	return rc;
}

/* Whether two rows are the same, field by field (not their padding). */
static int same(const struct doc_meta *a, const struct doc_meta *b)
{
	return a->is_dir == b->is_dir && a->type == b->type && a->rdev == b->rdev &&
	       a->rev_id == b->rev_id && a->rev == b->rev && a->size == b->size &&
	       a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns &&
	       a->atime_ns == b->atime_ns && a->link == b->link && a->nlink == b->nlink;
}

/* A new item named name in s, owned by the store's owner: its id. */
static int64_t new_item(struct store *s, const char *name)
{
	int64_t item = 0;

	ASSERT_EQ(store_item_create_owned(s, name, "b", "main", STORE_ID_DEFAULT, STORE_ID_DEFAULT,
					  0755, &item), 0);
	return item;
}

TEST(remembered)
{
	struct store *s = open_store(1, 0);
	struct doc_meta m, k;
	int64_t item = new_item(s, "memo-1");
	int rc = 1;

	ASSERT_EQ(store_doc_write(s, item, "a.md", "one\n", 4, 0644, -1, "write", &who, NULL), 0);
	/* Written: the commit left its row, the one a read finds now. */
	ASSERT_EQ(memo(s, item, "a.md", &k, &rc), 1);
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(fresh(item, "a.md", &m), 0);
	ASSERT_EQ(k.rev_id, m.rev_id);
	ASSERT_EQ(k.size, 4);
	ASSERT(same(&k, &m));
	ASSERT_EQ(store_doc_stat(s, item, "a.md", &k), 0);
	ASSERT(same(&k, &m));
	/* Another path, and the same path of another item, are not it. */
	ASSERT_EQ(memo(s, item, "b.md", &k, &rc), 0);
	ASSERT_EQ(memo(s, item + 1, "a.md", &k, &rc), 0);

	/* A path of DOC_MEMO_PATH bytes or more is read every time. */
	{
		char long_path[DOC_MEMO_PATH + 8];

		memset(long_path, 'p', sizeof(long_path) - 1);
		long_path[sizeof(long_path) - 1] = '\0';
		ASSERT_EQ(store_doc_stat(s, item, long_path, &k), -ENOENT);
		ASSERT_EQ(memo(s, item, long_path, &k, &rc), 0);
	}
	/* DOC_MEMO rows kept: one more read drops the oldest. */
	{
		char name[32];
		int i;

		for (i = 0; i <= DOC_MEMO; i++) {
			snprintf(name, sizeof(name), "n%d.md", i);
			ASSERT_EQ(store_doc_stat(s, item, name, &k), -ENOENT);
		}
		ASSERT_EQ(memo(s, item, "n0.md", &k, &rc), 0);
		snprintf(name, sizeof(name), "n%d.md", DOC_MEMO);
		ASSERT_EQ(memo(s, item, name, &k, &rc), 1);
		ASSERT_EQ(rc, -ENOENT);
	}

	/* Absent, remembered as absent until a write makes it. */
	ASSERT_EQ(store_doc_stat(s, item, "b.md", &m), -ENOENT);
	ASSERT_EQ(memo(s, item, "b.md", &k, &rc), 1);
	ASSERT_EQ(rc, -ENOENT);
	ASSERT_EQ(store_doc_write(s, item, "b.md", "b\n", 2, 0644, -1, "write", &who, NULL), 0);
	ASSERT_EQ(memo(s, item, "b.md", &k, &rc), 1); /* the row the commit wrote */
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(k.size, 2);
	ASSERT_EQ(memo(s, item, "a.md", &k, &rc), 0); /* every other row, after any commit */
	ASSERT_EQ(store_doc_stat(s, item, "b.md", &m), 0);
	ASSERT_EQ(m.size, 2);

	/* Inside a transaction: given until its first change, then not;
	 * after the change is rolled back, not either (read again, it is
	 * the row as it was). */
	ASSERT_EQ(store_doc_stat(s, item, "a.md", &m), 0);
	ASSERT_EQ(store__txn_lock(s), 0);
	ASSERT_EQ(store__doc_memo_get(s, item, "a.md", &k, &rc), 1);
	ASSERT_EQ(store__exec(s, "UPDATE documents SET size = 99 WHERE item_id = ? AND path = ?",
			      "Is", item, "a.md"), 0);
	ASSERT_EQ(store__doc_memo_get(s, item, "a.md", &k, &rc), 0);
	/* Nothing read inside a transaction is kept. */
	store__doc_memo_put(s, item, "a.md", 0, &k);
	ASSERT_EQ(store__doc_memo_get(s, item, "a.md", &k, &rc), 0);
	ASSERT_EQ(store__txn_unlock(s, -EIO), -EIO); /* rolled back */
	ASSERT_EQ(memo(s, item, "a.md", &k, &rc), 0);
	ASSERT_EQ(store_doc_stat(s, item, "a.md", &k), 0);
	ASSERT_EQ(k.size, 4);
	ASSERT(same(&k, &m));

	/* An append's commit leaves the row it wrote; a read anew agrees. */
	ASSERT_EQ(store_doc_append(s, item, "a.md", "two\n", 4, (mode_t)-1, -1, &who, NULL, NULL),
		  0);
	ASSERT_EQ(memo(s, item, "a.md", &k, &rc), 1);
	ASSERT_EQ(fresh(item, "a.md", &m), 0);
	ASSERT_EQ(m.size, 8);
	ASSERT(same(&k, &m));
	/* So does an amend of that revision. */
	ASSERT_EQ(store_doc_amend(s, item, "a.md", m.rev_id, "one\ntwo\n!\n", 10, 0600, -1), 0);
	ASSERT_EQ(memo(s, item, "a.md", &k, &rc), 1);
	ASSERT_EQ(fresh(item, "a.md", &m), 0);
	ASSERT_EQ(m.size, 10);
	ASSERT_EQ(m.mode, 0600);
	ASSERT(same(&k, &m));
	/* A commit that fails leaves nothing: an append to no document. */
	ASSERT_EQ(store_doc_append(s, item, "none.md", "x\n", 2, (mode_t)-1, -1, &who, NULL, NULL),
		  -ESTALE);
	ASSERT_EQ(memo(s, item, "none.md", &k, &rc), 0);
	/* A row staged in a transaction that rolls back is dropped; one in a
	 * transaction that commits is kept. */
	ASSERT_EQ(store__txn_lock(s), 0);
	store__doc_memo_stage(s, item, "c.md", 0, &m);
	ASSERT_EQ(store__txn_unlock(s, -EIO), -EIO);
	ASSERT_EQ(memo(s, item, "c.md", &k, &rc), 0);
	ASSERT_EQ(store__txn_lock(s), 0);
	store__doc_memo_stage(s, item, "c.md", 0, &m);
	ASSERT_EQ(store__txn_unlock(s, 0), 0);
	ASSERT_EQ(memo(s, item, "c.md", &k, &rc), 1);
	ASSERT(same(&k, &m));
	store_close(s);

	/* A read-only store (another process may write) keeps nothing. */
	s = open_store(0, 1);
	ASSERT_EQ(store_doc_stat(s, item, "a.md", &m), 0);
	ASSERT_EQ(m.size, 10);
	ASSERT_EQ(memo(s, item, "a.md", &k, &rc), 0);
	store_close(s);
}

/* mkdir of path in item, owned by the store's owner. */
static int mkdir_at(struct store *s, int64_t item, const char *path)
{
	return store_doc_mkdir_owned(s, item, path, 0755, STORE_ID_DEFAULT, STORE_ID_DEFAULT);
}

/* The subdirectories of dir: from its row (stat) and counted alone
 * (store_doc_subdirs), which must agree; the row's count is returned. */
static uint32_t subdirs(struct store *s, int64_t item, const char *dir)
{
	struct doc_meta m;
	uint32_t n = 0;

	ASSERT_EQ(store_doc_stat(s, item, dir, &m), 0);
	ASSERT_EQ(store_doc_subdirs(s, item, dir, &n), 0);
	ASSERT_EQ(m.subdirs, n);
	return m.subdirs;
}

TEST(subdirectories)
{
	struct store *s = open_store(0, 0);
	struct doc_meta m;
	int64_t item = new_item(s, "memo-2");
	int rc = 1;

	ASSERT_EQ(mkdir_at(s, item, "a"), 0);
	ASSERT_EQ(mkdir_at(s, item, "a/b"), 0);
	ASSERT_EQ(mkdir_at(s, item, "a/c"), 0);
	ASSERT_EQ(mkdir_at(s, item, "a/c/d"), 0);  /* below a subdirectory: not a's */
	ASSERT_EQ(mkdir_at(s, item, "ab"), 0);     /* a name a is a prefix of: not a's */
	ASSERT_EQ(store_doc_write(s, item, "a/f.md", "f\n", 2, 0644, -1, "write", &who, NULL), 0);
	ASSERT_EQ(subdirs(s, item, "a"), 2);
	ASSERT_EQ(subdirs(s, item, "a/c"), 1);
	ASSERT_EQ(subdirs(s, item, "a/b"), 0);
	/* A document counts none. */
	ASSERT_EQ(store_doc_stat(s, item, "a/f.md", &m), 0);
	ASSERT_EQ(m.subdirs, 0);
	/* Remembered with its count, and counted anew after a change. */
	ASSERT_EQ(store_doc_stat(s, item, "a", &m), 0);
	ASSERT_EQ(memo(s, item, "a", &m, &rc), 1);
	ASSERT_EQ(m.subdirs, 2);
	ASSERT_EQ(store_doc_rmdir(s, item, "a/b"), 0);
	ASSERT_EQ(subdirs(s, item, "a"), 1);
	ASSERT_EQ(mkdir_at(s, item, "a/e"), 0);
	ASSERT_EQ(mkdir_at(s, item, "a/g"), 0);
	ASSERT_EQ(subdirs(s, item, "a"), 3);
	store_close(s);
}

/* Whether the memo of s holds (item, path) as another connection reads it
 * now: the same row, or the same absence. */
static int staged_right(struct store *s, int64_t item, const char *path)
{
	struct doc_meta k, m;
	int rc = 1, frc;

	if (memo(s, item, path, &k, &rc) != 1)
		return 0;
	frc = fresh(item, path, &m);
	return rc == frc && (rc != 0 || same(&k, &m));
}

TEST(staged_by_writes)
{
	struct store *s = open_store(1, 0);
	struct doc_meta m, k;
	int64_t item = new_item(s, "memo-3");
	int rc = 1;

	ASSERT_EQ(mkdir_at(s, item, "d"), 0);
	/* A create leaves the new row and its directory's (its times moved). */
	ASSERT_EQ(store_doc_write_owned(s, item, "d/.a.swp", "one\n", 4, 0600, -1, "create", &who,
					STORE_ID_DEFAULT, STORE_ID_DEFAULT, NULL), 0);
	ASSERT(staged_right(s, item, "d/.a.swp"));
	ASSERT(staged_right(s, item, "d"));
	/* A rewrite of it leaves its row, not the directory's (unchanged, but
	 * the commit changed rows: read again). */
	ASSERT_EQ(store_doc_write_owned(s, item, "d/.a.swp", "two\n", 4, 0600, -1, "write", &who,
					STORE_ID_DEFAULT, STORE_ID_DEFAULT, NULL), 0);
	ASSERT(staged_right(s, item, "d/.a.swp"));
	ASSERT_EQ(memo(s, item, "d", &k, &rc), 0);
	/* chmod, chown, utimensat leave the row they changed. */
	ASSERT_EQ(store_doc_set_mode(s, item, "d/.a.swp", 0644), 0);
	ASSERT(staged_right(s, item, "d/.a.swp"));
	ASSERT_EQ(memo(s, item, "d/.a.swp", &k, &rc), 1);
	ASSERT_EQ(k.mode, 0644);
	ASSERT_EQ(store_doc_set_owner(s, item, "d/.a.swp", 1001, 1002, 0640), 0);
	ASSERT(staged_right(s, item, "d/.a.swp"));
	ASSERT_EQ(store_doc_set_times(s, item, "d/.a.swp", 1000, 2000), 0);
	ASSERT(staged_right(s, item, "d/.a.swp"));
	ASSERT_EQ(memo(s, item, "d/.a.swp", &k, &rc), 1);
	ASSERT_EQ(k.mtime_ns, 2000);
	/* Of no row: nothing changed, nothing staged. */
	ASSERT_EQ(store_doc_set_mode(s, item, "d/none", 0644), -ENOENT);
	ASSERT_EQ(memo(s, item, "d/none", &k, &rc), 0);
	/* A temp save's rename leaves the directory and the old name, gone. */
	ASSERT_EQ(store_doc_rename(s, item, "d/.a.swp", "d/a.md", 0, &who, NULL), 0);
	ASSERT(staged_right(s, item, "d"));
	ASSERT(staged_right(s, item, "d/.a.swp"));
	ASSERT_EQ(memo(s, item, "d/.a.swp", &k, &rc), 1);
	ASSERT_EQ(rc, -ENOENT);
	/* Into another directory: the new one's row (and only one time move
	 * of each: their rows are what a read finds). */
	ASSERT_EQ(mkdir_at(s, item, "e"), 0);
	ASSERT_EQ(store_doc_stat(s, item, "e", &m), 0);
	ASSERT_EQ(store_doc_rename(s, item, "d/a.md", "e/a.md", 0, &who, NULL), 0);
	ASSERT(staged_right(s, item, "e"));
	ASSERT_EQ(memo(s, item, "e", &k, &rc), 1);
	ASSERT(k.mtime_ns > m.mtime_ns);
	ASSERT(staged_right(s, item, "d/a.md"));
	ASSERT_EQ(fresh(item, "d", &m), 0);
	ASSERT_EQ(store_doc_stat(s, item, "d", &k), 0);
	ASSERT(same(&k, &m));
	/* In the item's own directory: no documents row to stage for it. */
	ASSERT_EQ(store_doc_write_owned(s, item, "top.md", "t\n", 2, 0644, -1, "create", &who,
					STORE_ID_DEFAULT, STORE_ID_DEFAULT, NULL), 0);
	ASSERT(staged_right(s, item, "top.md"));
	ASSERT_EQ(memo(s, item, "", &k, &rc), 0);
	/* A file of two names: chmod of one changes both; the other is read
	 * again, and agrees. */
	ASSERT_EQ(store_doc_link(s, item, "e/a.md", "e/b.md", &who), 0);
	ASSERT_EQ(store_doc_stat(s, item, "e/b.md", &k), 0);
	ASSERT_EQ(store_doc_set_mode(s, item, "e/a.md", 0600), 0);
	ASSERT(staged_right(s, item, "e/a.md"));
	ASSERT_EQ(memo(s, item, "e/b.md", &k, &rc), 0);
	ASSERT_EQ(store_doc_stat(s, item, "e/b.md", &k), 0);
	ASSERT_EQ(k.mode, 0600);
	/* DOC_STAGED rows at most: one more replaces the last, a path staged
	 * again its first staging; a rollback drops them all. */
	ASSERT_EQ(fresh(item, "e/a.md", &m), 0);
	ASSERT_EQ(store__txn_lock(s), 0);
	store__doc_memo_stage(s, item, "x1", -ENOENT, NULL);
	store__doc_memo_stage(s, item, "x1", 0, &m);
	store__doc_memo_stage(s, item, "x2", -ENOENT, NULL);
	store__doc_memo_stage(s, item, "x3", -ENOENT, NULL);
	ASSERT_EQ(store__txn_unlock(s, 0), 0);
	ASSERT_EQ(memo(s, item, "x1", &k, &rc), 1);
	ASSERT_EQ(rc, 0);
	ASSERT(same(&k, &m));
	ASSERT_EQ(memo(s, item, "x2", &k, &rc), DOC_STAGED > 2);
	ASSERT_EQ(memo(s, item, "x3", &k, &rc), 1);
	ASSERT_EQ(rc, -ENOENT);
	ASSERT_EQ(store__txn_lock(s), 0);
	store__doc_memo_stage(s, item, "y1", -ENOENT, NULL);
	store__doc_memo_stage(s, item, "y2", -ENOENT, NULL);
	ASSERT_EQ(store__txn_unlock(s, -EIO), -EIO);
	ASSERT_EQ(memo(s, item, "y1", &k, &rc), 0);
	ASSERT_EQ(memo(s, item, "y2", &k, &rc), 0);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(remembered), CASE(subdirectories), CASE(staged_by_writes))
