/*
 * store_doc.c - documents and their revisions in the store (store.h; how
 * revisions are stored, and every read of one: store_rev.c).
 *
 * The live tree of an item is the documents table; every change of a
 * document adds a row to revisions (a tombstone for unlink and for the old
 * path of a rename), so history is never lost. Rows are keyed by path
 * inside the item; a directory's subtree is the range (dir "/", dir "0"),
 * '0' being the byte after '/'. The revision a documents row names is its
 * current one, stored whole; every change that makes a revision stop being
 * current (write, unlink, rename away or over) retires it in the same
 * transaction (store__rev_retire), which encodes it compactly.
 *
 * Times: a content write sets a document's mtime (and its atime to the
 * same: reads never move atime, as on a noatime mount); utimens sets them
 * explicitly. Every change that adds or removes an entry moves the mtime
 * and ctime of the directory holding it (a documents row, or the items row
 * for the item's top level) in the same transaction.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_int.h"

/* A directory's subdirectories (store_doc_subdirs), after DOC_COLS in the
 * read of one row: a stat of a directory asks for them, a listing does
 * not. */
#define DOC_SUBDIRS                                                                          \
	"CASE WHEN d.is_dir THEN (SELECT count(*) FROM documents c WHERE c.item_id = d.item_id " \
	"AND c.is_dir = 1 AND c.path > d.path || '/' AND c.path < d.path || '0' AND "           \
	"instr(substr(c.path, length(d.path) + 2), '/') = 0) ELSE 0 END"

/* The kinds of entry the kind columns name (schema/0009_nodes.sql), with
 * the file types they stand for. */
static const struct {
	const char *name;
	mode_t type;
} kinds[] = {
	{"file", S_IFREG}, {"symlink", S_IFLNK}, {"fifo", S_IFIFO},
	{"socket", S_IFSOCK}, {"char", S_IFCHR}, {"block", S_IFBLK},
};

/* The kind column's value for file type type, or NULL for none. */
static const char *kind_name(mode_t type)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].type == type)
			return kinds[i].name;
	return NULL;
}

mode_t store__kind_type(sqlite3_stmt *st, int col)
{
	const char *v = (const char *)sqlite3_column_text(st, col);
	size_t i;

	for (i = 0; v && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, v) == 0)
			return kinds[i].type;
	return S_IFREG;
}

void store__doc_row(sqlite3_stmt *st, int first, struct doc_meta *m)
{
	m->is_dir = sqlite3_column_int(st, first);
	m->type = m->is_dir ? 0 : store__kind_type(st, first + 10);
	m->rdev = (uint64_t)sqlite3_column_int64(st, first + 11);
	m->rev_id = sqlite3_column_int64(st, first + 1);
	m->size = (uint64_t)sqlite3_column_int64(st, first + 2);
	m->mode = (mode_t)sqlite3_column_int(st, first + 3);
	m->mtime_ns = sqlite3_column_int64(st, first + 4);
	m->ctime_ns = sqlite3_column_int64(st, first + 5);
	m->rev = sqlite3_column_int(st, first + 6);
	m->atime_ns = sqlite3_column_int64(st, first + 7);
	m->uid = (uid_t)sqlite3_column_int64(st, first + 8);
	m->gid = (gid_t)sqlite3_column_int64(st, first + 9);
	m->link = sqlite3_column_int64(st, first + 12);
	m->nlink = (uint32_t)sqlite3_column_int64(st, first + 13);
	m->subdirs = 0;
}

/* The documents row of (item, path) into m, with a directory's
 * subdirectories, read now: one statement. 0, -ENOENT or a negative
 * errno. Lock held. */
static int doc_row_get(struct store *s, int64_t item, const char *path, struct doc_meta *m)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT " DOC_COLS ", " DOC_SUBDIRS " FROM documents d "
			      "WHERE d.item_id = ? AND d.path = ?", "Is", item, path);

	if (rc == 0) {
		store__doc_row(st, 0, m);
		m->subdirs = (uint32_t)sqlite3_column_int64(st, 14);
	}
	store__done(st);
	return rc;
}

/* doc_row_get, or the row remembered since the last change
 * (store_doc_memo.c). Lock held. */
static int doc_stat_locked(struct store *s, int64_t item, const char *path, struct doc_meta *m)
{
	int rc;

	if (store__doc_memo_get(s, item, path, m, &rc))
		return rc;
	rc = doc_row_get(s, item, path, m);
	store__doc_memo_put(s, item, path, rc, m);
	return rc;
}

int store__doc_stage(struct store *s, int64_t item, const char *path, struct doc_meta *m)
{
	int rc = doc_row_get(s, item, path, m);

	if (rc == 0 || rc == -ENOENT)
		store__doc_memo_stage(s, item, path, rc, m);
	return rc;
}

/* The end of a commit of path's content: its row as the transaction leaves
 * it, kept once the commit succeeds (store__doc_stage), so that the next
 * open finds it without a read transaction of its own. Nothing when the
 * transaction failed (rc). Lock held, inside the transaction, after its
 * last change to that row. Returns rc. */
static int doc_stage(struct store *s, int64_t item, const char *path, int rc)
{
	struct doc_meta m;

	if (rc == 0)
		(void)store__doc_stage(s, item, path, &m);
	return rc;
}

/* The end of a commit that made or removed an entry of path's parent
 * directory (touch_parent_locked): the parent's row staged as doc_stage
 * stages path's, for the GETATTR the kernel sends next (it drops a
 * directory's attributes at each entry made or removed in it). Nothing for
 * an entry of the item's own directory (an items row, not a documents
 * row), a parent's path of DOC_MEMO_PATH bytes or more, or a failed rc.
 * Lock held, inside the transaction, after its last change to the parent.
 * Returns rc. */
static int parent_stage(struct store *s, int64_t item, const char *path, int rc)
{
	const char *slash = strrchr(path, '/');
	char dir[DOC_MEMO_PATH];
	size_t len;

	if (rc || !slash || (len = (size_t)(slash - path)) >= sizeof(dir))
		return rc;
	memcpy(dir, path, len);
	dir[len] = '\0';
	return doc_stage(s, item, dir, rc);
}

/* Whether a and b (paths in one item) are entries of one directory. */
static int same_parent(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');

	return sa && sb ? sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0 : !sa && !sb;
}

/*
 * Takes the write transaction and reads path's metadata into m. Returns
 * doc_stat_locked's result (0, -ENOENT, an error) with *locked = 1: the
 * caller ends the transaction with store__txn_unlock; or store__txn_lock's
 * error with *locked = 0.
 */
static int doc_txn_stat(struct store *s, int64_t item, const char *path, struct doc_meta *m,
			int *locked)
{
	int rc = store__txn_lock(s);

	*locked = rc == 0;
	return rc ? rc : doc_stat_locked(s, item, path, m);
}

int store_doc_stat(struct store *s, int64_t item_id, const char *path, struct doc_meta *out)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = doc_stat_locked(s, item_id, path, out);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_doc_read(struct store *s, int64_t item_id, const char *path, char **data, size_t *len)
{
	sqlite3_stmt *st;
	int64_t rev_id = 0;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__first(s, &st, "SELECT is_dir, rev_id FROM documents WHERE item_id = ? "
			  "AND path = ?", "Is", item_id, path);
	if (rc == 0) {
		rev_id = sqlite3_column_int64(st, 1);
		rc = sqlite3_column_int(st, 0) ? -EISDIR : 0;
	}
	store__done(st);
	if (rc == 0)
		rc = store__rev_content(s, rev_id, data, len);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Inserts the row of a revision of path, size bytes of content (its
 * bytes stored by the caller, in the row slot of whole; 0: none) or a
 * tombstone (tomb), numbered after the path's revisions; a content
 * revision gets the next seq of the path's content revisions, and grown
 * (0: none) names the run of appends it continues. Lock held, inside a
 * transaction. Returns the new revision's id and number (rev may be
 * NULL).
 *
 * Two statements, the numbers read first and the row inserted with them:
 * as one INSERT whose values were subqueries of revisions, with RETURNING,
 * SQLite opened a statement journal (a savepoint) for every revision, 8%
 * of a create's commit in its profile; split, a create's commit costs
 * 26.6 µs of CPU instead of 29.4 and an append 27.6 instead of 29.9
 * (tests/bench/store-pages.c), and the daemon's CPU per create through
 * the mount 135 µs instead of 155, per `>>` 105 instead of 120
 * (store-bytes.sh; tests/bench/results/2026-12-06-vm-rev-insert.md). */
static int rev_insert(struct store *s, int64_t item, const char *path, const char *op,
		      size_t size, int tomb, mode_t mode, const struct doc_meta *node,
		      const struct store_who *who, int64_t slot, int64_t grown, int64_t *rev_id,
		      int *rev)
{
	/* The path's last revision number and the seq of its last content
	 * revision (NULL, NULL: none yet). */
	static const char sql_last[] =
		"SELECT MAX(rev), (SELECT seq FROM revisions WHERE item_id = ?1 AND path = ?2 AND "
		"content IS NOT NULL ORDER BY rev DESC LIMIT 1) FROM revisions WHERE item_id = ?1 "
		"AND path = ?2";
	/* content: X'' (the bytes are in whole, row slot) or a tombstone's
	 * NULL; grown_from: the run of appends it continues (store_rev.c). */
	static const char sql_add[] =
		"INSERT INTO revisions(item_id, path, rev, op, content, size, mode, uid, pid, comm, "
		"stage, created_at, kind, rdev, seq, slot, grown_from) VALUES (?1, ?2, ?16, ?3, ?4, "
		"?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?17, NULLIF(?14, 0), NULLIF(?15, 0))";
	/* A copy is of the entry node describes: its kind and rdev. */
	const char *kind = kind_name(node->type);
	int64_t uid = who ? (int64_t)who->uid : 0, pid = who ? (int64_t)who->pid : 0;
	const char *comm = who && who->comm ? who->comm : "";
	const char *stage = who && who->stage ? who->stage : "";
	sqlite3_stmt *st;
	char now[32];
	int rc, next;
	int64_t seq;

	rc = store__first(s, &st, sql_last, "Is", item, path);
	if (rc < 0) {
		store__done(st);
		return rc;
	}
	next = sqlite3_column_int(st, 0) + 1;
	seq = tomb ? 0 : sqlite3_column_int64(st, 1) + 1;
	store__done(st);
	store__now(now);
	rc = store__exec(s, sql_add, "IssbIiIIssssIIIiI", item, path, op, tomb ? NULL : "",
			  (size_t)0, tomb ? (int64_t)-1 : (int64_t)size, (int)mode, uid, pid, comm,
			  stage, now, kind ? kind : "file", (int64_t)node->rdev, slot, grown, next, seq);
	if (rc == 0) {
		*rev_id = sqlite3_last_insert_rowid(s->db);
		if (rev)
			*rev = next;
	}
	return rc;
}

/*
 * Inserts a revision of path: content from data/len, or the content of
 * revision copy_from (> 0), or a tombstone (tomb). A content revision is
 * stored whole (in the table whole; store_rev.c); when it replaces
 * revision prev (> 0) as the document's current one, prev is retired here
 * and its row of whole taken over (store__rev_replace; store__rev_pass_on
 * when copy_from is prev), before the new row is inserted naming it. Lock
 * held, inside a transaction. Returns the new revision's id and number.
 */
static int rev_add(struct store *s, int64_t item, const char *path, const char *op,
		   const void *data, size_t len, int64_t copy_from, int tomb, mode_t mode,
		   const struct doc_meta *node, const struct store_who *who, int64_t *rev_id, int *rev,
		   int64_t prev)
{
	char *copy = NULL;
	int64_t id = 0, slot = 0;
	int rc = 0;

	if (copy_from > 0) {
		rc = store__rev_content(s, copy_from, &copy, &len);
		data = copy;
	}
	/* The content of the revision it replaces (a rename): that one's row
	 * of whole and pieces pass on as they are, no page written again. */
	if (rc == 0 && !tomb && copy_from > 0 && copy_from == prev)
		rc = store__rev_pass_on(s, prev, data, len, &slot);
	else if (rc == 0 && !tomb)
		rc = store__rev_replace(s, prev, data, len, &slot);
	if (rc == 0)
		rc = rev_insert(s, item, path, op, len, tomb, mode, node, who, slot, 0, &id, rev);
	if (rc == 0 && rev_id)
		*rev_id = id;
	free(copy);
	return rc;
}

/* Points the live entry at path to a revision (insert or update); its
 * ctime becomes now. An entry this inserts is owned by uid and gid and
 * has node's link number; an existing one keeps its owner and link. Lock
 * held. */
static int doc_put(struct store *s, int64_t item, const char *path, int64_t rev_id, uint64_t size,
		   mode_t mode, int64_t mtime_ns, int64_t atime_ns, uid_t uid, gid_t gid,
		   const struct doc_meta *node)
{
	const char *kind = kind_name(node->type);

	return store__exec(s, "INSERT INTO documents(item_id, path, is_dir, rev_id, size, mode, "
			   "mtime_ns, ctime_ns, atime_ns, uid, gid, kind, rdev, link) VALUES (?1, ?2, 0, "
			   "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT(item_id, path) "
			   "DO UPDATE SET rev_id = ?3, size = ?4, mode = ?5, mtime_ns = ?6, "
			   "ctime_ns = ?7, atime_ns = ?8, kind = ?11, rdev = ?12",
			   "IsIIiIIIIIsII", item, path, rev_id, (int64_t)size, (int)mode, mtime_ns,
			   util_now_ns(), atime_ns, store__id(uid), store__id(gid), kind ? kind : "file",
			   (int64_t)node->rdev, node->link);
}

int store_doc_write(struct store *s, int64_t item_id, const char *path, const void *data,
		    size_t len, mode_t mode, int64_t mtime_ns, const char *op,
		    const struct store_who *who, int *rev)
{
	return store_doc_write_owned(s, item_id, path, data, len, mode, mtime_ns, op, who,
				     STORE_ID_DEFAULT, STORE_ID_DEFAULT, rev);
}

int store_doc_write_owned(struct store *s, int64_t item_id, const char *path, const void *data,
			  size_t len, mode_t mode, int64_t mtime_ns, const char *op,
			  const struct store_who *who, uid_t uid, gid_t gid, int *rev)
{
	struct doc_meta m;
	int64_t rev_id = 0;
	int rc, locked, created = 0;

	if (mtime_ns < 0)
		mtime_ns = util_now_ns();
	rc = doc_txn_stat(s, item_id, path, &m, &locked);
	if (!locked)
		return rc;
	if (rc == 0 && m.is_dir)
		rc = -EISDIR;
	else if (rc == -ENOENT)
		m.mode = 0644, m.link = 0, rc = 0, created = 1;
	/* Content written to a symlink or a special file makes it a document. */
	m.type = S_IFREG, m.rdev = 0;
	if (mode != (mode_t)-1)
		m.mode = mode & 07777;
	if (rc == 0)
		rc = rev_add(s, item_id, path, op, data, len, 0, 0, m.mode, &m, who, &rev_id, rev,
			     created ? 0 : m.rev_id);
	if (rc == 0)
		rc = doc_put(s, item_id, path, rev_id, len, m.mode, mtime_ns, mtime_ns, uid, gid, &m);
	if (rc == 0)
		rc = store__link_sync(s, item_id, path, m.link, STORE_LINK_ROW);
	if (rc == 0 && created)
		rc = store__touch_parent(s, item_id, path);
	if (created)
		rc = parent_stage(s, item_id, path, rc);
	return store__txn_unlock(s, doc_stage(s, item_id, path, rc));
}

/* store_doc_append (grow 0) and store_doc_grow (grow: the revision to
 * grow): their contracts. */
static int doc_add(struct store *s, int64_t item_id, const char *path, const void *data,
		   size_t len, mode_t mode, int64_t mtime_ns, const struct store_who *who,
		   int64_t grow, int64_t *rev_id, uint64_t *size)
{
	struct doc_meta m;
	struct rev_grown g = {0};
	int64_t id = grow;
	int rc, locked;

	if (len == 0)
		return -EINVAL;
	if (mtime_ns < 0)
		mtime_ns = util_now_ns();
	rc = doc_txn_stat(s, item_id, path, &m, &locked);
	if (!locked)
		return rc;
	if (rc == -ENOENT || (rc == 0 && (m.is_dir || m.type != S_IFREG || !m.rev_id ||
					  (grow && m.rev_id != grow))))
		rc = -ESTALE;
	if (mode != (mode_t)-1)
		m.mode = mode & 07777;
	/* The previous revision's own size (store__rev_append's), not the
	 * documents row's, is the one the new one grows. */
	if (rc == 0 && grow) {
		rc = store__rev_grow(s, grow, data, len, &g);
	} else if (rc == 0) {
		rc = store__rev_append(s, m.rev_id, data, len, &g);
		if (rc == 0)
			rc = rev_insert(s, item_id, path, "write", (size_t)g.size, 0, m.mode, &m,
					who, g.slot, g.grown, &id, NULL);
	}
	if (rc == 0)
		rc = doc_put(s, item_id, path, id, g.size, m.mode, mtime_ns, mtime_ns, m.uid, m.gid,
			     &m);
	if (rc == 0)
		rc = store__link_sync(s, item_id, path, m.link, STORE_LINK_ROW);
	/* Told only once committed: a COMMIT that fails (a full disk) leaves
	 * the caller's revision and size as they were. */
	rc = store__txn_unlock(s, doc_stage(s, item_id, path, rc));
	if (rc == 0 && rev_id)
		*rev_id = id;
	if (rc == 0 && size)
		*size = g.size;
	return rc;
}

int store_doc_append(struct store *s, int64_t item_id, const char *path, const void *data,
		     size_t len, mode_t mode, int64_t mtime_ns, const struct store_who *who,
		     int64_t *rev_id, uint64_t *size)
{
	return doc_add(s, item_id, path, data, len, mode, mtime_ns, who, 0, rev_id, size);
}

int store_doc_grow(struct store *s, int64_t item_id, const char *path, int64_t rev_id,
		   const void *data, size_t len, int64_t mtime_ns, uint64_t *size)
{
	return doc_add(s, item_id, path, data, len, (mode_t)-1, mtime_ns, NULL, rev_id, NULL,
		       size);
}

int store_doc_amend(struct store *s, int64_t item_id, const char *path, int64_t rev_id,
		    const void *data, size_t len, mode_t mode, int64_t mtime_ns)
{
	struct doc_meta m;
	int rc, locked;

	if (mtime_ns < 0)
		mtime_ns = util_now_ns();
	rc = doc_txn_stat(s, item_id, path, &m, &locked);
	if (!locked)
		return rc;
	if (rc == 0 && (m.is_dir || m.rev_id != rev_id))
		rc = -ESTALE;
	else if (rc == -ENOENT)
		rc = -ESTALE;
	if (rc == 0)
		rc = store__exec(s, "UPDATE revisions SET content = X'', size = ?, mode = ?, enc = 0, "
				 "base = NULL, depth = 0, grown_from = NULL WHERE id = ?", "IiI",
				 (int64_t)len,
				 (int)(mode & 07777), rev_id);
	if (rc == 0)
		rc = store__rev_whole(s, rev_id, data, len);
	if (rc == 0)
		rc = doc_put(s, item_id, path, rev_id, len, mode & 07777, mtime_ns, mtime_ns, m.uid,
			     m.gid, &m);
	if (rc == 0)
		rc = store__link_sync(s, item_id, path, m.link, STORE_LINK_ROW);
	return store__txn_unlock(s, doc_stage(s, item_id, path, rc));
}

int store_doc_make_node(struct store *s, int64_t item_id, const char *path, mode_t type,
			uint64_t rdev, const void *data, size_t len, mode_t mode, uid_t uid,
			gid_t gid, const struct store_who *who)
{
	struct doc_meta m, old;
	int64_t rev_id, now = util_now_ns();
	int rc, locked;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.rdev = type == S_IFCHR || type == S_IFBLK ? rdev : 0;
	if (type == S_IFREG || !kind_name(type) ||
	    (type == S_IFLNK ? len == 0 || len >= PATH_MAX : len != 0))
		return -EINVAL;
	rc = doc_txn_stat(s, item_id, path, &old, &locked);
	if (!locked)
		return rc;
	if (rc == 0)
		rc = -EEXIST;
	else if (rc == -ENOENT)
		rc = rev_add(s, item_id, path, "create", data, len, 0, 0, mode & 07777, &m, who,
			     &rev_id, NULL, 0);
	if (rc == 0)
		rc = doc_put(s, item_id, path, rev_id, len, mode & 07777, now, now, uid, gid, &m);
	if (rc == 0)
		rc = store__touch_parent(s, item_id, path);
	return store__txn_unlock(s, rc);
}

int store_doc_link(struct store *s, int64_t item_id, const char *from, const char *to,
		   const struct store_who *who)
{
	struct doc_meta m, old;
	int64_t rev_id = 0;
	int rc, locked;

	rc = doc_txn_stat(s, item_id, from, &m, &locked);
	if (!locked)
		return rc;
	if (rc == 0 && m.is_dir)
		rc = -EPERM;
	if (rc == 0) {
		rc = doc_stat_locked(s, item_id, to, &old);
		rc = rc == 0 ? -EEXIST : rc == -ENOENT ? 0 : rc;
	}
	if (rc == 0 && m.link == 0) {
		rc = store__link_new(s, item_id, &m.link);
		if (rc == 0)
			rc = store__exec(s, "UPDATE documents SET link = ? WHERE item_id = ? AND "
					 "path = ?", "IIs", m.link, item_id, from);
	}
	/* to's first revision: the content it names, retired at once (the
	 * file's current revision stays the one from names). */
	if (rc == 0)
		rc = rev_add(s, item_id, to, "link", NULL, 0, m.rev_id, 0, m.mode, &m, who, &rev_id,
			     NULL, 0);
	if (rc == 0)
		rc = store__rev_retire(s, rev_id);
	if (rc == 0)
		rc = doc_put(s, item_id, to, m.rev_id, m.size, m.mode, m.mtime_ns, m.atime_ns, m.uid,
			     m.gid, &m);
	/* to's row has the file's columns and a ctime of now: every name
	 * takes them, and from's attributes. */
	if (rc == 0)
		rc = store__exec(s, "INSERT INTO xattrs(item_id, path, name, value) SELECT item_id, "
				 "?, name, value FROM xattrs WHERE item_id = ? AND path = ?", "sIs", to,
				 item_id, from);
	if (rc == 0)
		rc = store__link_sync(s, item_id, to, m.link, STORE_LINK_ROW);
	if (rc == 0)
		rc = store__touch_parent(s, item_id, to);
	return store__txn_unlock(s, rc);
}

int store_doc_mkdir_owned(struct store *s, int64_t item_id, const char *path, mode_t mode,
			  uid_t uid, gid_t gid)
{
	int64_t now = util_now_ns();
	int rc;

	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = store__exec(s, "INSERT INTO documents(item_id, path, is_dir, rev_id, size, mode, "
			 "mtime_ns, ctime_ns, atime_ns, uid, gid) VALUES (?1, ?2, 1, NULL, 0, ?3, ?4, "
			 "?4, ?4, ?5, ?6)", "IsiIII", item_id, path, (int)(mode & 07777), now,
			 store__id(uid), store__id(gid));
	if (rc == 0)
		rc = store__touch_parent(s, item_id, path);
	return store__txn_unlock(s, rc);
}

static int doc_delete(struct store *s, int64_t item, const char *path)
{
	int rc = store__exec(s, "DELETE FROM documents WHERE item_id = ? AND path = ?", "Is", item,
			     path);

	return rc ? rc : store__xattr_drop(s, item, path);
}

/* Whether directory dir has live entries below it. Lock held. */
static int dir_has_children(struct store *s, int64_t item, const char *dir)
{
	sqlite3_stmt *st;
	int rc = store__prepare(s, &st, "SELECT 1 FROM documents WHERE item_id = ?1 "
				"AND path > ?2 || '/' AND path < ?2 || '0' LIMIT 1", "Is", item, dir);

	if (rc == 0)
		rc = store__step(s, st);
	store__done(st);
	return rc;
}

/* The name of the file m describes went (unlink, or a rename over it):
 * when it was the file's last, its content revision stops being current
 * (retired later: store_later.c); else the names left show one link
 * less. Lock held. */
static int name_gone(struct store *s, int64_t item, const struct doc_meta *m)
{
	int left = 0, rc = store__link_left(s, item, m->link, &left);

	return rc == 0 && left == 0 ? store__later_add(s, m->rev_id, m->size) : rc;
}

/* Removes the live entry at path, a directory (dir: it must be empty) or
 * a document (a tombstone keeps its history), and moves the times of the
 * directory holding it: store_doc_rmdir and store_doc_unlink. */
static int doc_remove(struct store *s, int64_t item_id, const char *path, int dir,
		      const struct store_who *who)
{
	struct doc_meta m;
	int rc, locked, undone = 0;

	rc = doc_txn_stat(s, item_id, path, &m, &locked);
	if (!locked)
		return rc;
	if (rc == 0 && !m.is_dir != !dir)
		rc = dir ? -ENOTDIR : -EISDIR;
	if (rc == 0 && dir) {
		rc = dir_has_children(s, item_id, path);
		if (rc > 0)
			rc = -ENOTEMPTY;
	} else if (rc == 0) {
		/* A backup of a save that a new document replaced leaves no
		 * history (store_save.c); any other file a tombstone. The
		 * entry goes first: it names the revision an undo removes. */
		rc = doc_delete(s, item_id, path);
		undone = rc ? 0 : store__unlink_forget(s, item_id, path, &m, who ? who->pid : 0);
		if (undone < 0)
			rc = undone;
		else if (rc == 0 && !undone)
			rc = rev_add(s, item_id, path, "unlink", NULL, 0, 0, 1, m.mode, &m, who, NULL,
				     NULL, 0);
	}
	if (rc == 0 && dir)
		rc = doc_delete(s, item_id, path);
	if (rc == 0 && !dir && undone <= 0)
		rc = name_gone(s, item_id, &m);
	if (rc == 0)
		rc = store__touch_parent(s, item_id, path);
	return store__txn_unlock(s, rc);
}

int store_doc_unlink(struct store *s, int64_t item_id, const char *path, const struct store_who *who)
{
	return doc_remove(s, item_id, path, 0, who);
}

int store_doc_rmdir(struct store *s, int64_t item_id, const char *path)
{
	return doc_remove(s, item_id, path, 1, NULL);
}

/* Moves one live entry from -> to (the target slot is free); carry: a
 * document's life goes with it instead of a copy and a tombstone
 * (store_save.c), tomb the rev of from's latest tombstone (-1: not known).
 * A directory and a carried life keep their row, renamed, with a ctime of
 * now. Lock held. */
static int move_one(struct store *s, int64_t item, const char *from, const char *to,
		    const struct doc_meta *m, const struct store_who *who, int carry, int tomb)
{
	int64_t rev_id;
	int rc = store__xattr_move(s, item, from, to); /* the slot at to has none */

	carry = carry && !m->is_dir;
	if (rc == 0 && carry)
		rc = store__life_carry(s, item, from, to, tomb);
	if (rc == 0 && (carry || m->is_dir))
		rc = store__exec(s, "UPDATE documents SET path = ?, ctime_ns = ? WHERE item_id = ? "
				 "AND path = ?", "sIIs", to, util_now_ns(), item, from);
	if (rc || carry || m->is_dir)
		return rc;
	/* The copy takes the moved revision's row of whole over: the same
	 * bytes, so no page of the content is written again. */
	rc = rev_add(s, item, to, "rename", NULL, 0, m->rev_id, 0, m->mode, m, who, &rev_id, NULL,
		     m->rev_id);
	if (rc == 0)
		rc = rev_add(s, item, from, "rename", NULL, 0, 0, 1, m->mode, m, who, NULL, NULL, 0);
	if (rc == 0)
		rc = store__rev_retire(s, m->rev_id);
	if (rc == 0)
		rc = doc_delete(s, item, from);
	if (rc == 0)
		rc = doc_put(s, item, to, rev_id, m->size, m->mode, m->mtime_ns, m->atime_ns, m->uid,
			     m->gid, m);
	/* The file's other names follow it to the new revision (whose ctime
	 * is now), before anything reads the one retired above. */
	if (rc == 0)
		rc = store__link_sync(s, item, to, m->link, STORE_LINK_ROW);
	return rc;
}

int store_doc_rename(struct store *s, int64_t item_id, const char *from, const char *to,
		     unsigned flags, const struct store_who *who, int *replaced)
{
	int noreplace = (flags & STORE_RENAME_NOREPLACE) != 0;
	struct doc_meta src, dst;
	size_t flen = strlen(from);
	char **paths = NULL;
	int rc, locked, have_dst = 0, rev = 0, carry, tomb = -1;

	if (replaced)
		*replaced = 0;
	if (strcmp(from, to) == 0)
		return 0;
	rc = doc_txn_stat(s, item_id, from, &src, &locked);
	if (!locked)
		return rc;
	if (rc)
		goto fin;
	have_dst = doc_stat_locked(s, item_id, to, &dst) == 0;
	if (have_dst && !src.is_dir && !dst.is_dir && src.link != 0 && src.link == dst.link)
		goto fin; /* two names of one file: rename(2) does nothing */
	if (src.is_dir && strncmp(to, from, flen) == 0 && to[flen] == '/') {
		rc = -EINVAL;
		goto fin;
	}
	if (have_dst) {
		if (noreplace)
			rc = -EEXIST;
		else if (src.is_dir && !dst.is_dir)
			rc = -ENOTDIR;
		else if (!src.is_dir && dst.is_dir)
			rc = -EISDIR;
		else if (dst.is_dir && (rc = dir_has_children(s, item_id, to)) > 0)
			rc = -ENOTEMPTY;
		if (rc == 0)
			rc = doc_delete(s, item_id, to);
		if (rc == 0 && !dst.is_dir)
			rc = name_gone(s, item_id, &dst);
		if (rc)
			goto fin;
		if (!dst.is_dir && dst.type == S_IFREG && dst.nlink <= 1)
			rev = dst.rev;
	}
	if (src.is_dir) {
		/* Collect the subtree first; paths change as we go. */
		sqlite3_stmt *st;
		size_t i;

		rc = store__prepare(s, &st, "SELECT path FROM documents WHERE item_id = ?1 AND "
				    "path > ?2 || '/' AND path < ?2 || '0' ORDER BY path", "Is", item_id,
				    from);
		while (rc == 0 && (rc = store__step(s, st)) > 0)
			rc = strv_push(&paths, (const char *)sqlite3_column_text(st, 0));
		store__done(st);
		for (i = 0; rc == 0 && paths && paths[i]; i++) {
			struct doc_meta m;
			struct buf np;

			buf_init(&np);
			rc = buf_printf(&np, "%s%s", to, paths[i] + flen);
			if (rc == 0)
				rc = doc_stat_locked(s, item_id, paths[i], &m);
			if (rc == 0)
				rc = move_one(s, item_id, paths[i], np.data, &m, who, 0, -1);
			buf_free(&np);
		}
	}
	carry = (flags & STORE_RENAME_CARRY) != 0;
	if (rc == 0 && !carry && (flags & STORE_RENAME_SAVE) && who && !src.is_dir &&
	    src.link == 0) {
		carry = store__life_is_save(s, item_id, from, who->pid, &tomb);
		rc = carry < 0 ? carry : 0;
	}
	if (rc == 0)
		rc = move_one(s, item_id, from, to, &src, who,
			      carry > 0 && !src.is_dir && src.link == 0, tomb);
	if (rc == 0)
		rc = store__touch_parent(s, item_id, from);
	if (rc == 0 && !same_parent(from, to))
		rc = store__touch_parent(s, item_id, to);
	/* What the kernel asks next: the directory (its attributes dropped by
	 * the rename), and the old name, gone, which a temp save makes again. */
	rc = parent_stage(s, item_id, to, rc);
	if (rc == 0)
		store__doc_memo_stage(s, item_id, from, -ENOENT, NULL);
fin:
	rc = store__txn_unlock(s, rc);
	strv_free(paths);
	if (rc == 0 && replaced)
		*replaced = rev;
	return rc;
}
