/*
 * store_rev_list.c - the history of documents as store.h gives it
 * (store_rev_each, store_rev_each_below, store_rev_size, store_rev_stat,
 * store_rev_dir_exists, store_rev_read): revision rows listed, copied out
 * under the lock and handed over without it (revisions are immutable),
 * and one revision read. How revisions are stored, and the one function
 * that decodes them (store__rev_content): store_rev.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* A revision row with the strings it owns. */
struct rev_row {
	struct rev_info r;
	char *path, *op, *comm, *stage, *created_at;
};

static void rev_row_clear(struct rev_row *v)
{
	free(v->path);
	free(v->op);
	free(v->comm);
	free(v->stage);
	free(v->created_at);
}

static int rev_row(sqlite3_stmt *st, void *elem, void *ctx)
{
	struct rev_row *v = elem;

	(void)ctx;
	memset(v, 0, sizeof(*v));
	v->path = store__col_dup(st, 0);
	v->r.rev = sqlite3_column_int(st, 1);
	v->op = store__col_dup(st, 2);
	v->r.size = sqlite3_column_int64(st, 3);
	v->r.mode = (mode_t)sqlite3_column_int(st, 4);
	v->r.uid = (uid_t)sqlite3_column_int64(st, 5);
	v->r.pid = (pid_t)sqlite3_column_int64(st, 6);
	v->comm = store__col_dup(st, 7);
	v->stage = store__col_dup(st, 8);
	v->created_at = store__col_dup(st, 9);
	v->r.type = store__kind_type(st, 10);
	v->r.rdev = (uint64_t)sqlite3_column_int64(st, 11);
	if (!v->path || !v->op || !v->comm || !v->stage || !v->created_at) {
		rev_row_clear(v);
		return -ENOMEM;
	}
	v->r.path = v->path;
	v->r.op = v->op;
	v->r.comm = v->comm;
	v->r.stage = v->stage;
	v->r.created_at = v->created_at;
	return 0;
}

#define REV_COLS "path, rev, op, size, mode, uid, pid, comm, stage, created_at, kind, rdev"

/* The rows of sql (REV_COLS; item_id bound to ?1, a and b, NULL for none,
 * to ?2 and ?3) copied out under the lock, then cb for each without it
 * (revisions are immutable), as store_rev_each. */
static int rev_walk(struct store *s, const char *sql, int64_t item_id, const char *a,
		    const char *b, int (*cb)(void *arg, const struct rev_info *r), void *arg)
{
	struct rev_row *v = NULL;
	sqlite3_stmt *st;
	size_t n = 0, i;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, sql, b ? "Iss" : a ? "Is" : "I", item_id, a, b);
	if (rc == 0)
		rc = store__collect(s, st, sizeof(*v), rev_row, NULL, (void **)&v, &n);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (rc == 0 && cb(arg, &v[i].r))
			rc = 1;
		rev_row_clear(&v[i]);
	}
	free(v);
	return rc < 0 ? rc : 0;
}

int store_rev_each(struct store *s, int64_t item_id, const char *path,
		   int (*cb)(void *arg, const struct rev_info *r), void *arg)
{
	if (path)
		return rev_walk(s, "SELECT " REV_COLS " FROM revisions WHERE item_id = ? AND path = ? "
				"ORDER BY path, rev", item_id, path, NULL, cb, arg);
	return rev_walk(s, "SELECT " REV_COLS " FROM revisions WHERE item_id = ? ORDER BY path, rev",
			item_id, NULL, NULL, cb, arg);
}

/* The bounds of the paths below dir under binary collation, ["dir/",
 * "dir0") ('0' follows '/'), in one allocation at *lo (caller frees). */
static int below_bounds(const char *dir, char **lo, char **hi)
{
	size_t dlen = strlen(dir);

	*lo = malloc(2 * (dlen + 2));
	if (!*lo)
		return -ENOMEM;
	*hi = *lo + dlen + 2;
	memcpy(*lo, dir, dlen);
	memcpy(*lo + dlen, "/", 2);
	memcpy(*hi, dir, dlen);
	memcpy(*hi + dlen, "0", 2);
	return 0;
}

int store_rev_each_below(struct store *s, int64_t item_id, const char *dir,
			 int (*cb)(void *arg, const struct rev_info *r), void *arg)
{
	char *lo, *hi;
	int rc;

	if (!*dir)
		return store_rev_each(s, item_id, NULL, cb, arg);
	rc = below_bounds(dir, &lo, &hi);
	if (rc)
		return rc;
	rc = rev_walk(s, "SELECT " REV_COLS " FROM revisions WHERE item_id = ?1 AND path >= ?2 "
		      "AND path < ?3 ORDER BY path, rev", item_id, lo, hi, cb, arg);
	free(lo);
	return rc;
}

/* Revision rev of path unless a tombstone: its content in *data (caller
 * frees) and its size in *len, or (data NULL) its size, type and rdev
 * (either may be NULL) alone, without reading the content. 0, -ENOENT or
 * a negative errno. */
static int rev_get(struct store *s, int64_t item_id, const char *path, int rev, char **data,
		   size_t *len, struct doc_meta *m)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__first(s, &st, "SELECT id, size, kind, rdev, mode, uid FROM revisions WHERE "
			  "item_id = ? AND path = ? AND rev = ? AND content IS NOT NULL", "Isi",
			  item_id, path, rev);
	if (rc == 0) {
		id = sqlite3_column_int64(st, 0);
		if (len)
			*len = (size_t)sqlite3_column_int64(st, 1);
	}
	if (rc == 0 && m) {
		memset(m, 0, sizeof(*m));
		m->size = (uint64_t)sqlite3_column_int64(st, 1);
		m->type = store__kind_type(st, 2);
		m->rdev = (uint64_t)sqlite3_column_int64(st, 3);
		m->mode = (mode_t)sqlite3_column_int(st, 4) & 07777;
		m->uid = (uid_t)sqlite3_column_int64(st, 5);
		m->gid = STORE_ID_DEFAULT;
	}
	store__done(st);
	if (rc == 0 && data)
		rc = store__rev_content(s, id, data, len);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_rev_size(struct store *s, int64_t item_id, const char *path, int rev, size_t *len)
{
	return rev_get(s, item_id, path, rev, NULL, len, NULL);
}

int store_rev_stat(struct store *s, int64_t item_id, const char *path, int rev,
		   struct doc_meta *m)
{
	return rev_get(s, item_id, path, rev, NULL, NULL, m);
}

int store_rev_dir_exists(struct store *s, int64_t item_id, const char *dir)
{
	sqlite3_stmt *st;
	char *lo, *hi;
	int rc = below_bounds(dir, &lo, &hi);

	if (rc)
		return rc;
	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, "SELECT 1 FROM revisions WHERE item_id = ?1 AND path >= ?2 "
			    "AND path < ?3 LIMIT 1", "Iss", item_id, lo, hi);
	if (rc == 0)
		rc = store__step(s, st);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	free(lo);
	return rc;
}

int store_rev_read(struct store *s, int64_t item_id, const char *path, int rev, char **data,
		   size_t *len)
{
	return rev_get(s, item_id, path, rev, data, len, NULL);
}


int store_rev_read_id(struct store *s, int64_t rev_id, char **data, size_t *len)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__rev_content(s, rev_id, data, len);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
