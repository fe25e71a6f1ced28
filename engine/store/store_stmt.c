/*
 * store_stmt.c - the store's statement layer (store_int.h): prepared
 * statements cached per SQL text, their parameters bound from a format
 * string, stepping with SQLite's result codes translated to negative errno
 * values, transactions, and reading columns out. It knows SQLite and
 * nothing of the store's tables: store.c, store_item.c, store_doc.c and
 * store_run.c sit on it.
 *
 * Design: a statement is prepared once per connection (SQLITE_PREPARE_
 * PERSISTENT) and cached by the address of its SQL text, a string literal;
 * every use ends in store__done, which resets it and clears its bindings
 * before s->lock is released. store__err is the only place that turns a
 * SQLite result code into an errno value and logs SQLite's message.
 *
 * Every function here expects s->lock to be held by the caller, but
 * store__txn_lock, which takes it, and store__txn_unlock, which releases it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "store_int.h"

int store__err(struct store *s, int rc)
{
	int primary = rc & 0xff;

	if (primary == SQLITE_OK || primary == SQLITE_DONE || primary == SQLITE_ROW)
		return 0;
	util_log(LOG_ERR, "store: %s", sqlite3_errmsg(s->db));
	/* A write, truncate or sync that the file system refused for want of
	 * space or quota is SQLITE_FULL or an SQLITE_IOERR_* whose system
	 * errno says so: both are ENOSPC (EDQUOT stays itself). */
	if (primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN) {
		int sys = sqlite3_system_errno(s->db);

		if (sys == ENOSPC || sys == EDQUOT)
			return -sys;
	}
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

/* The cached statement for sql (cached by its address), unbound; NULL,
 * logged, when it cannot be prepared. STMT_CACHE must stay above the
 * number of statements the store has: past it, each use prepares one that
 * is never finalized. */
static sqlite3_stmt *stmt_get(struct store *s, const char *sql)
{
	sqlite3_stmt *st;
	int i;

	for (i = 0; i < s->ncache; i++)
		if (s->cache[i].sql == sql)
			return s->cache[i].st;
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		util_log(LOG_ERR, "store: prepare: %s", sqlite3_errmsg(s->db));
		return NULL;
	}
	if (s->ncache < STMT_CACHE) {
		s->cache[s->ncache].sql = sql;
		s->cache[s->ncache].st = st;
		s->ncache++;
	}
	return st;
}

/* Binds the arguments in ap to st's parameters 1, 2, ... as fmt says (see
 * store_int.h), one letter for each parameter. 0 or a negative errno. */
static int bind_args(struct store *s, sqlite3_stmt *st, const char *fmt, va_list ap)
{
	const void *p;
	int64_t ns;
	size_t len;
	int i, rc;

	/* A letter short or too many: the arguments would go to the wrong
	 * parameters. */
	if (strlen(fmt) != (size_t)sqlite3_bind_parameter_count(st)) {
		util_log(LOG_ERR, "store: %zu bind letters for %d parameters: %s",
			strlen(fmt), sqlite3_bind_parameter_count(st), sqlite3_sql(st));
		return -EINVAL;
	}
	for (i = 1; *fmt; fmt++, i++) {
		switch (*fmt) {
		case 'I':
			rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'i':
			rc = sqlite3_bind_int(st, i, va_arg(ap, int));
			break;
		case 'd':
			rc = sqlite3_bind_double(st, i, va_arg(ap, double));
			break;
		case 's':
			p = va_arg(ap, const char *);
			rc = p ? sqlite3_bind_text(st, i, p, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
			break;
		case 'b':
			p = va_arg(ap, const void *);
			len = va_arg(ap, size_t);
			rc = p ? sqlite3_bind_blob64(st, i, p, len, SQLITE_STATIC) : sqlite3_bind_null(st, i);
			break;
		case 't':
			ns = va_arg(ap, int64_t);
			rc = ns == STORE_TIME_OMIT ? sqlite3_bind_null(st, i) : sqlite3_bind_int64(st, i, ns);
			break;
		case '-':
			rc = SQLITE_OK;
			break;
		default:
			util_log(LOG_ERR, "store: bad bind format '%c'", *fmt);
			return -EINVAL;
		}
		if (rc != SQLITE_OK)
			return store__err(s, rc);
	}
	return 0;
}

/* store__prepare with the arguments in ap. */
static int prepare_v(struct store *s, sqlite3_stmt **st, const char *sql, const char *fmt,
		     va_list ap)
{
	int rc;

	assert(util_mutex_held(&s->lock));
	*st = stmt_get(s, sql);
	if (!*st)
		return -EIO;
	rc = bind_args(s, *st, fmt, ap);
	if (rc) {
		store__done(*st);
		*st = NULL;
	}
	return rc;
}

int store__prepare(struct store *s, sqlite3_stmt **st, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = prepare_v(s, st, sql, fmt, ap);
	va_end(ap);
	return rc;
}

int store__first(struct store *s, sqlite3_stmt **st, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = prepare_v(s, st, sql, fmt, ap);
	va_end(ap);
	if (rc == 0)
		rc = store__step(s, *st);
	return rc > 0 ? 0 : rc == 0 ? -ENOENT : rc;
}

int store__exec(struct store *s, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = prepare_v(s, &st, sql, fmt, ap);
	va_end(ap);
	return rc ? rc : store__step_done(s, st);
}

int store__step(struct store *s, sqlite3_stmt *st)
{
	int rc;

	assert(util_mutex_held(&s->lock));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : store__err(s, rc);
}

int store__step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = store__step(s, st);

	store__done(st);
	return rc < 0 ? rc : 0;
}

void store__done(sqlite3_stmt *st)
{
	if (st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

int store__script(struct store *s, const char *sql)
{
	return store__err(s, sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

int store__txn_lock(struct store *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	/* Prepared once, like every statement: not parsed at each commit. */
	rc = store__exec(s, "BEGIN IMMEDIATE", "");
	if (rc)
		pthread_mutex_unlock(&s->lock);
	return rc;
}

int store__txn_unlock(struct store *s, int rc)
{
	assert(util_mutex_held(&s->lock));
	if (rc == 0)
		rc = store__exec(s, "COMMIT", "");
	if (rc) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		store__rev_forget(s);
	}
	store__doc_memo_settle(s, rc == 0);
	store__later_settle(s, rc == 0);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

char *store__col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

void store__col_copy(sqlite3_stmt *st, int i, char *out, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(out, size, "%s", t ? (const char *)t : "");
}

int store__str_cols_read(sqlite3_stmt *st, void *row, const struct store_str_col *cols,
			 size_t n)
{
	int rc = 0;

	for (size_t k = 0; k < n; k++) {
		STORE_STR(row, cols, k) = store__col_dup(st, cols[k].col);
		if (!STORE_STR(row, cols, k))
			rc = -ENOMEM;
	}
	return rc;
}

void store__str_cols_free(void *row, const struct store_str_col *cols, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		free(STORE_STR(row, cols, k));
		STORE_STR(row, cols, k) = NULL;
	}
}

int store__blob_out(sqlite3_stmt *st, int i, char **data, size_t *len)
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

int store__collect(struct store *s, sqlite3_stmt *st, size_t size,
		   int (*row)(sqlite3_stmt *st, void *elem, void *ctx), void *ctx, void **out,
		   size_t *n)
{
	char *v = NULL;
	size_t count = 0, cap = 0;
	int rc;

	while ((rc = store__step(s, st)) > 0) {
		if (count == cap) {
			char *nv = realloc(v, (cap ? cap * 2 : 16) * size);

			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		rc = row(st, v + count * size, ctx);
		if (rc)
			break;
		count++;
	}
	store__done(st);
	*out = v;
	*n = count;
	return rc;
}
