/*
 * store_doc_attr.c - an entry's permission bits, owner and times, as
 * chmod(2), chown(2) and utimensat(2) set them (store.h: store_doc_set_mode,
 * store_doc_set_owner, store_doc_set_times). Each moves the entry's ctime
 * to now, as on a local disk, in the same transaction, and is done to
 * every name of a file with hard links (store_link.c). And the times of
 * the directory an entry is made in or taken out of (store__touch_parent,
 * store_doc_touch_parent).
 */
#include <errno.h>
#include <string.h>

#include "store_int.h"

/* Runs sql, an UPDATE of the documents row at path (?4, ?5) that sets
 * what ?1, ?2 (bound with "t": STORE_TIME_OMIT binds NULL) and ?6 (when
 * sql has one) say and its ctime (?3) to now, and copies the row to the
 * file's other names; the row is staged for the memo (store__doc_stage).
 * Takes the lock. 0, -ENOENT or a negative errno. */
static int doc_set(struct store *s, const char *sql, int64_t item, const char *path, int64_t v1,
		   int64_t v2, int64_t v3)
{
	const char *fmt = strstr(sql, "?6") ? "ttIIsI" : "ttIIs";
	struct doc_meta m;
	int rc = store__txn_lock(s);

	if (rc)
		return rc;
	rc = store__exec(s, sql, fmt, v1, v2, util_now_ns(), item, path, v3);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = -ENOENT;
	/* The row as changed, staged for the reply's stat that follows, gives
	 * the link number (the other names change, this row does not). */
	if (rc == 0)
		rc = store__doc_stage(s, item, path, &m);
	if (rc == 0)
		rc = store__link_sync(s, item, path, m.link, STORE_LINK_ROW);
	return store__txn_unlock(s, rc);
}

int store_doc_set_mode(struct store *s, int64_t item_id, const char *path, mode_t mode)
{
	return doc_set(s, "UPDATE documents SET mode = ?1, ctime_ns = ?3 WHERE item_id = ?4 "
		       "AND path = ?5", item_id, path, (int64_t)(mode & 07777),
		       STORE_TIME_OMIT, 0);
}

int store_doc_set_owner(struct store *s, int64_t item_id, const char *path, uid_t uid, gid_t gid,
			mode_t mode)
{
	return doc_set(s, "UPDATE documents SET uid = ?1, gid = ?2, mode = ?6, ctime_ns = ?3 "
		       "WHERE item_id = ?4 AND path = ?5", item_id, path, store__id(uid),
		       store__id(gid), (int64_t)(mode & 07777));
}

int store_doc_set_times(struct store *s, int64_t item_id, const char *path, int64_t atime_ns,
			int64_t mtime_ns)
{
	return doc_set(s, "UPDATE documents SET atime_ns = COALESCE(?1, atime_ns), "
		       "mtime_ns = COALESCE(?2, mtime_ns), ctime_ns = ?3 WHERE item_id = ?4 "
		       "AND path = ?5", item_id, path, atime_ns, mtime_ns, 0);
}

int store__touch_parent(struct store *s, int64_t item, const char *path)
{
	const char *slash = strrchr(path, '/');
	sqlite3_stmt *st;
	int rc;

	if (!slash) {
		store__items_changed(s);
		return store__exec(s, "UPDATE items SET dir_mtime_ns = ?1, dir_ctime_ns = ?1 "
				   "WHERE id = ?2", "II", util_now_ns(), item);
	}
	/* The parent's path is a prefix of path: bound with its length. */
	rc = store__prepare(s, &st, "UPDATE documents SET mtime_ns = ?1, ctime_ns = ?1 "
			    "WHERE item_id = ?2 AND path = ?3 AND is_dir = 1", "II-", util_now_ns(),
			    item);
	if (rc == 0)
		rc = store__err(s, sqlite3_bind_text(st, 3, path, (int)(slash - path),
						     SQLITE_STATIC));
	if (rc == 0)
		rc = store__step_done(s, st);
	store__done(st);
	return rc;
}

int store_doc_touch_parent(struct store *s, int64_t item_id, const char *path)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__touch_parent(s, item_id, path);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
