/*
 * test-links.c - hard links in the store (schema/0010_links.sql): link(2)
 * gives a document, or a node of another kind, a second name; a write, an
 * amend, chmod, chown, utimens and an extended attribute through either
 * name show through the other; the link count follows link, unlink and a
 * rename over a name; a rename between two names of one file does nothing;
 * each name keeps its own history, every revision of which reads back
 * after the file's revision moved on; directories, existing targets and
 * missing sources are refused with nothing stored. A version 9 store reads
 * with every name its file's only one, read-only and once migrated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store-old.h"
#include "store.h"
#include "test.h"

static char dir[] = "/tmp/pfs-links-XXXXXX";
static const struct store_who who = {1001, 42, "ln", ""};

/* The content of path in item id is want. */
static void expect_content(struct store *s, int64_t id, const char *path, const char *want)
{
	char *data = NULL;
	size_t len = 0;

	ASSERT_EQ(store_doc_read(s, id, path, &data, &len), 0);
	ASSERT_EQ(len, strlen(want));
	ASSERT_STREQ(data, want);
	free(data);
}

/* The content of revision rev of path is want. */
static void expect_rev(struct store *s, int64_t id, const char *path, int rev, const char *want)
{
	char *data = NULL;

	ASSERT_EQ(store_rev_read(s, id, path, rev, &data, NULL), 0);
	ASSERT_STREQ(data, want);
	free(data);
}

/* The link count of path is n, and it names the file link. */
static int64_t expect_nlink(struct store *s, int64_t id, const char *path, uint32_t n)
{
	struct doc_meta m;

	ASSERT_EQ(store_doc_stat(s, id, path, &m), 0);
	ASSERT_EQ(m.nlink, n);
	return m.link;
}

TEST(links)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct doc_meta a, b;
	char *v = NULL;
	size_t len;
	int64_t id, l;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	ASSERT_EQ(store_doc_write(s, id, "a", "one\n", 4, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_mkdir_owned(s, id, "sub", 0755, STORE_ID_DEFAULT, STORE_ID_DEFAULT), 0);
	ASSERT_EQ(expect_nlink(s, id, "a", 1), 0);

	/* Refused, nothing stored. */
	ASSERT_EQ(store_doc_link(s, id, "sub", "sub2", &who), -EPERM);
	ASSERT_EQ(store_doc_link(s, id, "nope", "b", &who), -ENOENT);
	ASSERT_EQ(store_doc_link(s, id, "a", "sub", &who), -EEXIST);
	ASSERT_EQ(store_doc_stat(s, id, "sub2", &a), -ENOENT);
	ASSERT_EQ(store_doc_stat(s, id, "b", &a), -ENOENT);
	ASSERT_EQ(expect_nlink(s, id, "a", 1), 0);

	ASSERT_EQ(store_xattr_set(s, id, "a", "user.k", "v1", 2, 0), 0);
	ASSERT_EQ(store_doc_link(s, id, "a", "sub/b", &who), 0);
	l = expect_nlink(s, id, "a", 2);
	ASSERT(l != 0);
	ASSERT_EQ(expect_nlink(s, id, "sub/b", 2), l);
	expect_content(s, id, "sub/b", "one\n");
	ASSERT_EQ(store_xattr_get(s, id, "sub/b", "user.k", &v, &len), 0);
	ASSERT_STREQ(v, "v1");
	free(v);
	ASSERT_EQ(store_doc_link(s, id, "sub/b", "c", &who), 0);
	ASSERT_EQ(expect_nlink(s, id, "a", 3), l);

	/* Changes through one name show through every other. */
	ASSERT_EQ(store_doc_write(s, id, "sub/b", "two\n", 4, (mode_t)-1, -1, "write", &who, NULL),
		  0);
	expect_content(s, id, "a", "two\n");
	expect_content(s, id, "c", "two\n");
	ASSERT_EQ(store_doc_set_mode(s, id, "c", 0600), 0);
	ASSERT_EQ(store_doc_set_owner(s, id, "a", 65534, 65533, 0640), 0);
	ASSERT_EQ(store_doc_set_times(s, id, "sub/b", 1000000000, 2000000000), 0);
	ASSERT_EQ(store_xattr_set(s, id, "c", "user.k", "v2", 2, 0), 0);
	ASSERT_EQ(store_xattr_set(s, id, "c", "user.n", "x", 1, 0), 0);
	ASSERT_EQ(store_doc_stat(s, id, "a", &a), 0);
	ASSERT_EQ(store_doc_stat(s, id, "sub/b", &b), 0);
	ASSERT_EQ(a.mode, 0640);
	ASSERT_EQ(b.mode, 0640);
	ASSERT_EQ(b.uid, 65534);
	ASSERT_EQ(b.gid, 65533);
	ASSERT_EQ(a.atime_ns, 1000000000);
	ASSERT_EQ(a.mtime_ns, 2000000000);
	ASSERT_EQ(a.ctime_ns, b.ctime_ns);
	ASSERT_EQ(a.rev_id, b.rev_id);
	ASSERT_EQ(store_xattr_get(s, id, "a", "user.k", &v, &len), 0);
	ASSERT_STREQ(v, "v2");
	free(v);
	ASSERT_EQ(store_xattr_remove(s, id, "sub/b", "user.n"), 0);
	ASSERT_EQ(store_xattr_get(s, id, "c", "user.n", &v, &len), -ENODATA);
	ASSERT_EQ(store_doc_amend(s, id, "a", a.rev_id, "TWO\n", 4, 0640, -1), 0);
	expect_content(s, id, "c", "TWO\n");

	/* Renaming one name onto another of the same file does nothing. */
	ASSERT_EQ(store_doc_rename(s, id, "a", "c", 0, &who, NULL), 0);
	ASSERT_EQ(expect_nlink(s, id, "a", 3), l);
	ASSERT_EQ(expect_nlink(s, id, "c", 3), l);
	/* A rename moves the name; the others follow it to its new revision. */
	ASSERT_EQ(store_doc_rename(s, id, "a", "d", 0, &who, NULL), 0);
	ASSERT_EQ(expect_nlink(s, id, "d", 3), l);
	ASSERT_EQ(store_doc_stat(s, id, "d", &a), 0);
	ASSERT_EQ(store_doc_stat(s, id, "c", &b), 0);
	ASSERT_EQ(a.rev_id, b.rev_id);
	expect_content(s, id, "sub/b", "TWO\n");

	/* unlink and a rename over a name take one link each. */
	ASSERT_EQ(store_doc_unlink(s, id, "d", &who), 0);
	ASSERT_EQ(expect_nlink(s, id, "c", 2), l);
	ASSERT_EQ(store_doc_write(s, id, "e", "other\n", 6, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, id, "e", "sub/b", 0, &who, NULL), 0);
	ASSERT_EQ(expect_nlink(s, id, "c", 1), l);
	ASSERT_EQ(expect_nlink(s, id, "sub/b", 1), 0);
	expect_content(s, id, "c", "TWO\n");
	expect_content(s, id, "sub/b", "other\n");
	ASSERT_EQ(store_doc_write(s, id, "c", "three\n", 6, (mode_t)-1, -1, "write", &who, NULL), 0);

	/* Every name's history reads back, the file's revisions having moved
	 * on (retired ones decode). */
	expect_rev(s, id, "a", 1, "one\n");
	expect_rev(s, id, "sub/b", 1, "one\n"); /* its link(2) */
	expect_rev(s, id, "sub/b", 2, "TWO\n"); /* written, then amended through a */
	expect_rev(s, id, "c", 1, "one\n");
	expect_rev(s, id, "c", 2, "three\n");
	expect_rev(s, id, "d", 1, "TWO\n");
	store_close(s);

	/* Kept across a reopen. */
	s = test_store_open(dir, 0, 1);
	ASSERT_EQ(expect_nlink(s, id, "c", 1), l);
	expect_content(s, id, "c", "three\n");
	store_close(s);
}

/* Links of a symlink and of a FIFO. */
TEST(nodes)
{
	struct store *s;
	struct doc_meta m;
	struct item it;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_doc_make_node(s, it.id, "ln", S_IFLNK, 0, "c", 1, 0777, 0, 0, &who), 0);
	ASSERT_EQ(store_doc_make_node(s, it.id, "p", S_IFIFO, 0, NULL, 0, 0600, 0, 0, &who), 0);
	ASSERT_EQ(store_doc_link(s, it.id, "ln", "ln2", &who), 0);
	ASSERT_EQ(store_doc_link(s, it.id, "p", "p2", &who), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "ln2", &m), 0);
	ASSERT_EQ(m.type, S_IFLNK);
	ASSERT_EQ(m.nlink, 2);
	expect_content(s, it.id, "ln2", "c");
	ASSERT_EQ(store_doc_stat(s, it.id, "p2", &m), 0);
	ASSERT_EQ(m.type, S_IFIFO);
	ASSERT_EQ(m.mode, 0600);
	ASSERT_EQ(store_doc_unlink(s, it.id, "p", &who), 0);
	ASSERT_EQ(expect_nlink(s, it.id, "p2", 1), m.link);
	item_clear(&it);
	store_close(s);
}

/* A version 9 store (before 0010_links): every name is its file's only
 * one, read-only and after the migration; then links work. */
TEST(version_9)
{
	struct store *s;
	struct item it;
	int ro;

	store_old_downgrade(dir, 9, "DELETE FROM documents WHERE path IN ('ln2', 'p2', 'sub/b');");
	for (ro = 1; ro >= 0; ro--) {
		s = test_store_item(dir, ro, "fix-1", &it);
		ASSERT_EQ(expect_nlink(s, it.id, "c", 1), 0);
		ASSERT_EQ(expect_nlink(s, it.id, "ln", 1), 0);
		item_clear(&it);
		store_close(s);
	}
	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_doc_link(s, it.id, "c", "c2", &who), 0);
	ASSERT_EQ(expect_nlink(s, it.id, "c2", 2), expect_nlink(s, it.id, "c", 2));
	item_clear(&it);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(links), CASE(nodes), CASE(version_9))
