/*
 * store_xattr.c - extended attributes of documents, document directories
 * and item directories (table xattrs, schema/0007_xattrs.sql). store.h
 * documents the public functions, store_int.h the two store_doc.c calls
 * when an entry moves or goes.
 *
 * The store keeps whatever name it is given; which namespaces a packet
 * offers (user.* alone) is the namespace's decision. Setting or removing
 * an attribute moves the entry's ctime to now, as on a local disk, in the
 * same transaction, and is done to every name of a file with hard links
 * (store_link.c).
 */
#include <errno.h>
#include <string.h>

#include "store_int.h"

/* Moves the ctime of the entry at path (the item directory for "") to
 * now. Lock held. 0 or a negative errno (none when the entry has no row:
 * a document not yet written back). */
static int touch_ctime(struct store *s, int64_t item, const char *path)
{
	int64_t now = util_now_ns();

	if (path[0] == '\0') {
		int rc = store__exec(s, "UPDATE items SET dir_ctime_ns = ? WHERE id = ?", "II", now,
				     item);
		if (rc == 0)
			store__items_changed(s);
		return rc;
	}
	return store__exec(s, "UPDATE documents SET ctime_ns = ? WHERE item_id = ? AND path = ?",
			   "IIs", now, item, path);
}

/* Ends the transaction of a change to the extended attributes of path: when
 * rc (the change's result) is 0, first moves the entry's ctime to now
 * (touch_ctime) and copies the change to the entry's other names
 * (store__link_sync). Returns the result, as store__txn_unlock() does. */
static int xattrs_changed(struct store *s, int64_t item_id, const char *path, int rc)
{
	if (rc == 0)
		rc = touch_ctime(s, item_id, path);
	if (rc == 0 && path[0])
		rc = store__link_sync(s, item_id, path, -1, STORE_LINK_ROW | STORE_LINK_XATTRS);
	return store__txn_unlock(s, rc);
}

int store_xattr_get(struct store *s, int64_t item_id, const char *path, const char *name,
		    char **value, size_t *len)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__first(s, &st, "SELECT value FROM xattrs WHERE item_id = ? AND path = ? AND "
			  "name = ?", "Iss", item_id, path, name);
	if (rc == 0)
		rc = store__blob_out(st, 0, value, len);
	else if (rc == -ENOENT)
		rc = -ENODATA;
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_xattr_set(struct store *s, int64_t item_id, const char *path, const char *name,
		    const void *value, size_t len, int how)
{
	sqlite3_stmt *st;
	int rc = store__txn_lock(s), have;

	if (rc)
		return rc;
	rc = store__first(s, &st, "SELECT 1 FROM xattrs WHERE item_id = ? AND path = ? AND "
			  "name = ?", "Iss", item_id, path, name);
	store__done(st);
	have = rc == 0;
	if (rc == -ENOENT)
		rc = 0;
	if (rc == 0 && have && how == STORE_XATTR_CREATE)
		rc = -EEXIST;
	else if (rc == 0 && !have && how == STORE_XATTR_REPLACE)
		rc = -ENODATA;
	if (rc == 0)
		rc = store__exec(s, "INSERT OR REPLACE INTO xattrs (item_id, path, name, value) "
				 "VALUES (?, ?, ?, ?)", "Issb", item_id, path, name, value ? value : "",
				 len);
	return xattrs_changed(s, item_id, path, rc);
}

int store_xattr_list(struct store *s, int64_t item_id, const char *path, struct buf *names)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, "SELECT name FROM xattrs WHERE item_id = ? AND path = ? "
			    "ORDER BY name", "Is", item_id, path);
	while (rc == 0 && (rc = store__step(s, st)) > 0) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		rc = buf_append(names, name, strlen(name) + 1);
	}
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_xattr_remove(struct store *s, int64_t item_id, const char *path, const char *name)
{
	int rc = store__txn_lock(s);

	if (rc)
		return rc;
	rc = store__exec(s, "DELETE FROM xattrs WHERE item_id = ? AND path = ? AND name = ?", "Iss",
			 item_id, path, name);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = -ENODATA;
	return xattrs_changed(s, item_id, path, rc);
}

int store__xattr_move(struct store *s, int64_t item, const char *from, const char *to)
{
	return store__exec(s, "UPDATE xattrs SET path = ? WHERE item_id = ? AND path = ?", "sIs", to,
			   item, from);
}

int store__xattr_drop(struct store *s, int64_t item, const char *path)
{
	return store__exec(s, "DELETE FROM xattrs WHERE item_id = ? AND path = ?", "Is", item, path);
}
