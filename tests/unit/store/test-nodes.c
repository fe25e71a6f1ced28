/*
 * test-nodes.c - symlinks, FIFOs, sockets and devices in the store (schema
 * 0007): each is made with its type, device number, target, mode and
 * owner; renames keep them, an unlink's tombstone records the kind, every
 * revision says its type; a bad type, an empty or too long target and an
 * existing path are refused; a document write over a symlink makes it a
 * document. A version 8 store reads as documents alone, read-only (through
 * the compat views) and once migrated.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "store-old.h"
#include "store.h"
#include "test.h"

static char dir[] = "/tmp/pfs-nodes-XXXXXX";
static const struct store_who who = {1001, 42, "ln", ""};

/* Collects the type of every revision of a path, in order, into a string
 * of letters: f, l, p, s, c, b; '-' for a tombstone's size. */
static int rev_types(void *arg, const struct rev_info *r)
{
	char *out = arg;
	size_t n = strlen(out);

	out[n] = S_ISLNK(r->type)    ? 'l'
		 : S_ISFIFO(r->type) ? 'p'
		 : S_ISSOCK(r->type) ? 's'
		 : S_ISCHR(r->type)  ? 'c'
		 : S_ISBLK(r->type)  ? 'b'
				     : 'f';
	out[n + 1] = r->size < 0 ? '-' : '+';
	out[n + 2] = '\0';
	return 0;
}

TEST(nodes)
{
	struct store *s = test_store_open(dir, 1, 0);
	char long_target[PATH_MAX + 1], types[64] = "", *data;
	struct doc_meta m;
	int64_t id;
	size_t len;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	ASSERT_EQ(store_doc_make_node(s, id, "link", S_IFLNK, 0, "plan.md", 7, 0777, 1001, 2000, &who),
		  0);
	ASSERT_EQ(store_doc_make_node(s, id, "pipe", S_IFIFO, 5, NULL, 0, 0640, 1001, 2000, &who), 0);
	ASSERT_EQ(store_doc_make_node(s, id, "sock", S_IFSOCK, 0, NULL, 0, 0755, 1001, 2000, &who), 0);
	ASSERT_EQ(store_doc_make_node(s, id, "null", S_IFCHR, makedev(1, 3), NULL, 0, 0666, 0, 0, &who),
		  0);
	ASSERT_EQ(store_doc_make_node(s, id, "loop", S_IFBLK, makedev(7, 300), NULL, 0, 0600, 0, 0,
				      &who), 0);

	ASSERT_EQ(store_doc_stat(s, id, "link", &m), 0);
	ASSERT_EQ(m.type, S_IFLNK);
	ASSERT_EQ(m.size, 7);
	ASSERT_EQ(m.uid, 1001);
	ASSERT_EQ(m.gid, 2000);
	ASSERT_EQ(store_doc_read(s, id, "link", &data, &len), 0);
	ASSERT_STREQ(data, "plan.md");
	free(data);
	ASSERT_EQ(store_doc_stat(s, id, "pipe", &m), 0);
	ASSERT_EQ(m.type, S_IFIFO);
	ASSERT_EQ(m.rdev, 0); /* a FIFO keeps no device number */
	ASSERT_EQ(m.mode, 0640);
	ASSERT_EQ(store_doc_stat(s, id, "sock", &m), 0);
	ASSERT_EQ(m.type, S_IFSOCK);
	ASSERT_EQ(store_doc_stat(s, id, "loop", &m), 0);
	ASSERT_EQ(m.type, S_IFBLK);
	ASSERT_EQ(major(m.rdev), 7);
	ASSERT_EQ(minor(m.rdev), 300);

	/* Refused, nothing stored. */
	ASSERT_EQ(store_doc_make_node(s, id, "link", S_IFLNK, 0, "x", 1, 0777, 0, 0, &who), -EEXIST);
	ASSERT_EQ(store_doc_make_node(s, id, "f", S_IFREG, 0, NULL, 0, 0644, 0, 0, &who), -EINVAL);
	ASSERT_EQ(store_doc_make_node(s, id, "f", S_IFDIR, 0, NULL, 0, 0755, 0, 0, &who), -EINVAL);
	ASSERT_EQ(store_doc_make_node(s, id, "f", S_IFLNK, 0, "", 0, 0777, 0, 0, &who), -EINVAL);
	memset(long_target, 'a', PATH_MAX);
	long_target[PATH_MAX] = '\0';
	ASSERT_EQ(store_doc_make_node(s, id, "f", S_IFLNK, 0, long_target, PATH_MAX, 0777, 0, 0, &who),
		  -EINVAL);
	ASSERT_EQ(store_doc_make_node(s, id, "f", S_IFIFO, 0, "x", 1, 0644, 0, 0, &who), -EINVAL);
	ASSERT_EQ(store_doc_stat(s, id, "f", &m), -ENOENT);
	ASSERT_EQ(store_doc_make_node(s, id, "f", S_IFLNK, 0, long_target, PATH_MAX - 1, 0777, 0, 0,
				      &who), 0);

	/* A rename keeps the kind and the number; an unlink's tombstone
	 * records it; each revision says its type. */
	ASSERT_EQ(store_doc_rename(s, id, "null", "null2", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, id, "null2", &m), 0);
	ASSERT_EQ(m.type, S_IFCHR);
	ASSERT_EQ(m.rdev, makedev(1, 3));
	ASSERT_EQ(store_rev_stat(s, id, "null2", 1, &m), 0);
	ASSERT_EQ(m.type, S_IFCHR);
	ASSERT_EQ(m.rdev, makedev(1, 3));
	ASSERT_EQ(m.mode, 0666);
	ASSERT_EQ(m.uid, 1001);
	ASSERT_EQ(store_doc_unlink(s, id, "pipe", &who), 0);
	ASSERT_EQ(store_rev_each(s, id, "pipe", rev_types, types), 0);
	ASSERT_STREQ(types, "p+p-");
	ASSERT_EQ(store_rev_stat(s, id, "link", 1, &m), 0);
	ASSERT_EQ(m.type, S_IFLNK);
	ASSERT_EQ(m.size, 7);

	/* The engine writing a document where a symlink is replaces it. */
	ASSERT_EQ(store_doc_write(s, id, "link", "text", 4, (mode_t)-1, -1, "write", &who, NULL), 0);
	ASSERT_EQ(store_doc_stat(s, id, "link", &m), 0);
	ASSERT_EQ(m.type, S_IFREG);
	types[0] = '\0';
	ASSERT_EQ(store_rev_each(s, id, "link", rev_types, types), 0);
	ASSERT_STREQ(types, "l+f+");
	store_close(s);
}

/* A version 8 store (before 0009_nodes): documents only, read-only and after the migration. */
TEST(version_8)
{
	struct store *s;
	struct doc_meta m;
	struct item it;
	char types[16] = "";
	int ro;

	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_doc_write(s, it.id, "old.md", "o", 1, (mode_t)-1, -1, "create", &who, NULL),
		  0);
	ASSERT_EQ(store_doc_unlink(s, it.id, "sock", &who), 0);
	ASSERT_EQ(store_doc_unlink(s, it.id, "null2", &who), 0);
	ASSERT_EQ(store_doc_unlink(s, it.id, "loop", &who), 0);
	ASSERT_EQ(store_doc_unlink(s, it.id, "f", &who), 0);
	item_clear(&it);
	store_close(s);
	store_old_downgrade(dir, 8, NULL);
	for (ro = 1; ro >= 0; ro--) {
		s = test_store_item(dir, ro, "fix-1", &it);
		ASSERT_EQ(store_doc_stat(s, it.id, "old.md", &m), 0);
		ASSERT_EQ(m.type, S_IFREG);
		ASSERT_EQ(m.rdev, 0);
		types[0] = '\0';
		ASSERT_EQ(store_rev_each(s, it.id, "old.md", rev_types, types), 0);
		ASSERT_STREQ(types, "f+");
		item_clear(&it);
		store_close(s);
	}
	/* Migrated: nodes again. */
	s = test_store_item(dir, 0, "fix-1", &it);
	ASSERT_EQ(store_doc_make_node(s, it.id, "p", S_IFIFO, 0, NULL, 0, 0644, 0, 0, &who), 0);
	ASSERT_EQ(store_doc_stat(s, it.id, "p", &m), 0);
	ASSERT_EQ(m.type, S_IFIFO);
	item_clear(&it);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(nodes), CASE(version_8))
