/*
 * test-owners.c - owners in the store (schema 0006): a document, a
 * directory and an item directory made with an owner keep it across
 * writes, amends, renames and reopening; chown and the item's chmod set
 * it; what is made without one, and everything of a version 5 store, has
 * STORE_ID_DEFAULT, read-only (through the compat views) and once
 * migrated, where learnings/ becomes 02775.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store-old.h"
#include "test.h"

static char dir[] = "/tmp/pfs-owners-XXXXXX";
static const struct store_who who = {1001, 42, "vim", ""};

TEST(documents)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct doc_meta m;
	struct item it;
	int64_t id, rev_id;

	ASSERT_EQ(store_item_create_owned(s, "team", "packetfs/team", "main", 1001, 2000, 02775, &id),
		  0);
	ASSERT_EQ(store_item_get(s, "team", &it), 0);
	ASSERT_EQ(it.dir_uid, 1001);
	ASSERT_EQ(it.dir_gid, 2000);
	ASSERT_EQ(it.dir_mode, 02775);
	item_clear(&it);

	/* Made with an owner: kept by a write of another user. */
	ASSERT_EQ(store_doc_write_owned(s, id, "a.md", "a", 1, 0640, -1, "create", &who, 1001, 2000,
					NULL), 0);
	ASSERT_EQ(store_doc_write_owned(s, id, "a.md", "b", 1, (mode_t)-1, -1, "write", &who, 1002,
					1002, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, id, "a.md", &m), 0);
	ASSERT_EQ(m.uid, 1001);
	ASSERT_EQ(m.gid, 2000);
	ASSERT_EQ(m.mode, 0640);
	rev_id = m.rev_id;
	ASSERT_EQ(store_doc_amend(s, id, "a.md", rev_id, "c", 1, 0640, -1), 0);
	ASSERT_EQ(store_doc_stat(s, id, "a.md", &m), 0);
	ASSERT_EQ(m.uid, 1001);

	/* Made without: the default ids. */
	ASSERT_EQ(store_doc_write(s, id, "b.md", "b", 1, (mode_t)-1, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, id, "b.md", &m), 0);
	ASSERT_EQ(m.uid, STORE_ID_DEFAULT);
	ASSERT_EQ(m.gid, STORE_ID_DEFAULT);

	/* chown; a rename keeps the owner, also over another's document. */
	ASSERT_EQ(store_doc_set_owner(s, id, "b.md", 1003, STORE_ID_DEFAULT, 0600), 0);
	ASSERT_EQ(store_doc_rename(s, id, "b.md", "a.md", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, id, "a.md", &m), 0);
	ASSERT_EQ(m.uid, 1003);
	ASSERT_EQ(m.gid, STORE_ID_DEFAULT);
	ASSERT_EQ(m.mode, 0600);
	ASSERT_EQ(store_doc_set_owner(s, id, "none.md", 1, 1, 0600), -ENOENT);

	/* Directories, and what moves with them. */
	ASSERT_EQ(store_doc_mkdir_owned(s, id, "d", 02770, 1004, 2000), 0);
	ASSERT_EQ(store_doc_write_owned(s, id, "d/x", "x", 1, 0660, -1, "create", &who, 1001, 2000,
					NULL), 0);
	ASSERT_EQ(store_doc_rename(s, id, "d", "e", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, id, "e", &m), 0);
	ASSERT_EQ(m.uid, 1004);
	ASSERT_EQ(m.mode, 02770);
	ASSERT_EQ(store_doc_stat(s, id, "e/x", &m), 0);
	ASSERT_EQ(m.uid, 1001);
	ASSERT_EQ(m.gid, 2000);
	ASSERT_EQ(store_doc_mkdir_owned(s, id, "f", 0755, STORE_ID_DEFAULT, STORE_ID_DEFAULT), 0);
	ASSERT_EQ(store_doc_stat(s, id, "f", &m), 0);
	ASSERT_EQ(m.uid, STORE_ID_DEFAULT);

	/* The item directory: chmod and chown, seen by the next lookup. */
	ASSERT_EQ(store_item_set_owner(s, id, 0, 2001, 0750), 0);
	ASSERT_EQ(store_item_get(s, "team", &it), 0);
	ASSERT_EQ(it.dir_uid, 0);
	ASSERT_EQ(it.dir_gid, 2001);
	ASSERT_EQ(it.dir_mode, 0750);
	item_clear(&it);
	ASSERT_EQ(store_item_set_owner(s, 999999, 0, 0, 0755), -ENOENT);
	store_close(s);

	/* Kept across a reopen. */
	s = test_store_open(dir, 0, 1);
	ASSERT_EQ(store_doc_stat(s, id, "e/x", &m), 0);
	ASSERT_EQ(m.uid, 1001);
	ASSERT_EQ(m.gid, 2000);
	ASSERT_EQ(store_item_get(s, "team", &it), 0);
	ASSERT_EQ(it.dir_gid, 2001);
	item_clear(&it);
	store_close(s);
}

/* A store of version 5 reads, read-only, as owned by the defaults; a
 * read-write open migrates it to the same. */
TEST(version_5)
{
	struct store *s;
	struct doc_meta m;
	struct item it;
	int ro;

	store_old_downgrade(dir, 5, NULL);
	for (ro = 1; ro >= 0; ro--) {
		s = test_store_item(dir, ro, "team", &it);
		ASSERT_EQ(store_doc_stat(s, it.id, "e/x", &m), 0);
		ASSERT_EQ(m.uid, STORE_ID_DEFAULT);
		ASSERT_EQ(m.gid, STORE_ID_DEFAULT);
		ASSERT_EQ(m.mode, 0660);
		ASSERT_EQ(it.dir_uid, STORE_ID_DEFAULT);
		ASSERT_EQ(it.dir_gid, STORE_ID_DEFAULT);
		ASSERT_EQ(it.dir_mode, 0755);
		item_clear(&it);
		ASSERT_EQ(store_item_get(s, "learnings", &it), 0);
		ASSERT_EQ(it.dir_mode, 02775);
		item_clear(&it);
		store_close(s);
	}
}

TEST_MAIN_IN(dir, CASE(documents), CASE(version_5))
