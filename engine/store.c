/*
 * store.c - the SQLite store (see store.h for the contract).
 *
 * Design: one connection, one mutex (s->lock) taken by every public
 * function; prepared statements are cached per SQL text for the life of the
 * connection and reset before the lock is released. Changes run inside
 * BEGIN IMMEDIATE ... COMMIT so a failure rolls back whole. The only place
 * that translates SQLite result codes is err_of().
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "schema.h"
#include "store.h"

#define STMT_CACHE 96

struct store {
	pthread_mutex_t lock;
	sqlite3 *db; /* protected by lock */
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} cache[STMT_CACHE]; /* protected by lock */
	int ncache;
};

static int err_of(struct store *s, int rc)
{
	int primary = rc & 0xff;

	if (primary == SQLITE_OK || primary == SQLITE_DONE || primary == SQLITE_ROW)
		return 0;
	fprintf(stderr, "packetfs: store: %s\n", sqlite3_errmsg(s->db));
	switch (primary) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CONSTRAINT:
		return rc == SQLITE_CONSTRAINT_TRIGGER ? -EPERM : -EEXIST;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_TOOBIG:
		return -EFBIG;
	default:
		return -EIO;
	}
}

/* A cached prepared statement for sql (a string literal: cached by address). */
static sqlite3_stmt *stmt(struct store *s, const char *sql)
{
	sqlite3_stmt *st;
	int i;

	for (i = 0; i < s->ncache; i++)
		if (s->cache[i].sql == sql)
			return s->cache[i].st;
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "packetfs: store: prepare: %s\n", sqlite3_errmsg(s->db));
		return NULL;
	}
	if (s->ncache < STMT_CACHE) {
		s->cache[s->ncache].sql = sql;
		s->cache[s->ncache].st = st;
		s->ncache++;
	}
	return st;
}

static void done(sqlite3_stmt *st)
{
	if (st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

static int exec(struct store *s, const char *sql)
{
	return err_of(s, sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

static int begin(struct store *s)
{
	return exec(s, "BEGIN IMMEDIATE");
}

static int end(struct store *s, int rc)
{
	if (rc == 0) {
		rc = exec(s, "COMMIT");
		if (rc == 0)
			return 0;
	}
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

static void col_copy(sqlite3_stmt *st, int i, char *out, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(out, size, "%s", t ? (const char *)t : "");
}

static void now_text(char out[32])
{
	util_rfc3339(util_now_ns(), out);
}

/* Runs a statement that returns no rows; binds are done by the caller. */
static int step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	rc = rc == SQLITE_DONE ? 0 : err_of(s, rc);
	done(st);
	return rc;
}

int store_open(const char *dir, int create, int readonly, struct store **out, char *err,
	       size_t errlen)
{
	struct store *s;
	char path[4096];
	char *value = NULL;
	int flags, rc, version = 0, i;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (create)
		flags |= SQLITE_OPEN_CREATE;
	flags |= SQLITE_OPEN_NOMUTEX;
	rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		int e = rc == SQLITE_CANTOPEN ? -ENOENT : -EIO;

		if (err)
			snprintf(err, errlen, "%s: %s", path,
				 rc == SQLITE_CANTOPEN ? "no packetfs store here" : sqlite3_errmsg(s->db));
		sqlite3_close(s->db);
		free(s);
		return e;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 1);
	if (!readonly) {
		rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			     "PRAGMA foreign_keys=ON;");
		if (rc)
			goto fail;
	}
	if (sqlite3_exec(s->db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto fail;
	}
	if (sqlite3_exec(s->db, "SELECT 1 FROM meta LIMIT 0", NULL, NULL, NULL) == SQLITE_OK &&
	    store_meta_get(s, "schema_version", &value) == 0) {
		version = atoi(value);
		free(value);
	} else if (!create) {
		rc = -ENOENT;
		if (err)
			snprintf(err, errlen, "%s: not a packetfs store", path);
		goto fail_quiet;
	}
	if (version > schema_version) {
		rc = -EPROTO;
		if (err)
			snprintf(err, errlen, "%s: store version %d is newer than this packetfs (%d)",
				 path, version, schema_version);
		goto fail_quiet;
	}
	if (!readonly && version < schema_version) {
		char v[16];

		rc = begin(s);
		for (i = version; rc == 0 && i < schema_version; i++)
			rc = exec(s, schema_migrations[i]);
		snprintf(v, sizeof(v), "%d", schema_version);
		if (rc == 0) {
			sqlite3_stmt *st = stmt(s, "INSERT OR REPLACE INTO meta(key, value) VALUES "
						   "('schema_version', ?)");
			sqlite3_bind_text(st, 1, v, -1, SQLITE_TRANSIENT);
			rc = step_done(s, st);
		}
		rc = end(s, rc);
		if (rc)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	if (err)
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
fail_quiet:
	store_close(s);
	return rc ? rc : -EIO;
}

void store_close(struct store *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache[i].st);
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int store_sync(struct store *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = err_of(s, sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_FULL, NULL, NULL));
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_integrity(struct store *s, struct buf *out)
{
	sqlite3_stmt *st;
	int bad = 0, rc;

	pthread_mutex_lock(&s->lock);
	rc = sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 0);

			if (t && strcmp(t, "ok") != 0) {
				buf_printf(out, "sqlite: %s\n", t);
				bad = 1;
			}
		}
		sqlite3_finalize(st);
	} else {
		bad = err_of(s, rc);
	}
	pthread_mutex_unlock(&s->lock);
	return bad;
}

int store_meta_get(struct store *s, const char *key, char **value)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT value FROM meta WHERE key = ?");
	if (!st) {
		rc = -ENOENT;
		goto out;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*value = col_dup(st, 0);
		rc = *value ? 0 : -ENOMEM;
	} else {
		rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
	}
	done(st);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_meta_set(struct store *s, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
	if (st) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
		rc = step_done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- items ---- */

void item_clear(struct item *it)
{
	free(it->name);
	free(it->title);
	free(it->state);
	free(it->stage);
	free(it->branch);
	free(it->base);
	free(it->verdict);
	free(it->assessment);
	free(it->last_error);
	free(it->last_result);
	free(it->created_at);
	free(it->updated_at);
	memset(it, 0, sizeof(*it));
}

#define ITEM_COLS                                                                            \
	"id, name, title, state, stage, stage_ok, iteration, branch, base, verdict, assessment, " \
	"hold, approved, last_error, last_result, archived, created_at, updated_at"

static int item_row(sqlite3_stmt *st, struct item *it)
{
	memset(it, 0, sizeof(*it));
	it->id = sqlite3_column_int64(st, 0);
	it->name = col_dup(st, 1);
	it->title = col_dup(st, 2);
	it->state = col_dup(st, 3);
	it->stage = col_dup(st, 4);
	it->stage_ok = sqlite3_column_int(st, 5);
	it->iteration = sqlite3_column_int(st, 6);
	it->branch = col_dup(st, 7);
	it->base = col_dup(st, 8);
	it->verdict = col_dup(st, 9);
	it->assessment = col_dup(st, 10);
	it->hold = sqlite3_column_int(st, 11);
	it->approved = sqlite3_column_int(st, 12);
	it->last_error = col_dup(st, 13);
	it->last_result = col_dup(st, 14);
	it->archived = sqlite3_column_int(st, 15);
	it->created_at = col_dup(st, 16);
	it->updated_at = col_dup(st, 17);
	if (!it->name || !it->title || !it->state || !it->stage || !it->branch || !it->base ||
	    !it->verdict || !it->assessment || !it->last_error || !it->last_result ||
	    !it->created_at || !it->updated_at) {
		item_clear(it);
		return -ENOMEM;
	}
	return 0;
}

int store_item_create(struct store *s, const char *name, const char *branch, const char *base,
		      int64_t *id)
{
	sqlite3_stmt *st;
	char now[32];
	int rc = -EIO;

	now_text(now);
	pthread_mutex_lock(&s->lock);
	st = stmt(s, "INSERT INTO items(name, branch, base, created_at, updated_at) "
		     "VALUES (?, ?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, branch, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, base, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, now, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, now, -1, SQLITE_STATIC);
		rc = step_done(s, st);
		if (rc == 0 && id)
			*id = sqlite3_last_insert_rowid(s->db);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int item_get_by(struct store *s, const char *sql, const char *name, int64_t id,
		       struct item *out)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, sql);
	if (st) {
		if (name)
			sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, 1, id);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			rc = item_row(st, out);
		else
			rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
		done(st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_item_get(struct store *s, const char *name, struct item *out)
{
	return item_get_by(s, "SELECT " ITEM_COLS " FROM items WHERE name = ?", name, 0, out);
}

int store_item_get_id(struct store *s, int64_t id, struct item *out)
{
	return item_get_by(s, "SELECT " ITEM_COLS " FROM items WHERE id = ?", NULL, id, out);
}

int store_item_update(struct store *s, struct item *it)
{
	sqlite3_stmt *st;
	char now[32];
	int rc = -EIO;

	now_text(now);
	pthread_mutex_lock(&s->lock);
	st = stmt(s, "UPDATE items SET title = ?, state = ?, stage = ?, stage_ok = ?, iteration = ?, "
		     "verdict = ?, assessment = ?, hold = ?, approved = ?, last_error = ?, "
		     "last_result = ?, archived = ?, updated_at = ? WHERE id = ?");
	if (st) {
		sqlite3_bind_text(st, 1, it->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, it->state, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, it->stage, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 4, it->stage_ok);
		sqlite3_bind_int(st, 5, it->iteration);
		sqlite3_bind_text(st, 6, it->verdict, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, it->assessment, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 8, it->hold);
		sqlite3_bind_int(st, 9, it->approved);
		sqlite3_bind_text(st, 10, it->last_error, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 11, it->last_result, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 12, it->archived);
		sqlite3_bind_text(st, 13, now, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 14, it->id);
		rc = step_done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	if (rc == 0) {
		char *u = strdup(now);

		if (u) {
			free(it->updated_at);
			it->updated_at = u;
		}
	}
	return rc;
}

int store_item_each(struct store *s, int archived, int (*cb)(void *arg, const struct item *it),
		    void *arg)
{
	struct item *items = NULL;
	size_t n = 0, cap = 0, i;
	sqlite3_stmt *st;
	int rc = 0;

	/* Collect first so cb runs without the lock (it may call the store). */
	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT " ITEM_COLS " FROM items WHERE archived = ? ORDER BY name");
	if (!st)
		rc = -EIO;
	else
		sqlite3_bind_int(st, 1, archived);
	while (rc == 0) {
		int r = sqlite3_step(st);

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		if (n == cap) {
			struct item *ni = realloc(items, (cap ? cap * 2 : 16) * sizeof(*items));

			if (!ni) {
				rc = -ENOMEM;
				break;
			}
			items = ni;
			cap = cap ? cap * 2 : 16;
		}
		rc = item_row(st, &items[n]);
		if (rc == 0)
			n++;
	}
	done(st);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (rc == 0 && cb(arg, &items[i]))
			rc = 1;
		item_clear(&items[i]);
	}
	free(items);
	return rc < 0 ? rc : 0;
}

int store_item_next_run(struct store *s, int64_t item_id, int *run_no)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = begin(s);
	if (rc == 0) {
		st = stmt(s, "UPDATE items SET run_seq = run_seq + 1 WHERE id = ? RETURNING run_seq");
		if (!st) {
			rc = -EIO;
		} else {
			sqlite3_bind_int64(st, 1, item_id);
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW) {
				*run_no = sqlite3_column_int(st, 0);
				rc = 0;
			} else {
				rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
			}
			done(st);
		}
		rc = end(s, rc);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- documents and revisions ---- */

#define DOC_COLS                                                                          \
	"d.is_dir, d.rev_id, d.size, d.mode, d.mtime_ns, d.ctime_ns, "                   \
	"COALESCE((SELECT rev FROM revisions r WHERE r.id = d.rev_id), 0)"

static void doc_row(sqlite3_stmt *st, int first, struct doc_meta *m)
{
	m->is_dir = sqlite3_column_int(st, first);
	m->rev_id = sqlite3_column_int64(st, first + 1);
	m->size = (uint64_t)sqlite3_column_int64(st, first + 2);
	m->mode = (mode_t)sqlite3_column_int(st, first + 3);
	m->mtime_ns = sqlite3_column_int64(st, first + 4);
	m->ctime_ns = sqlite3_column_int64(st, first + 5);
	m->rev = sqlite3_column_int(st, first + 6);
}

/* Lock held. */
static int doc_stat_locked(struct store *s, int64_t item, const char *path, struct doc_meta *m)
{
	sqlite3_stmt *st = stmt(s, "SELECT " DOC_COLS " FROM documents d "
				   "WHERE d.item_id = ? AND d.path = ?");
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		doc_row(st, 0, m);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
	}
	done(st);
	return rc;
}

int store_doc_stat(struct store *s, int64_t item_id, const char *path, struct doc_meta *out)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = doc_stat_locked(s, item_id, path, out);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int blob_out(sqlite3_stmt *st, int i, char **data, size_t *len)
{
	const void *p = sqlite3_column_blob(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);
	char *d = malloc(n + 1);

	if (!d)
		return -ENOMEM;
	if (n)
		memcpy(d, p, n);
	d[n] = '\0';
	*data = d;
	if (len)
		*len = n;
	return 0;
}

int store_doc_read(struct store *s, int64_t item_id, const char *path, char **data, size_t *len)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT d.is_dir, r.content FROM documents d LEFT JOIN revisions r "
		     "ON r.id = d.rev_id WHERE d.item_id = ? AND d.path = ?");
	if (st) {
		sqlite3_bind_int64(st, 1, item_id);
		sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			rc = sqlite3_column_int(st, 0) ? -EISDIR : blob_out(st, 1, data, len);
		else
			rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
		done(st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/*
 * Inserts a revision of path: content from data/len, or copied from
 * revision copy_from (> 0), or a tombstone (tomb). Lock held, inside a
 * transaction. Returns the new revision's id and number.
 */
static int rev_add(struct store *s, int64_t item, const char *path, const char *op,
		   const void *data, size_t len, int64_t copy_from, int tomb, mode_t mode,
		   const struct store_who *who, int64_t *rev_id, int *rev)
{
	static const char sql_data[] =
		"INSERT INTO revisions(item_id, path, rev, op, content, size, mode, uid, pid, comm, "
		"stage, created_at) VALUES (?1, ?2, (SELECT COALESCE(MAX(rev), 0) + 1 FROM revisions "
		"WHERE item_id = ?1 AND path = ?2), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
		"RETURNING id, rev";
	static const char sql_copy[] =
		"INSERT INTO revisions(item_id, path, rev, op, content, size, mode, uid, pid, comm, "
		"stage, created_at) SELECT ?1, ?2, (SELECT COALESCE(MAX(rev), 0) + 1 FROM revisions "
		"WHERE item_id = ?1 AND path = ?2), ?3, content, size, ?6, ?7, ?8, ?9, ?10, ?11 "
		"FROM revisions WHERE id = ?4 RETURNING id, rev";
	sqlite3_stmt *st = stmt(s, copy_from > 0 ? sql_copy : sql_data);
	char now[32];
	int rc;

	if (!st)
		return -EIO;
	now_text(now);
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, op, -1, SQLITE_STATIC);
	if (copy_from > 0) {
		sqlite3_bind_int64(st, 4, copy_from);
	} else if (tomb) {
		sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, -1);
	} else {
		sqlite3_bind_blob64(st, 4, len ? data : "", len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)len);
	}
	sqlite3_bind_int(st, 6, (int)mode);
	sqlite3_bind_int64(st, 7, who ? who->uid : 0);
	sqlite3_bind_int64(st, 8, who ? who->pid : 0);
	sqlite3_bind_text(st, 9, who && who->comm ? who->comm : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, who && who->stage ? who->stage : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 11, now, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (rev_id)
			*rev_id = sqlite3_column_int64(st, 0);
		if (rev)
			*rev = sqlite3_column_int(st, 1);
		rc = 0;
		while (sqlite3_step(st) == SQLITE_ROW)
			;
	} else {
		rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
	}
	done(st);
	return rc;
}

/* Points the live entry at path to a revision (insert or update). Lock held. */
static int doc_put(struct store *s, int64_t item, const char *path, int64_t rev_id, uint64_t size,
		   mode_t mode, int64_t mtime_ns)
{
	sqlite3_stmt *st = stmt(s, "INSERT INTO documents(item_id, path, is_dir, rev_id, size, mode, "
				   "mtime_ns, ctime_ns) VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6, ?7) "
				   "ON CONFLICT(item_id, path) DO UPDATE SET rev_id = ?3, size = ?4, "
				   "mode = ?5, mtime_ns = ?6, ctime_ns = ?7");

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, rev_id);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)size);
	sqlite3_bind_int(st, 5, (int)mode);
	sqlite3_bind_int64(st, 6, mtime_ns);
	sqlite3_bind_int64(st, 7, util_now_ns());
	return step_done(s, st);
}

int store_doc_write(struct store *s, int64_t item_id, const char *path, const void *data,
		    size_t len, mode_t mode, int64_t mtime_ns, const char *op,
		    const struct store_who *who, int *rev)
{
	struct doc_meta m;
	int64_t rev_id = 0;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = begin(s);
	if (rc)
		goto out;
	rc = doc_stat_locked(s, item_id, path, &m);
	if (rc == 0 && m.is_dir)
		rc = -EISDIR;
	else if (rc == -ENOENT)
		m.mode = 0644, rc = 0;
	if (mode != (mode_t)-1)
		m.mode = mode & 07777;
	if (rc == 0)
		rc = rev_add(s, item_id, path, op, data, len, 0, 0, m.mode, who, &rev_id, rev);
	if (rc == 0)
		rc = doc_put(s, item_id, path, rev_id, len, m.mode,
			     mtime_ns < 0 ? util_now_ns() : mtime_ns);
	rc = end(s, rc);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_doc_mkdir(struct store *s, int64_t item_id, const char *path, mode_t mode)
{
	sqlite3_stmt *st;
	int64_t now = util_now_ns();
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "INSERT INTO documents(item_id, path, is_dir, rev_id, size, mode, mtime_ns, "
		     "ctime_ns) VALUES (?, ?, 1, NULL, 0, ?, ?, ?)");
	if (st) {
		sqlite3_bind_int64(st, 1, item_id);
		sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 3, (int)(mode & 07777));
		sqlite3_bind_int64(st, 4, now);
		sqlite3_bind_int64(st, 5, now);
		rc = step_done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int doc_delete(struct store *s, int64_t item, const char *path)
{
	sqlite3_stmt *st = stmt(s, "DELETE FROM documents WHERE item_id = ? AND path = ?");

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	return step_done(s, st);
}

/* Whether directory dir has live entries below it. Lock held. */
static int dir_has_children(struct store *s, int64_t item, const char *dir)
{
	sqlite3_stmt *st = stmt(s, "SELECT 1 FROM documents WHERE item_id = ? AND path > ? || '/' "
				   "AND path < ? || '0' LIMIT 1");
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_text(st, 2, dir, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, dir, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : err_of(s, rc);
	done(st);
	return rc;
}

int store_doc_unlink(struct store *s, int64_t item_id, const char *path, const struct store_who *who)
{
	struct doc_meta m;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = begin(s);
	if (rc)
		goto out;
	rc = doc_stat_locked(s, item_id, path, &m);
	if (rc == 0 && m.is_dir)
		rc = -EISDIR;
	if (rc == 0)
		rc = rev_add(s, item_id, path, "unlink", NULL, 0, 0, 1, m.mode, who, NULL, NULL);
	if (rc == 0)
		rc = doc_delete(s, item_id, path);
	rc = end(s, rc);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_doc_rmdir(struct store *s, int64_t item_id, const char *path)
{
	struct doc_meta m;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = begin(s);
	if (rc)
		goto out;
	rc = doc_stat_locked(s, item_id, path, &m);
	if (rc == 0 && !m.is_dir)
		rc = -ENOTDIR;
	if (rc == 0) {
		rc = dir_has_children(s, item_id, path);
		if (rc > 0)
			rc = -ENOTEMPTY;
	}
	if (rc == 0)
		rc = doc_delete(s, item_id, path);
	rc = end(s, rc);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Moves one live entry from -> to (the target slot is free). Lock held. */
static int move_one(struct store *s, int64_t item, const char *from, const char *to,
		    const struct doc_meta *m, const struct store_who *who)
{
	sqlite3_stmt *st;
	int64_t rev_id;
	int rc;

	if (m->is_dir) {
		st = stmt(s, "UPDATE documents SET path = ? WHERE item_id = ? AND path = ?");
		if (!st)
			return -EIO;
		sqlite3_bind_text(st, 1, to, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, item);
		sqlite3_bind_text(st, 3, from, -1, SQLITE_STATIC);
		return step_done(s, st);
	}
	rc = rev_add(s, item, to, "rename", NULL, 0, m->rev_id, 0, m->mode, who, &rev_id, NULL);
	if (rc == 0)
		rc = rev_add(s, item, from, "rename", NULL, 0, 0, 1, m->mode, who, NULL, NULL);
	if (rc == 0)
		rc = doc_delete(s, item, from);
	if (rc == 0)
		rc = doc_put(s, item, to, rev_id, m->size, m->mode, m->mtime_ns);
	return rc;
}

int store_doc_rename(struct store *s, int64_t item_id, const char *from, const char *to,
		     int noreplace, const struct store_who *who)
{
	struct doc_meta src, dst;
	size_t flen = strlen(from);
	char **paths = NULL;
	int rc, have_dst;

	if (strcmp(from, to) == 0)
		return 0;
	pthread_mutex_lock(&s->lock);
	rc = begin(s);
	if (rc)
		goto out;
	rc = doc_stat_locked(s, item_id, from, &src);
	if (rc)
		goto fin;
	have_dst = doc_stat_locked(s, item_id, to, &dst) == 0;
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
		if (rc)
			goto fin;
	}
	if (src.is_dir) {
		/* Collect the subtree first; paths change as we go. */
		sqlite3_stmt *st = stmt(s, "SELECT path FROM documents WHERE item_id = ? AND "
					   "path > ? || '/' AND path < ? || '0' ORDER BY path");
		size_t i;

		if (!st) {
			rc = -EIO;
			goto fin;
		}
		sqlite3_bind_int64(st, 1, item_id);
		sqlite3_bind_text(st, 2, from, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, from, -1, SQLITE_STATIC);
		while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
			rc = strv_push(&paths, (const char *)sqlite3_column_text(st, 0));
		done(st);
		for (i = 0; rc == 0 && paths && paths[i]; i++) {
			struct doc_meta m;
			struct buf np;

			buf_init(&np);
			rc = buf_printf(&np, "%s%s", to, paths[i] + flen);
			if (rc == 0)
				rc = doc_stat_locked(s, item_id, paths[i], &m);
			if (rc == 0)
				rc = move_one(s, item_id, paths[i], np.data, &m, who);
			buf_free(&np);
		}
	}
	if (rc == 0)
		rc = move_one(s, item_id, from, to, &src, who);
fin:
	rc = end(s, rc);
out:
	pthread_mutex_unlock(&s->lock);
	strv_free(paths);
	return rc;
}

static int doc_set(struct store *s, const char *sql, int64_t item, const char *path, int64_t v)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, sql);
	if (st) {
		sqlite3_bind_int64(st, 1, v);
		sqlite3_bind_int64(st, 2, util_now_ns());
		sqlite3_bind_int64(st, 3, item);
		sqlite3_bind_text(st, 4, path, -1, SQLITE_STATIC);
		rc = step_done(s, st);
		if (rc == 0 && sqlite3_changes(s->db) == 0)
			rc = -ENOENT;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_doc_set_mode(struct store *s, int64_t item_id, const char *path, mode_t mode)
{
	return doc_set(s, "UPDATE documents SET mode = ?1, ctime_ns = ?2 WHERE item_id = ?3 AND path = ?4",
		       item_id, path, (int64_t)(mode & 07777));
}

int store_doc_set_mtime(struct store *s, int64_t item_id, const char *path, int64_t mtime_ns)
{
	return doc_set(s, "UPDATE documents SET mtime_ns = ?1, ctime_ns = ?2 WHERE item_id = ?3 AND path = ?4",
		       item_id, path, mtime_ns < 0 ? util_now_ns() : mtime_ns);
}

struct doc_entry {
	char *name;
	struct doc_meta m;
};

int store_doc_list(struct store *s, int64_t item_id, const char *dir,
		   int (*cb)(void *arg, const char *name, const struct doc_meta *m), void *arg)
{
	struct doc_entry *ents = NULL;
	size_t n = 0, cap = 0, i, dlen = strlen(dir);
	sqlite3_stmt *st;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if (dlen == 0) {
		st = stmt(s, "SELECT d.path, " DOC_COLS " FROM documents d WHERE d.item_id = ?1 "
			     "AND instr(d.path, '/') = 0 ORDER BY d.path");
	} else {
		st = stmt(s, "SELECT d.path, " DOC_COLS " FROM documents d WHERE d.item_id = ?1 "
			     "AND d.path > ?2 || '/' AND d.path < ?2 || '0' "
			     "AND instr(substr(d.path, length(?2) + 2), '/') = 0 ORDER BY d.path");
	}
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	sqlite3_bind_int64(st, 1, item_id);
	if (dlen)
		sqlite3_bind_text(st, 2, dir, -1, SQLITE_STATIC);
	for (;;) {
		int r = sqlite3_step(st);
		const char *p;

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		if (n == cap) {
			struct doc_entry *ne = realloc(ents, (cap ? cap * 2 : 16) * sizeof(*ents));

			if (!ne) {
				rc = -ENOMEM;
				break;
			}
			ents = ne;
			cap = cap ? cap * 2 : 16;
		}
		p = (const char *)sqlite3_column_text(st, 0);
		ents[n].name = strdup(dlen ? p + dlen + 1 : p);
		if (!ents[n].name) {
			rc = -ENOMEM;
			break;
		}
		doc_row(st, 1, &ents[n].m);
		n++;
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (rc == 0 && cb(arg, ents[i].name, &ents[i].m))
			rc = 1;
		free(ents[i].name);
	}
	free(ents);
	return rc < 0 ? rc : 0;
}

int store_rev_each(struct store *s, int64_t item_id, const char *path,
		   int (*cb)(void *arg, const struct rev_info *r), void *arg)
{
	sqlite3_stmt *st;
	int rc = 0;

	/* Revisions are immutable: copy rows out so cb runs unlocked. */
	struct rev_info *v = NULL;
	size_t n = 0, cap = 0, i;
	char **strs = NULL;

	pthread_mutex_lock(&s->lock);
	st = path ? stmt(s, "SELECT path, rev, op, size, mode, uid, pid, comm, stage, created_at "
			    "FROM revisions WHERE item_id = ? AND path = ? ORDER BY path, rev")
		  : stmt(s, "SELECT path, rev, op, size, mode, uid, pid, comm, stage, created_at "
			    "FROM revisions WHERE item_id = ? ORDER BY path, rev");
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	sqlite3_bind_int64(st, 1, item_id);
	if (path)
		sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	for (;;) {
		int r = sqlite3_step(st), k;

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		if (n == cap) {
			struct rev_info *nv = realloc(v, (cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		v[n].rev = sqlite3_column_int(st, 1);
		v[n].size = sqlite3_column_int64(st, 3);
		v[n].mode = (mode_t)sqlite3_column_int(st, 4);
		v[n].uid = (uid_t)sqlite3_column_int64(st, 5);
		v[n].pid = (pid_t)sqlite3_column_int64(st, 6);
		for (k = 0; k < 10 && rc == 0; k++)
			if (k == 0 || k == 2 || k >= 7)
				rc = strv_push(&strs, (const char *)sqlite3_column_text(st, k));
		if (rc)
			break;
		n++;
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	for (i = 0; rc == 0 && i < n; i++) {
		v[i].path = strs[i * 5];
		v[i].op = strs[i * 5 + 1];
		v[i].comm = strs[i * 5 + 2];
		v[i].stage = strs[i * 5 + 3];
		v[i].created_at = strs[i * 5 + 4];
		if (cb(arg, &v[i]))
			break;
	}
	free(v);
	strv_free(strs);
	return rc;
}

int store_rev_read(struct store *s, int64_t item_id, const char *path, int rev, char **data,
		   size_t *len)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT content FROM revisions WHERE item_id = ? AND path = ? AND rev = ? "
		     "AND content IS NOT NULL");
	if (st) {
		sqlite3_bind_int64(st, 1, item_id);
		sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 3, rev);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			rc = blob_out(st, 0, data, len);
		else
			rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
		done(st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- runs and logs ---- */

void run_clear(struct run *r)
{
	free(r->name);
	free(r->command);
	free(r->log_path);
	free(r->note);
	free(r->gpus);
	memset(r, 0, sizeof(*r));
}

#define RUN_COLS                                                                              \
	"id, item_id, run_no, kind, name, iteration, status, command, log_path, pgid, exit_code, " \
	"signal, note, head, gpus, executor, started_at, finished_at, duration_s, log_size, "      \
	"log_sha256"

static int run_row(sqlite3_stmt *st, struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->item_id = sqlite3_column_int64(st, 1);
	r->run_no = sqlite3_column_int(st, 2);
	col_copy(st, 3, r->kind, sizeof(r->kind));
	r->name = col_dup(st, 4);
	r->iteration = sqlite3_column_int(st, 5);
	col_copy(st, 6, r->status, sizeof(r->status));
	r->command = col_dup(st, 7);
	r->log_path = col_dup(st, 8);
	r->pgid = sqlite3_column_int(st, 9);
	r->has_exit_code = sqlite3_column_type(st, 10) != SQLITE_NULL;
	r->exit_code = sqlite3_column_int(st, 10);
	r->signal = sqlite3_column_int(st, 11);
	r->note = col_dup(st, 12);
	col_copy(st, 13, r->head, sizeof(r->head));
	r->gpus = col_dup(st, 14);
	col_copy(st, 15, r->executor, sizeof(r->executor));
	col_copy(st, 16, r->started_at, sizeof(r->started_at));
	col_copy(st, 17, r->finished_at, sizeof(r->finished_at));
	r->duration_s = sqlite3_column_double(st, 18);
	r->log_size = sqlite3_column_int64(st, 19);
	col_copy(st, 20, r->log_sha256, sizeof(r->log_sha256));
	if (!r->name || !r->command || !r->log_path || !r->note || !r->gpus) {
		run_clear(r);
		return -ENOMEM;
	}
	return 0;
}

int store_run_insert(struct store *s, struct run *r)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "INSERT INTO runs(item_id, run_no, kind, name, iteration, status, command, "
		     "log_path, pgid, note, head, gpus, executor, started_at) "
		     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_int64(st, 1, r->item_id);
		sqlite3_bind_int(st, 2, r->run_no);
		sqlite3_bind_text(st, 3, r->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, r->name, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 5, r->iteration);
		sqlite3_bind_text(st, 6, r->status, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, r->command ? r->command : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 8, r->log_path, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 9, r->pgid);
		sqlite3_bind_text(st, 10, r->note ? r->note : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 11, r->head, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 12, r->gpus ? r->gpus : "[]", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 13, r->executor[0] ? r->executor : "local", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 14, r->started_at, -1, SQLITE_STATIC);
		rc = step_done(s, st);
		if (rc == 0)
			r->id = sqlite3_last_insert_rowid(s->db);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_run_update(struct store *s, const struct run *r)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "UPDATE runs SET status = ?, pgid = ?, exit_code = ?, signal = ?, note = ?, "
		     "head = ?, gpus = ?, finished_at = NULLIF(?, ''), duration_s = ?, "
		     "log_sha256 = ?, command = ? WHERE id = ?");
	if (st) {
		sqlite3_bind_text(st, 1, r->status, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 2, r->pgid);
		if (r->has_exit_code)
			sqlite3_bind_int(st, 3, r->exit_code);
		else
			sqlite3_bind_null(st, 3);
		sqlite3_bind_int(st, 4, r->signal);
		sqlite3_bind_text(st, 5, r->note ? r->note : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, r->head, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, r->gpus ? r->gpus : "[]", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 8, r->finished_at, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 9, r->duration_s);
		sqlite3_bind_text(st, 10, r->log_sha256, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 11, r->command ? r->command : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 12, r->id);
		rc = step_done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int run_get_by(struct store *s, const char *sql, int64_t a, const char *b, struct run *out)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, sql);
	if (st) {
		sqlite3_bind_int64(st, 1, a);
		if (b)
			sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			rc = run_row(st, out);
		else
			rc = rc == SQLITE_DONE ? -ENOENT : err_of(s, rc);
		done(st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_run_get(struct store *s, int64_t id, struct run *out)
{
	return run_get_by(s, "SELECT " RUN_COLS " FROM runs WHERE id = ?", id, NULL, out);
}

int store_run_by_log(struct store *s, int64_t item_id, const char *log_path, struct run *out)
{
	return run_get_by(s, "SELECT " RUN_COLS " FROM runs WHERE item_id = ? AND log_path = ?",
			  item_id, log_path, out);
}

int store_run_each(struct store *s, int64_t item_id, const char *kind, const char *status,
		   int (*cb)(void *arg, const struct run *r), void *arg)
{
	struct run *v = NULL;
	size_t n = 0, cap = 0, i;
	sqlite3_stmt *st;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT " RUN_COLS " FROM runs WHERE (?1 = 0 OR item_id = ?1) AND "
		     "(?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR status = ?3) ORDER BY item_id, run_no");
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	sqlite3_bind_int64(st, 1, item_id);
	if (kind)
		sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	if (status)
		sqlite3_bind_text(st, 3, status, -1, SQLITE_STATIC);
	for (;;) {
		int r = sqlite3_step(st);

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		if (n == cap) {
			struct run *nv = realloc(v, (cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		rc = run_row(st, &v[n]);
		if (rc)
			break;
		n++;
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (rc == 0 && cb(arg, &v[i]))
			rc = 1;
		run_clear(&v[i]);
	}
	free(v);
	return rc < 0 ? rc : 0;
}

int store_log_append(struct store *s, int64_t run_id, const void *data, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	if (len == 0)
		return 0;
	pthread_mutex_lock(&s->lock);
	rc = begin(s);
	if (rc)
		goto out;
	st = stmt(s, "INSERT INTO log_chunks(run_id, off, data) "
		     "SELECT ?1, log_size, ?2 FROM runs WHERE id = ?1");
	if (!st) {
		rc = -EIO;
	} else {
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_blob64(st, 2, data, len, SQLITE_STATIC);
		rc = step_done(s, st);
	}
	if (rc == 0) {
		st = stmt(s, "UPDATE runs SET log_size = log_size + ? WHERE id = ?");
		if (!st) {
			rc = -EIO;
		} else {
			sqlite3_bind_int64(st, 1, (sqlite3_int64)len);
			sqlite3_bind_int64(st, 2, run_id);
			rc = step_done(s, st);
		}
	}
	rc = end(s, rc);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

ssize_t store_log_read(struct store *s, int64_t run_id, uint64_t off, void *buf, size_t size)
{
	sqlite3_stmt *st;
	uint64_t end_off = off + size;
	ssize_t got = 0;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT off, data FROM log_chunks WHERE run_id = ?1 AND off >= COALESCE("
		     "(SELECT MAX(off) FROM log_chunks WHERE run_id = ?1 AND off <= ?2), 0) "
		     "AND off < ?3 ORDER BY off");
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)off);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)end_off);
	for (;;) {
		int r = sqlite3_step(st);
		uint64_t coff, clen, from, to;
		const char *data;

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		coff = (uint64_t)sqlite3_column_int64(st, 0);
		data = sqlite3_column_blob(st, 1);
		clen = (uint64_t)sqlite3_column_bytes(st, 1);
		from = off > coff ? off : coff;
		to = coff + clen < end_off ? coff + clen : end_off;
		if (from >= to)
			continue;
		/* Chunks are contiguous; stop at a hole rather than return garbage. */
		if (from != off + (uint64_t)got)
			break;
		memcpy((char *)buf + got, data + (from - coff), to - from);
		got += (ssize_t)(to - from);
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc ? rc : got;
}

int store_log_sha256(struct store *s, int64_t run_id, char hex[65], int64_t *size)
{
	struct util_sha *sha = util_sha_new();
	sqlite3_stmt *st;
	int64_t total = 0;
	int rc = 0;

	if (!sha)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT data FROM log_chunks WHERE run_id = ? ORDER BY off");
	if (!st) {
		rc = -EIO;
	} else {
		sqlite3_bind_int64(st, 1, run_id);
		for (;;) {
			int r = sqlite3_step(st);

			if (r != SQLITE_ROW) {
				rc = r == SQLITE_DONE ? 0 : err_of(s, r);
				break;
			}
			util_sha_update(sha, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
			total += sqlite3_column_bytes(st, 0);
		}
		done(st);
	}
	pthread_mutex_unlock(&s->lock);
	util_sha_final(sha, hex);
	if (size)
		*size = total;
	return rc;
}

/* ---- registry and events ---- */

int store_registry_append(struct store *s, int64_t item_id, const char *line, const char *source,
			  int64_t run_id)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "INSERT INTO registry(item_id, line, source, run_id) VALUES (?, ?, ?, NULLIF(?, 0))");
	if (st) {
		sqlite3_bind_int64(st, 1, item_id);
		sqlite3_bind_text(st, 2, line, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, source, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, run_id);
		rc = step_done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_registry_lines(struct store *s, int64_t item_id, char ***lines, size_t *n)
{
	sqlite3_stmt *st;
	char **v = NULL;
	size_t count = 0;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT line FROM registry WHERE item_id = ? ORDER BY id");
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	sqlite3_bind_int64(st, 1, item_id);
	for (;;) {
		int r = sqlite3_step(st);

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		rc = strv_push(&v, (const char *)sqlite3_column_text(st, 0));
		if (rc)
			break;
		count++;
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	if (rc == 0 && !v) {
		v = calloc(1, sizeof(char *));
		if (!v)
			rc = -ENOMEM;
	}
	if (rc) {
		strv_free(v);
		return rc;
	}
	*lines = v;
	if (n)
		*n = count;
	return 0;
}

int store_registry_each(struct store *s,
			int (*cb)(void *arg, int64_t item_id, const char *line, const char *source,
				  int64_t run_id),
			void *arg)
{
	sqlite3_stmt *st;
	int rc = 0;

	/* Used by the offline check only: cb must not call the store. */
	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT item_id, line, source, COALESCE(run_id, 0) FROM registry ORDER BY id");
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	for (;;) {
		int r = sqlite3_step(st);

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		if (cb(arg, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
		       (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 3)))
			break;
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_event_add(struct store *s, int64_t item_id, const char *line)
{
	sqlite3_stmt *st;
	int rc = -EIO;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "INSERT INTO events(item_id, line) VALUES (NULLIF(?, 0), ?)");
	if (st) {
		sqlite3_bind_int64(st, 1, item_id);
		sqlite3_bind_text(st, 2, line, -1, SQLITE_STATIC);
		rc = step_done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_events_render(struct store *s, int64_t item_id, struct buf *out)
{
	sqlite3_stmt *st;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	st = stmt(s, "SELECT line FROM events WHERE ?1 = 0 OR item_id = ?1 ORDER BY id");
	if (!st) {
		rc = -EIO;
		goto unlock;
	}
	sqlite3_bind_int64(st, 1, item_id);
	for (;;) {
		int r = sqlite3_step(st);

		if (r != SQLITE_ROW) {
			rc = r == SQLITE_DONE ? 0 : err_of(s, r);
			break;
		}
		rc = buf_append(out, sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
		if (rc == 0)
			rc = buf_append(out, "\n", 1);
		if (rc)
			break;
	}
	done(st);
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc;
}
