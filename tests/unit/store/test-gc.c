/*
 * test-gc.c - reclaiming space (store_gc.c): temporary files' names are
 * told from documents' names; a deleted document's history goes once its
 * tombstone is older than the cutoff, and not before; a temporary file's
 * goes at any age; a live document, a document renamed away and a deleted
 * name whose revision is another name's content (a hard link) keep theirs,
 * and every revision of them still reads back; runs, logs and the
 * registry are untouched; the integrity check is clean after it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "store-old.h"
#include "test.h"

static char dir[] = "/tmp/pfs-gc-XXXXXX";
static const struct store_who who = {1001, 42, "vim", ""};

TEST(temp_names)
{
	static const char *const temp[] = {
		".notes.md.swp", ".notes.md.swo", ".notes.md.swx", ".x.sva", "4913", "#notes.md#", "notes.md~", "~",
		"sedAb3xZ9", "sed000000", "notes.md.tmp.4242.1f9a3c", "a.tmp.1.0", NULL,
	};
	static const char *const docs[] = {
		"notes.md", "notes.swp", ".notes.md.sxa", "notes.md.swp", "49130", "4913.md", "#notes.md",
		"sedAb3xZ", "sedAb3xZ9x", "sed-b3xZ9", "notes.tmp", "notes.md.tmp.42", "a.tmp.x.1f",
		"a.tmp.12.xyz", "plan.md", ".hidden", NULL,
	};
	size_t i;

	for (i = 0; temp[i]; i++)
		if (!store_gc_temp_name(temp[i]))
			FAIL_AT("%s is a temporary file's name", temp[i]);
	for (i = 0; docs[i]; i++)
		if (store_gc_temp_name(docs[i]))
			FAIL_AT("%s is no temporary file's name", docs[i]);
}

/* How many revisions of path item id holds that read back (from the
 * first, up to the first that does not: a tombstone, or none). */
static int revs(struct store *s, int64_t id, const char *path)
{
	char *data = NULL;
	int n = 0;

	while (store_rev_read(s, id, path, n + 1, &data, NULL) == 0) {
		free(data);
		data = NULL;
		n++;
	}
	return n;
}

TEST(reclaim)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct store_gc g;
	struct buf out = { NULL, 0, 0 };
	char *data = NULL;
	int64_t id;
	int i;

	ASSERT_EQ(store_item_create_owned(s, "fix-1", "packetfs/fix-1", "main", STORE_ID_DEFAULT,
					  STORE_ID_DEFAULT, 0755, &id), 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(store_doc_write(s, id, "notes.md", "notes\n\n\n", 6 + (size_t)i, 0644, -1,
					  "write", &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, id, "gone.md", "gone 1\n", 7, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, id, "gone.md", "gone 2\n", 7, 0644, -1, "write", &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, id, "gone.md", &who), 0);
	ASSERT_EQ(store_doc_write(s, id, ".notes.md.swp", "swap", 4, 0600, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, id, ".notes.md.swp", &who), 0);
	ASSERT_EQ(store_doc_write(s, id, "old.md", "old\n", 4, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_rename(s, id, "old.md", "new.md", 0, &who, NULL), 0);
	ASSERT_EQ(store_doc_write(s, id, "a", "linked\n", 7, 0644, -1, "create", &who, NULL), 0);
	ASSERT_EQ(store_doc_link(s, id, "a", "b", &who), 0);
	ASSERT_EQ(store_doc_write(s, id, "a", "linked 2\n", 9, 0644, -1, "write", &who, NULL), 0);
	ASSERT_EQ(store_doc_unlink(s, id, "a", &who), 0);
	ASSERT_EQ(revs(s, id, "gone.md"), 2);
	ASSERT_EQ(revs(s, id, ".notes.md.swp"), 1);

	/* A cutoff before everything: the temporary file alone. */
	ASSERT_EQ(store_gc(s, "2000-01-01T00:00:00Z", &g), 0);
	ASSERT_EQ(g.paths, 1);
	ASSERT_EQ(g.revisions, 2);
	ASSERT_EQ(g.bytes, 4);
	ASSERT_EQ(revs(s, id, ".notes.md.swp"), 0);
	ASSERT_EQ(revs(s, id, "gone.md"), 2);

	/* A cutoff after everything: the deleted document too. */
	ASSERT_EQ(store_gc(s, "9999-01-01T00:00:00Z", &g), 0);
	ASSERT_EQ(g.paths, 1);
	ASSERT_EQ(g.revisions, 3);
	ASSERT_EQ(revs(s, id, "gone.md"), 0);
	ASSERT_EQ(store_gc(s, "9999-01-01T00:00:00Z", &g), 0);
	ASSERT_EQ(g.paths, 0);
	ASSERT_EQ(g.revisions, 0);

	/* What stays reads back, every revision. */
	ASSERT_EQ(revs(s, id, "notes.md"), 3);
	ASSERT_EQ(store_rev_read(s, id, "notes.md", 1, &data, NULL), 0);
	ASSERT_STREQ(data, "notes\n");
	free(data);
	ASSERT_EQ(revs(s, id, "old.md"), 1);
	ASSERT_EQ(store_rev_read(s, id, "old.md", 1, &data, NULL), 0);
	ASSERT_STREQ(data, "old\n");
	free(data);
	ASSERT(revs(s, id, "a") >= 2);
	ASSERT_EQ(store_doc_read(s, id, "b", &data, NULL), 0);
	ASSERT_STREQ(data, "linked 2\n");
	free(data);
	ASSERT_EQ(store_integrity(s, &out), 0);
	buf_free(&out);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(temp_names), CASE(reclaim))
