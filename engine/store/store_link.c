/*
 * store_link.c - hard links: the names of one file (schema/0010_links.sql).
 *
 * Every name of a file is a documents row. The names link(2) made share a
 * link number, and their rows hold the same file columns (content
 * revision, size, mode, owner, times, kind, rdev) and the same extended
 * attributes: store_doc.c and store_xattr.c change the row of the name
 * they were given and then copy it to the others with store__link_sync,
 * inside the same transaction, so no reader ever sees two names of one
 * file disagree. The link count is the number of rows (store_doc.c,
 * DOC_COLS). A name's history stays its own: its revisions are what was
 * written through it.
 */
#include <errno.h>

#include "store_int.h"

int store__link_sync(struct store *s, int64_t item, const char *path, int64_t link, int what)
{
	int rc = 0;

	if (link < 0) {
		sqlite3_stmt *st;

		rc = store__first(s, &st, "SELECT link FROM documents WHERE item_id = ? AND path = ?",
				  "Is", item, path);
		link = rc == 0 ? sqlite3_column_int64(st, 0) : 0;
		store__done(st);
		if (rc == -ENOENT) /* the item directory, or a document not stored yet */
			rc = 0;
	}
	if (rc || link == 0)
		return rc;
	if (what & STORE_LINK_ROW)
		rc = store__exec(s, "UPDATE documents SET (rev_id, size, mode, mtime_ns, ctime_ns, "
				 "atime_ns, uid, gid, kind, rdev) = (SELECT rev_id, size, mode, "
				 "mtime_ns, ctime_ns, atime_ns, uid, gid, kind, rdev FROM documents "
				 "WHERE item_id = ?1 AND path = ?2) WHERE item_id = ?1 AND link = ?3 "
				 "AND link <> 0 AND path <> ?2", "IsI", item, path, link);
	if (rc == 0 && (what & STORE_LINK_XATTRS))
		rc = store__exec(s, "DELETE FROM xattrs WHERE item_id = ?1 AND path IN (SELECT path "
				 "FROM documents WHERE item_id = ?1 AND link = ?3 AND link <> 0 AND "
				 "path <> ?2)", "IsI", item, path, link);
	if (rc == 0 && (what & STORE_LINK_XATTRS))
		rc = store__exec(s, "INSERT INTO xattrs(item_id, path, name, value) SELECT ?1, "
				 "d.path, x.name, x.value FROM documents d JOIN xattrs x ON "
				 "x.item_id = ?1 AND x.path = ?2 WHERE d.item_id = ?1 AND d.link = ?3 "
				 "AND d.link <> 0 AND d.path <> ?2", "IsI", item, path, link);
	return rc;
}

int store__link_left(struct store *s, int64_t item, int64_t link, int *left)
{
	int rc;

	*left = 0;
	if (link == 0)
		return 0;
	rc = store__exec(s, "UPDATE documents SET ctime_ns = ? WHERE item_id = ? AND link = ? AND "
			 "link <> 0", "III", util_now_ns(), item, link);
	if (rc == 0)
		*left = sqlite3_changes(s->db);
	return rc;
}

int store__link_new(struct store *s, int64_t item, int64_t *link)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT COALESCE(MAX(link), 0) + 1 FROM documents WHERE "
			      "item_id = ? AND link <> 0", "I", item);

	if (rc == 0)
		*link = sqlite3_column_int64(st, 0);
	store__done(st);
	return rc;
}

int store_doc_other_name(struct store *s, int64_t item_id, const char *path, char **other)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__first(s, &st, "SELECT p.path FROM documents d JOIN documents p ON p.item_id = "
			  "d.item_id AND p.link = d.link AND p.link <> 0 AND p.path <> d.path WHERE "
			  "d.item_id = ?1 AND d.path = ?2 AND d.link <> 0 ORDER BY p.path LIMIT 1",
			  "Is", item_id, path);
	if (rc == 0 && (*other = store__col_dup(st, 0)) == NULL)
		rc = -ENOMEM;
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
