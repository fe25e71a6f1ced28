/*
 * test-xattr.c - extended attributes in the store (store_xattr.c): set,
 * get, list and remove with their create/replace rules, on a document, a
 * directory and the item directory; attributes following renames of a
 * document and of a directory with what is below it, going with unlink
 * and rmdir, surviving a reopen; a version 6 store read read-only (no
 * attribute) and migrated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-old.h"
#include "store.h"
#include "test.h"

static char dir[] = "/tmp/pfs-xattr-XXXXXX";
static const struct store_who who = {1000, 42, "setfattr", ""};

/* The value of name at path, or NULL when get fails (freed by the caller). */
static char *get(struct store *s, int64_t item, const char *path, const char *name)
{
	char *v = NULL;
	size_t len = 0;

	return store_xattr_get(s, item, path, name, &v, &len) == 0 ? v : NULL;
}

static void assert_value(struct store *s, int64_t item, const char *path, const char *name,
			 const char *want)
{
	char *v = get(s, item, path, name);

	if (!want) {
		ASSERT(v == NULL);
		return;
	}
	ASSERT(v != NULL);
	ASSERT_STREQ(v, want);
	free(v);
}

TEST(attributes)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct doc_meta m0, m1;
	struct buf names;
	int64_t id;
	char *v = NULL;
	size_t len = 0;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	ASSERT_EQ(store_doc_write(s, id, "a.md", "a", 1, (mode_t)-1, 1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_mkdir_owned(s, id, "d", 0755, STORE_ID_DEFAULT, STORE_ID_DEFAULT), 0);
	ASSERT_EQ(store_doc_write(s, id, "d/b.md", "b", 1, (mode_t)-1, 1, "create", &who, NULL), 0);

	ASSERT_EQ(store_xattr_get(s, id, "a.md", "user.x", &v, &len), -ENODATA);
	ASSERT_EQ(store_doc_stat(s, id, "a.md", &m0), 0);
	ASSERT_EQ(store_xattr_set(s, id, "a.md", "user.x", "1\0two", 5, 0), 0);
	ASSERT_EQ(store_doc_stat(s, id, "a.md", &m1), 0);
	ASSERT(m1.ctime_ns >= m0.ctime_ns);
	ASSERT_EQ(store_xattr_get(s, id, "a.md", "user.x", &v, &len), 0);
	ASSERT_EQ(len, 5);
	ASSERT(memcmp(v, "1\0two", 5) == 0);
	free(v);
	ASSERT_EQ(store_xattr_set(s, id, "a.md", "user.x", "2", 1, STORE_XATTR_CREATE), -EEXIST);
	ASSERT_EQ(store_xattr_set(s, id, "a.md", "user.y", "2", 1, STORE_XATTR_REPLACE), -ENODATA);
	ASSERT_EQ(store_xattr_set(s, id, "a.md", "user.x", "2", 1, STORE_XATTR_REPLACE), 0);
	assert_value(s, id, "a.md", "user.x", "2");
	ASSERT_EQ(store_xattr_set(s, id, "a.md", "user.empty", NULL, 0, STORE_XATTR_CREATE), 0);
	assert_value(s, id, "a.md", "user.empty", "");
	ASSERT_EQ(store_xattr_set(s, id, "d", "user.dir", "dir", 3, 0), 0);
	ASSERT_EQ(store_xattr_set(s, id, "d/b.md", "user.deep", "deep", 4, 0), 0);
	ASSERT_EQ(store_xattr_set(s, id, "", "user.item", "item", 4, 0), 0);

	buf_init(&names);
	ASSERT_EQ(store_xattr_list(s, id, "a.md", &names), 0);
	ASSERT_EQ(names.len, sizeof("user.empty") + sizeof("user.x"));
	ASSERT(memcmp(names.data, "user.empty\0user.x\0", names.len) == 0);
	buf_free(&names);

	ASSERT_EQ(store_xattr_remove(s, id, "a.md", "user.empty"), 0);
	ASSERT_EQ(store_xattr_remove(s, id, "a.md", "user.empty"), -ENODATA);

	/* Renames: a document; a directory and what is below it. */
	ASSERT_EQ(store_doc_rename(s, id, "a.md", "c.md", 0, &who, NULL), 0);
	assert_value(s, id, "a.md", "user.x", NULL);
	assert_value(s, id, "c.md", "user.x", "2");
	ASSERT_EQ(store_doc_rename(s, id, "d", "e", 0, &who, NULL), 0);
	assert_value(s, id, "e", "user.dir", "dir");
	assert_value(s, id, "e/b.md", "user.deep", "deep");
	assert_value(s, id, "d/b.md", "user.deep", NULL);
	/* A rename over a document takes the moved one's attributes, not the old ones. */
	ASSERT_EQ(store_doc_write(s, id, "f.md", "f", 1, (mode_t)-1, 1, "create", &who, NULL), 0);
	ASSERT_EQ(store_xattr_set(s, id, "f.md", "user.old", "old", 3, 0), 0);
	ASSERT_EQ(store_doc_rename(s, id, "c.md", "f.md", 0, &who, NULL), 0);
	assert_value(s, id, "f.md", "user.old", NULL);
	assert_value(s, id, "f.md", "user.x", "2");
	store_close(s);

	/* A reopen keeps them; unlink and rmdir drop them. */
	s = test_store_open(dir, 0, 0);
	assert_value(s, id, "f.md", "user.x", "2");
	assert_value(s, id, "", "user.item", "item");
	ASSERT_EQ(store_doc_unlink(s, id, "f.md", &who), 0);
	ASSERT_EQ(store_doc_write(s, id, "f.md", "n", 1, (mode_t)-1, 1, "create", &who, NULL), 0);
	assert_value(s, id, "f.md", "user.x", NULL);
	ASSERT_EQ(store_doc_unlink(s, id, "e/b.md", &who), 0);
	ASSERT_EQ(store_doc_rmdir(s, id, "e"), 0);
	ASSERT_EQ(store_doc_mkdir_owned(s, id, "e", 0755, STORE_ID_DEFAULT, STORE_ID_DEFAULT), 0);
	assert_value(s, id, "e", "user.dir", NULL);
	store_close(s);
}

/* A version 6 store (before 0007_xattrs): read-only, no attributes and no
 * error; opened writable, migrated. */
TEST(version_6)
{
	struct store *s;
	struct buf names;
	int64_t id = 1;

	store_old_downgrade(dir, 6, NULL);
	s = test_store_open(dir, 0, 1);
	assert_value(s, id, "", "user.item", NULL);
	buf_init(&names);
	ASSERT_EQ(store_xattr_list(s, id, "", &names), 0);
	ASSERT_EQ(names.len, 0);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	ASSERT_EQ(store_xattr_set(s, id, "", "user.item", "again", 5, 0), 0);
	assert_value(s, id, "", "user.item", "again");
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(attributes), CASE(version_6))
