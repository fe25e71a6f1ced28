/*
 * test-inode.c - unit tests of the inode table (fs/inode.c): lookup counts,
 * forget, unlink keeping inodes alive, rename of subtrees, growth, that
 * numbers are never reused, the mark of inodes whose attributes the
 * kernel caches, and the names of one file (hard links) as one inode.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "inode.h"
#include "test.h"

/* The path of inode ino in t is want. */
static void expect_path(struct inode_table *t, uint64_t ino, const char *want)
{
	char *p = NULL;

	ASSERT_EQ(0, inode_path(t, ino, &p));
	ASSERT_STREQ(want, p);
	free(p);
}

/* The number of path in t, looked up once more (inode_ref, which must
 * succeed), of the file file (0: none). */
static uint64_t ref_file(struct inode_table *t, const char *path, uint64_t file)
{
	uint64_t ino = 0;

	ASSERT_EQ(0, inode_ref(t, path, file, &ino));
	return ino;
}

static uint64_t ref(struct inode_table *t, const char *path)
{
	return ref_file(t, path, 0);
}

/* A new table (inode_table_free it). */
static struct inode_table *new_table(void)
{
	struct inode_table *t;

	ASSERT_EQ(0, inode_table_new(&t));
	return t;
}

TEST(root)
{
	struct inode_table *t = new_table();
	char *p;

	ASSERT_EQ(1, inode_count(t));
	expect_path(t, INODE_ROOT, "/");
	ASSERT_EQ(INODE_ROOT, inode_peek(t, "/"));
	inode_forget(t, INODE_ROOT, 100);
	ASSERT_EQ(INODE_ROOT, inode_peek(t, "/"));
	inode_unlink(t, "/");
	ASSERT_EQ(INODE_ROOT, inode_peek(t, "/"));
	ASSERT_EQ(-ENOENT, inode_path(t, 999, &p));
	inode_table_free(t);
}

TEST(ref_forget)
{
	struct inode_table *t = new_table();
	uint64_t a, a2, b;

	a = ref(t, "/fix-1");
	a2 = ref(t, "/fix-1");
	ASSERT_EQ(a, a2);
	b = ref(t, "/fix-1/plan.md");
	ASSERT(a != b);
	ASSERT_EQ(3, inode_count(t));
	inode_forget(t, a, 1);
	ASSERT_EQ(a, inode_peek(t, "/fix-1"));
	inode_forget(t, a, 1);
	ASSERT_EQ(0, inode_peek(t, "/fix-1"));
	ASSERT_EQ(2, inode_count(t));
	/* a forgotten number is not reused */
	a2 = ref(t, "/fix-1");
	ASSERT(a2 != a && a2 != b);
	/* the last lookup forgotten frees, unknown numbers are ignored */
	inode_forget(t, b, 1);
	inode_forget(t, 123456, 1);
	ASSERT_EQ(0, inode_peek(t, "/fix-1/plan.md"));
	ASSERT_EQ(2, inode_count(t));
	inode_table_free(t);
}

TEST(unlink_keeps_inode)
{
	struct inode_table *t = new_table();
	uint64_t d, f, g, f2;
	char *p;

	d = ref(t, "/a");
	f = ref(t, "/a/x");
	g = ref(t, "/ab");
	inode_unlink(t, "/a");
	ASSERT_EQ(-ENOENT, inode_path(t, d, &p));
	ASSERT_EQ(-ENOENT, inode_path(t, f, &p));
	expect_path(t, g, "/ab"); /* a sibling sharing the prefix is untouched */
	ASSERT_EQ(4, inode_count(t));
	/* the path can be looked up again as a new inode */
	f2 = ref(t, "/a/x");
	ASSERT(f2 != f);
	inode_forget(t, f, 1);
	inode_forget(t, d, 1);
	ASSERT_EQ(3, inode_count(t));
	ASSERT_EQ(f2, inode_peek(t, "/a/x"));
	inode_table_free(t);
}

TEST(rename_subtree)
{
	struct inode_table *t = new_table();
	uint64_t d, f, s, other, old;
	char *p;

	d = ref(t, "/i/notes");
	f = ref(t, "/i/notes/a.md");
	s = ref(t, "/i/notes/sub/b.md");
	other = ref(t, "/i/notesx");
	old = ref(t, "/i/docs");
	ASSERT_EQ(0, inode_rename(t, "/i/notes", "/i/docs", NULL));
	expect_path(t, d, "/i/docs");
	expect_path(t, f, "/i/docs/a.md");
	expect_path(t, s, "/i/docs/sub/b.md");
	expect_path(t, other, "/i/notesx");
	/* the replaced target lost its path but lives until forgotten */
	ASSERT_EQ(-ENOENT, inode_path(t, old, &p));
	ASSERT_EQ(0, inode_peek(t, "/i/notes"));
	ASSERT_EQ(0, inode_peek(t, "/i/notes/a.md"));
	ASSERT_EQ(d, inode_peek(t, "/i/docs"));
	ASSERT_EQ(f, inode_peek(t, "/i/docs/a.md"));
	/* renaming onto itself changes nothing */
	ASSERT_EQ(0, inode_rename(t, "/i/docs", "/i/docs", NULL));
	ASSERT_EQ(d, inode_peek(t, "/i/docs"));
	/* renaming a path the table does not know drops the target's path */
	ASSERT_EQ(0, inode_rename(t, "/i/unknown", "/i/notesx", NULL));
	ASSERT_EQ(0, inode_peek(t, "/i/notesx"));
	inode_table_free(t);
}

TEST(rename_leaf)
{
	struct inode_table *t = new_table();
	uint64_t d, a, b, swp, unmarked, below, stray;
	char *p;

	d = ref(t, "/i/d");
	a = ref(t, "/i/d/a.md");
	b = ref(t, "/i/d/b.md");
	swp = ref(t, "/i/d/.b.md.swp");
	inode_set_leaf(t, a, 1);
	inode_set_leaf(t, b, 1);
	inode_set_leaf(t, swp, 1);
	inode_set_leaf(t, 999, 1); /* unknown: ignored */
	ASSERT_EQ(1, inode_is_leaf(t, a));
	ASSERT_EQ(0, inode_is_leaf(t, d)); /* never said */
	ASSERT_EQ(0, inode_is_leaf(t, 999));
	/* an editor's save: the swap file over the leaf it replaces */
	ASSERT_EQ(0, inode_rename(t, "/i/d/.b.md.swp", "/i/d/b.md", NULL));
	ASSERT_EQ(swp, inode_peek(t, "/i/d/b.md"));
	ASSERT_EQ(0, inode_peek(t, "/i/d/.b.md.swp"));
	ASSERT_EQ(-ENOENT, inode_path(t, b, &p));
	/* a leaf to a name the table does not hold */
	ASSERT_EQ(0, inode_rename(t, "/i/d/a.md", "/i/d/c.md", NULL));
	expect_path(t, a, "/i/d/c.md");
	ASSERT_EQ(0, inode_peek(t, "/i/d/a.md"));
	/* ... touches that name alone: a leaf's new name has nothing below
	 * it, so the table is not walked for names below it (a name held
	 * below one the table lacks stays, which a walk would have dropped) */
	stray = ref(t, "/i/g/y.md");
	ASSERT_EQ(0, inode_rename(t, "/i/d/c.md", "/i/g", NULL));
	expect_path(t, a, "/i/g");
	ASSERT_EQ(stray, inode_peek(t, "/i/g/y.md"));
	ASSERT_EQ(0, inode_rename(t, "/i/g", "/i/d/c.md", NULL));
	expect_path(t, a, "/i/d/c.md");
	/* a node not marked leaf still takes what the table holds below it
	 * (the kernel said it was a directory once, or never said) */
	unmarked = ref(t, "/i/e");
	below = ref(t, "/i/e/x.md");
	inode_set_leaf(t, unmarked, 1);
	inode_set_leaf(t, unmarked, 0);
	ASSERT_EQ(0, inode_is_leaf(t, unmarked));
	ASSERT_EQ(0, inode_rename(t, "/i/e", "/i/f", NULL));
	expect_path(t, below, "/i/f/x.md");
	/* unlink of a leaf drops that path alone */
	inode_unlink(t, "/i/d/b.md");
	ASSERT_EQ(-ENOENT, inode_path(t, swp, &p));
	ASSERT_EQ(a, inode_peek(t, "/i/d/c.md"));
	ASSERT_EQ(d, inode_peek(t, "/i/d"));
	/* unlink of the directory drops every path below it */
	inode_unlink(t, "/i/d");
	ASSERT_EQ(0, inode_peek(t, "/i/d/c.md"));
	ASSERT_EQ(0, inode_peek(t, "/i/d"));
	inode_table_free(t);
}

/* What inode_replaced keeps for ino in t is want. */
static void expect_replaced(struct inode_table *t, uint64_t ino, const char *want)
{
	char *p = NULL;

	ASSERT_EQ(0, inode_replaced(t, ino, &p));
	ASSERT_STREQ(want, p);
	free(p);
}

TEST(replaced_kept)
{
	struct inode_table *t = new_table();
	uint64_t doc, tmp, tmp2, other, linked;
	char *p = NULL;

	doc = ref(t, "/i/notes.md");
	tmp = ref(t, "/i/.notes.md.tmp");
	inode_set_leaf(t, doc, 1);
	inode_set_leaf(t, tmp, 1);
	ASSERT_EQ(-ENOENT, inode_replaced(t, doc, &p)); /* it has its path */
	/* a save by rename: the replaced inode keeps where it can be read */
	ASSERT_EQ(0, inode_rename(t, "/i/.notes.md.tmp", "/i/notes.md", "/i/.history/notes.md@3"));
	expect_replaced(t, doc, "/i/.history/notes.md@3");
	ASSERT_EQ(-ENOENT, inode_replaced(t, tmp, &p)); /* the moved one has a path */
	/* replaced again: the inode the last save left pathless keeps its own */
	tmp2 = ref(t, "/i/.notes.md.tmp2");
	inode_set_leaf(t, tmp2, 1);
	ASSERT_EQ(0, inode_rename(t, "/i/.notes.md.tmp2", "/i/notes.md", "/i/.history/notes.md@4"));
	expect_replaced(t, tmp, "/i/.history/notes.md@4");
	expect_replaced(t, doc, "/i/.history/notes.md@3");
	/* a rename to a name no inode holds, or without replaced, keeps nothing */
	other = ref(t, "/i/other.md");
	ASSERT_EQ(0, inode_rename(t, "/i/notes.md", "/i/new.md", "/i/.history/new.md@1"));
	ASSERT_EQ(-ENOENT, inode_replaced(t, tmp2, &p));
	ASSERT_EQ(0, inode_rename(t, "/i/new.md", "/i/other.md", NULL));
	ASSERT_EQ(-ENOENT, inode_replaced(t, other, &p));
	/* the walk (the moved node is not known as a leaf) keeps it too */
	ref(t, "/i/d/x.md");
	linked = ref(t, "/i/y.md");
	inode_set_leaf(t, linked, 1);
	ASSERT_EQ(0, inode_rename(t, "/i/d/x.md", "/i/y.md", "/i/.history/y.md@2"));
	expect_replaced(t, linked, "/i/.history/y.md@2");
	/* an inode that keeps another path (a hard link) keeps nothing */
	linked = ref_file(t, "/i/z.md", 77);
	ASSERT_EQ(linked, ref_file(t, "/i/z2.md", 77));
	ASSERT_EQ(0, inode_rename(t, "/i/y.md", "/i/z.md", "/i/.history/z.md@1"));
	ASSERT_EQ(-ENOENT, inode_replaced(t, linked, &p));
	expect_path(t, linked, "/i/z2.md");
	/* forgotten: the copy goes with the inode (ASan: no leak) */
	inode_forget(t, doc, 1);
	ASSERT_EQ(-ENOENT, inode_replaced(t, doc, &p));
	inode_table_free(t);
}

TEST(growth)
{
	struct inode_table *t = new_table();
	char path[64];
	uint64_t ino[5000];
	int i;

	for (i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "/item/doc-%d.md", i);
		ino[i] = ref(t, path);
	}
	ASSERT_EQ(5001, inode_count(t));
	for (i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "/item/doc-%d.md", i);
		ASSERT_EQ(ino[i], inode_peek(t, path));
		expect_path(t, ino[i], path);
	}
	ASSERT_EQ(0, inode_rename(t, "/item", "/moved", NULL));
	ASSERT_EQ(ino[4321], inode_peek(t, "/moved/doc-4321.md"));
	for (i = 0; i < 5000; i++)
		inode_forget(t, ino[i], 1);
	ASSERT_EQ(1, inode_count(t));
	inode_table_free(t);
}

TEST(cached_mark)
{
	struct inode_table *t = new_table();
	uint64_t a, b, again;

	a = ref(t, "/i/a.md");
	b = ref(t, "/i/b.md");
	/* unmarked inodes are not reported */
	ASSERT_EQ(0, inode_peek_cached(t, "/i/a.md"));
	inode_set_cached(t, a);
	inode_set_cached(t, 999); /* unknown: ignored */
	ASSERT_EQ(a, inode_peek_cached(t, "/i/a.md"));
	ASSERT_EQ(0, inode_peek_cached(t, "/i/b.md"));
	ASSERT_EQ(0, inode_peek_cached(t, "/i/none.md"));
	/* the mark follows the inode across a rename */
	ASSERT_EQ(0, inode_rename(t, "/i/a.md", "/i/c.md", NULL));
	ASSERT_EQ(0, inode_peek_cached(t, "/i/a.md"));
	ASSERT_EQ(a, inode_peek_cached(t, "/i/c.md"));
	/* an unlinked path is not reported; a freed inode's mark goes with it */
	inode_unlink(t, "/i/c.md");
	ASSERT_EQ(0, inode_peek_cached(t, "/i/c.md"));
	inode_forget(t, a, 1);
	again = ref(t, "/i/c.md");
	ASSERT_EQ(1, again != a);
	ASSERT_EQ(0, inode_peek_cached(t, "/i/c.md"));
	inode_forget(t, again, 1);
	inode_forget(t, b, 1);
	inode_table_free(t);
}

/* The number of path, looked up once more as a name of the engine's file
 * file (inode_ref). */
TEST(hard_links)
{
	struct inode_table *t = new_table();
	uint64_t a, b, c, other, i;
	char *path = NULL;

	/* A name looked up before its file had a second one: link(2) marks
	 * its inode, and the new name joins it. */
	a = ref(t, "/i/a");
	inode_set_file(t, a, 77);
	inode_set_file(t, 12345, 77); /* unknown: ignored */
	b = ref_file(t, "/i/sub/b", 77);
	ASSERT_EQ(a, b);
	ASSERT_EQ(2, inode_count(t));
	ASSERT_EQ(a, inode_peek(t, "/i/sub/b"));
	expect_path(t, a, "/i/a");
	/* Another file's inode never joins, nor takes 77. */
	other = ref_file(t, "/i/o", 78);
	ASSERT_EQ(1, other != a);
	inode_set_file(t, other, 77);
	ASSERT_EQ(a, ref_file(t, "/i/c", 77));
	/* unlink and rename of one name leave the others. */
	inode_unlink(t, "/i/a");
	ASSERT_EQ(0, inode_peek(t, "/i/a"));
	expect_path(t, a, "/i/sub/b");
	ASSERT_EQ(0, inode_rename(t, "/i/sub", "/i/dir", NULL));
	expect_path(t, a, "/i/dir/b");
	ASSERT_EQ(a, inode_peek(t, "/i/c"));
	inode_set_leaf(t, a, 1);
	ASSERT_EQ(0, inode_rename(t, "/i/c", "/i/o", NULL));
	ASSERT_EQ(a, inode_peek(t, "/i/o"));
	inode_unlink(t, "/i/dir/b");
	expect_path(t, a, "/i/o");
	inode_unlink(t, "/i/o");
	ASSERT_EQ(-ENOENT, inode_path(t, a, &path));
	/* Forgetting frees the inode with every name; the file's next name
	 * gets a new one. */
	c = ref_file(t, "/i/d", 77);
	ASSERT_EQ(a, c);
	inode_forget(t, a, 4);
	ASSERT_EQ(0, inode_peek(t, "/i/d"));
	c = ref_file(t, "/i/e", 77);
	ASSERT_EQ(1, c != a);
	/* Many names of many files, past the tables' growth. */
	for (i = 0; i < 300; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/j/%llu", (unsigned long long)i);
		ASSERT_EQ(c, ref_file(t, p, 77));
	}
	ASSERT_EQ(3, inode_count(t));
	expect_path(t, c, "/i/e");
	inode_forget(t, c, 301);
	inode_forget(t, other, 1);
	ASSERT_EQ(1, inode_count(t));
	inode_table_free(t);
}

int main(void)
{
	RUN(root);
	RUN(ref_forget);
	RUN(unlink_keeps_inode);
	RUN(rename_subtree);
	RUN(rename_leaf);
	RUN(replaced_kept);
	RUN(growth);
	RUN(cached_mark);
	RUN(hard_links);
	return 0;
}
