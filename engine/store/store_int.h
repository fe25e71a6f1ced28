/*
 * store_int.h - what the store's files (store.c: connection, meta, items;
 * store_doc.c: documents and revisions; store_run.c: runs, logs, registry,
 * events) share. Not for the rest of the engine: store.h is the contract.
 *
 * Every store__ helper expects s->lock to be held by the caller.
 */
#ifndef PACKETFS_STORE_INT_H
#define PACKETFS_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "store.h"

#define STMT_CACHE 96
#define SIZE_CACHE 256
#define ITEM_CACHE 256

struct store {
	pthread_mutex_t lock;
	sqlite3 *db; /* protected by lock */
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} cache[STMT_CACHE]; /* protected by lock */
	int ncache;          /* protected by lock */
	/* The checkpointer (store.c): a thread with a connection of its own. */
	sqlite3 *ckpt_db;            /* used by the checkpointer thread only */
	pthread_t ckpt_thread;
	int ckpt_running;            /* the thread exists */
	pthread_mutex_t ckpt_lock;
	pthread_cond_t ckpt_cond;    /* ckpt_wanted or ckpt_stop became set */
	int ckpt_wanted, ckpt_stop;  /* protected by ckpt_lock */
	/* Sizes of registry.jsonl and events views (store_run.c), kept by a
	 * writable store, the only writer of those append-only rows, so that a
	 * stat does not sum every line. Direct-mapped; key 0 is empty. */
	int writable;
	struct {
		int64_t key;
		uint64_t size;
	} sizes[SIZE_CACHE]; /* protected by lock */
	/* Item rows by name (store.c), kept by a writable store: a slot is
	 * current while its gen equals item_gen, which every write of an
	 * items row moves on (store__items_changed). Direct-mapped. */
	uint64_t item_gen;   /* protected by lock; starts at 1 */
	struct {
		uint64_t gen;
		struct item it;
	} items[ITEM_CACHE]; /* protected by lock */
};

/* Translates a SQLite result code to 0 or a negative errno, logging
 * SQLite's message for failures. The only such translation. */
int store__err(struct store *s, int rc);
/* The prepared statement for sql, cached by the address of sql (pass
 * string literals); NULL when it cannot be prepared. Reset with store__done. */
sqlite3_stmt *store__stmt(struct store *s, const char *sql);
void store__done(sqlite3_stmt *st);
int store__exec(struct store *s, const char *sql);
/* BEGIN IMMEDIATE; store__end commits when rc == 0, else rolls back, and
 * returns the outcome. */
int store__begin(struct store *s);
int store__end(struct store *s, int rc);
/* Every kept item row is out of date (an items row was written). Lock
 * held. */
void store__items_changed(struct store *s);
/* Steps a statement that returns no rows and resets it. */
int store__step_done(struct store *s, sqlite3_stmt *st);
/* Binds a time in ns to parameter idx of st, or NULL for STORE_TIME_OMIT
 * (statements keep the stored time with COALESCE). */
void store__bind_time(sqlite3_stmt *st, int idx, int64_t ns);
/* Column i as a new string ("" for NULL; NULL on ENOMEM) or copied into out. */
char *store__col_dup(sqlite3_stmt *st, int i);
void store__col_copy(sqlite3_stmt *st, int i, char *out, size_t size);
/* Column i (a blob) as a new NUL-terminated buffer in *data. 0 or -ENOMEM. */
int store__blob_out(sqlite3_stmt *st, int i, char **data, size_t *len);
/* RFC 3339 UTC now. */
void store__now(char out[32]);
/*
 * Steps st to its end, converting each row with row(st, elem, ctx) into a
 * new element of `size` bytes of a growing array. Returns 0 with *out
 * (caller frees, after clearing the elements) and *n, or a negative errno
 * (the elements converted so far are still in *out and counted in *n, for
 * the caller to clear). Resets st.
 */
int store__collect(struct store *s, sqlite3_stmt *st, size_t size,
		   int (*row)(sqlite3_stmt *st, void *elem, void *ctx), void *ctx, void **out,
		   size_t *n);

#endif
