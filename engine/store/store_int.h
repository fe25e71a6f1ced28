/*
 * store_int.h - what the store's files (store_stmt.c: statements and
 * transactions; store.c: connection, meta; store_item.c: items;
 * store_doc.c: documents; store_doc_list.c: their listing; store_rev.c:
 * how revisions are stored, and their reads; store_rev_list.c: history
 * listed; store_run.c: runs, logs, registry, events; store_vfs.c: the
 * VFS its connections open with; store_doc_memo.c: documents rows
 * remembered between changes) share. Not for the rest of the engine:
 * store.h is the contract.
 *
 * Every store__ helper expects s->lock to be held by the caller, but the
 * pair that takes and releases it around a transaction (store__txn_lock).
 */
#ifndef PACKETFS_STORE_INT_H
#define PACKETFS_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <zstd.h>

#include "store.h"

#define STMT_CACHE 96
#define SIZE_CACHE 32768 /* sizes of views kept, at most */
#define ITEM_CACHE 16384            /* item rows kept, at most */
#define ITEM_CACHE_BYTES (8u << 20) /* and their bytes */
#define REV_CACHE 16
#define DOC_MEMO 8         /* documents rows remembered (store_doc_memo.c) */
#define DOC_MEMO_PATH 256  /* and their paths' longest, with the NUL */
#define DOC_STAGED 2       /* rows one write transaction stages, at most */

/* A documents row read outside a transaction, with the connection's
 * commits and rows changed when it was read (store_doc_memo.c); item 0 is
 * an empty entry. */
struct doc_memo {
	int64_t item;
	char path[DOC_MEMO_PATH];
	int rc; /* 0 (m is the row) or -ENOENT (no row) */
	struct doc_meta m;
	uint64_t commits;
	int64_t changes;
};

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
	int ckpt_woken_at;           /* protected by ckpt_lock: WAL pages at the last wake */
	int ckpt_pages, ckpt_step, ckpt_max; /* CKPT_PAGES, CKPT_STEP, CKPT_MAX_PAGES of
					      * store.c in this store's frames (set at open) */
	int writable;
	/* The revisions retired later (store_later.c): a thread of its own
	 * with the store's connection; the revisions waiting once the last
	 * transaction committed, and those the one under way added. */
	pthread_t later_thread;
	int later_running;             /* protected by lock: the thread exists */
	pthread_mutex_t later_lock;
	pthread_cond_t later_cond;     /* later_wanted or later_stop became set */
	int later_wanted, later_stop;  /* protected by later_lock */
	int later_held;                /* protected by later_lock: store__later_hold */
	int later_n;                   /* written under lock, read under later_lock (atomic) */
	int later_txn;                 /* protected by lock */
	uint64_t later_bytes, later_txn_bytes; /* protected by lock: their sizes */
	/* Commits of this connection (store_commits): moved on by SQLite's
	 * commit hook, under lock; read without it (atomic). */
	uint64_t commits;
	/* 1 once store_sync wrote the WAL file's blocks up to WAL_LIMIT
	 * (store__vfs_wal_fill); a TRUNCATE checkpoint sets it back to 0.
	 * Atomic: written by store_sync under lock and by the checkpointer. */
	int wal_filled;
	/* Sizes of registry.jsonl and events views (store_run.c), kept by a
	 * writable store, the only writer of those append-only rows, so that a
	 * stat does not sum every line. Least recently used dropped first. */
	struct lru sizes; /* protected by lock */
	/* Item rows by name (store_item.c), kept by a writable store: an
	 * entry is current while its gen equals item_gen, which every write
	 * of an items row moves on (store__items_changed). Keyed by a hash of
	 * the name; least recently used dropped first (lru.h), so that a
	 * sweep of every item's directory finds each row again. */
	uint64_t item_gen;   /* protected by lock; starts at 1 */
	struct lru items;    /* protected by lock */
	/* zstd's contexts for revisions (store_rev.c), made at first use. */
	ZSTD_CCtx *zc; /* protected by lock */
	ZSTD_DCtx *zd; /* protected by lock */
	/* The content of revisions encoded for good (store_rev.c), the last
	 * ones retired or decoded, so that the next write's base is not
	 * decoded again. Least recently used first out; id 0 is empty. */
	struct {
		int64_t id;
		char *data; /* NUL-terminated */
		size_t len;
		uint64_t used;
	} revs[REV_CACHE]; /* protected by lock */
	uint64_t rev_clock; /* protected by lock */
	struct doc_memo doc_memo[DOC_MEMO]; /* protected by lock */
	int doc_memo_next;                  /* protected by lock: the entry replaced next */
	/* protected by lock: rows read inside the write transaction under
	 * way, kept once it commits (store__doc_memo_stage); item 0: none */
	struct doc_memo doc_staged[DOC_STAGED];
};

/* The name of the VFS the store opens its connections with (store_vfs.c:
 * the default VFS, with a WAL file's writes gathered into one per commit),
 * registered at the first call; NULL (SQLite's default VFS) when it could
 * not be. Any thread. */
const char *store__vfs(void);

/* A new descriptor (close-on-exec; the caller closes it) of the WAL file f,
 * a WAL file this VFS opened, after writing what its buffer holds, for
 * store_sync to fdatasync(2) without the store's lock; -1 when there is
 * none: f is not this VFS's WAL file, no descriptor could be opened, or no
 * xSync of f succeeded yet (SQLite's first one also syncs the directory
 * that holds the new file). The caller holds the lock of the connection
 * that owns f (s->lock). */
int store__vfs_wal_fd(sqlite3_file *f);

/* Writes zeros from the end of the WAL file f, a WAL file this VFS opened
 * (any other f: nothing), up to size bytes, and syncs them (store_vfs.c
 * says why): SQLITE_OK, also when f was that large already, or the default
 * VFS's error (a full disk: SQLITE_FULL), the file then cut back to its
 * size before. The caller holds the lock of the connection that owns f
 * (s->lock) and the WAL's write lock (a write transaction that has written
 * no frame yet), so that no connection of any process writes the file or
 * starts it over meanwhile. */
int store__vfs_wal_fill(sqlite3_file *f, sqlite3_int64 size);

/*
 * Documents rows remembered (store_doc_memo.c), lock held, any thread that
 * holds it. store__doc_memo_get: 1 when the row of (item, path) was read
 * since the connection last changed a row or committed, with *rc its
 * result then (0 with the row in *m, or -ENOENT); 0 when it must be read.
 * store__doc_memo_put keeps the result rc (0 with *m, or -ENOENT) of a read
 * just made; it keeps nothing inside a transaction, for a read-only store
 * or for another rc.
 */
int store__doc_memo_get(struct store *s, int64_t item, const char *path, struct doc_meta *m,
			int *rc);
void store__doc_memo_put(struct store *s, int64_t item, const char *path, int rc,
			 const struct doc_meta *m);
/*
 * Rows a commit wrote, kept as if read after it (store_doc_memo.c), so
 * that the next request for them does not read them again. Lock held,
 * inside a write transaction. store__doc_memo_stage takes the result of a
 * read of (item, path) made inside the transaction after its last change
 * to that row and before its end: rc 0 with the row in *m, or -ENOENT (no
 * row; m unused). Up to DOC_STAGED rows, each path once: a path staged
 * again replaces its first staging, and one more path replaces the last.
 * store__doc_memo_settle, at the transaction's end (store__txn_unlock),
 * keeps the staged rows as store__doc_memo_put would after a read when
 * committed is 1, and drops them when the transaction rolled back (0).
 */
void store__doc_memo_stage(struct store *s, int64_t item, const char *path, int rc,
			   const struct doc_meta *m);
void store__doc_memo_settle(struct store *s, int committed);

/*
 * Reads the documents row of (item, path) into *m and stages the result
 * (store__doc_memo_stage) (store_doc.c). Lock held, inside a write
 * transaction, after its last change to that row. Returns 0, -ENOENT (no
 * row: staged as such) or a negative errno (nothing staged).
 */
int store__doc_stage(struct store *s, int64_t item, const char *path, struct doc_meta *m);

/*
 * Statements (store_stmt.c).
 *
 * store__prepare gets the cached statement for sql (a string literal: the
 * cache is keyed by its address) and binds the arguments that follow fmt
 * to its parameters 1, 2, ... in order, one letter of fmt for each of its
 * parameters (the largest ?NNN counts; the count is checked):
 *
 *	I	int64_t			an integer
 *	i	int			an integer
 *	d	double			a real
 *	s	const char *		text; NULL binds NULL
 *	b	const void *, size_t	a blob of that many bytes; NULL binds NULL
 *	t	int64_t			a time in ns; STORE_TIME_OMIT binds NULL
 *					(statements keep the stored time with
 *					COALESCE)
 *	-	(none)			leaves the parameter NULL (unused, or
 *					for the caller to bind)
 *
 * Arguments must have exactly these types: variadic arguments are not
 * converted, so cast (an int, a uid_t or a size_t passed for I must be
 * cast to int64_t). Text and blobs are bound without a copy and must stay
 * valid until store__done. Returns 0 with *st, or a negative errno with
 * *st NULL (-EIO: sql cannot be prepared; -EINVAL: more or fewer
 * letters than parameters, or a letter not above; a bind's failure through
 * store__err). Give *st to store__done after every call, whatever it
 * returned: it accepts NULL.
 */
int store__prepare(struct store *s, sqlite3_stmt **st, const char *sql, const char *fmt, ...);
/* store__prepare, then one step: 0 with the first row's columns readable
 * in *st, -ENOENT when there is no row, or a negative errno. store__done(*st)
 * after, as for store__prepare. */
int store__first(struct store *s, sqlite3_stmt **st, const char *sql, const char *fmt, ...);
/* store__prepare, then runs the statement to its end and resets it: for a
 * statement that returns no rows (sqlite3_changes() still tells how many
 * it changed). 0 or a negative errno. */
int store__exec(struct store *s, const char *sql, const char *fmt, ...);
/* Steps st once: 1 with a row to read, 0 at its end, or a negative errno
 * (store__err). Does not reset st. */
int store__step(struct store *s, sqlite3_stmt *st);
/* Steps st to its end and resets it (store__done). 0 or a negative errno. */
int store__step_done(struct store *s, sqlite3_stmt *st);
/* Resets st and clears its bindings, for its next use; NULL is ignored. */
void store__done(sqlite3_stmt *st);
/* Translates a SQLite result code to 0 (SQLITE_OK, _ROW, _DONE) or a
 * negative errno, logging SQLite's message for failures. The only such
 * translation. */
int store__err(struct store *s, int rc);
/* Runs sql, one or more statements without parameters, with sqlite3_exec:
 * pragmas, migrations. 0 or a negative errno. */
int store__script(struct store *s, const char *sql);
/* A write transaction under the lock: store__txn_lock takes s->lock and
 * begins (BEGIN IMMEDIATE): 0 with the lock held, or a negative errno with
 * it released. store__txn_unlock commits when rc == 0, else rolls back,
 * releases s->lock and returns rc or the commit's failure. */
int store__txn_lock(struct store *s);
int store__txn_unlock(struct store *s, int rc);
/* Column i as a new string ("" for NULL; NULL on ENOMEM) or copied into out. */
char *store__col_dup(sqlite3_stmt *st, int i);
void store__col_copy(sqlite3_stmt *st, int i, char *out, size_t size);
/* A string member of a row's struct (a char * the row owns, "" when the
 * column is NULL) and the column of the SELECT it is read from. */
struct store_str_col {
	size_t off; /* offsetof() the member in the struct */
	int col;
};
/* The member at cols[k].off of row, for k < n. */
#define STORE_STR(row, cols, k) (*(char **)((char *)(row) + (cols)[k].off))
/* Reads the n columns cols[k].col of st into their members of row
 * (store__col_dup), every one of them. 0, or -ENOMEM when one could not be
 * read (it is NULL; store__str_cols_free frees the others). */
int store__str_cols_read(sqlite3_stmt *st, void *row, const struct store_str_col *cols,
			 size_t n);
/* Frees the n string members cols of row (NULL ones too) and sets them NULL. */
void store__str_cols_free(void *row, const struct store_str_col *cols, size_t n);
/* Column i (a blob) as a new NUL-terminated buffer in *data. 0 or -ENOMEM. */
int store__blob_out(sqlite3_stmt *st, int i, char **data, size_t *len);
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

/* An owner or group id as the store keeps it: STORE_ID_DEFAULT as -1,
 * every other id as itself. (A column read back with sqlite3_column_int64
 * and cast to uid_t or gid_t gives the id again.) */
static inline int64_t store__id(uint32_t id)
{
	return id == STORE_ID_DEFAULT ? -1 : (int64_t)id;
}

/* The extended attributes of the entry at from move to the entry at to (which
 * has none), or go (store_xattr.c). Lock held, in the caller's transaction.
 * 0 or a negative errno. */
int store__xattr_move(struct store *s, int64_t item, const char *from, const char *to);
int store__xattr_drop(struct store *s, int64_t item, const char *path);

/*
 * Hard links (store_link.c; schema/0010_links.sql). Lock held, in the
 * caller's transaction; 0 or a negative errno.
 *
 * store__link_sync: the entry at path changed; when it is one of several
 * names of a file (link: its link number; 0 none; < 0 read it from its
 * row, and none when it has no row), copies to every other name what
 * what says: STORE_LINK_ROW, the file columns of its documents row
 * (content revision, size, mode, owner, times, kind, rdev), and
 * STORE_LINK_XATTRS, its extended attributes.
 *
 * store__link_left: a name of link number link went; moves the ctime of
 * the names left to now (their link count changed) and tells how many
 * are left in *left (0 when link is 0).
 *
 * store__link_new: a link number no name in item has, in *link.
 */
#define STORE_LINK_ROW 1
#define STORE_LINK_XATTRS 2
int store__link_sync(struct store *s, int64_t item, const char *path, int64_t link, int what);
int store__link_left(struct store *s, int64_t item, int64_t link, int *left);
int store__link_new(struct store *s, int64_t item, int64_t *link);

/*
 * Revisions (store_rev.c; its top says how they are stored). Lock held.
 *
 * store__rev_content: the content of revision id, whatever its encoding,
 * as a new NUL-terminated buffer in *data (caller frees) and its length in
 * *len (may be NULL): the one function that reads revisions.content. 0,
 * -ENOENT (no such revision, or a tombstone), -EIO (a stored revision that
 * does not decode) or -ENOMEM.
 *
 * store__rev_retire: revision id stopped being its document's current one
 * (a newer write, an unlink, a rename away or over it): encodes it for
 * good, inside the caller's transaction. Does nothing to a tombstone or a
 * revision already encoded. 0 or a negative errno.
 *
 * store__rev_whole: stores len bytes of data as the whole content of
 * revision id, current, replacing what its row of whole held (in place
 * when it fits). 0 or a negative errno.
 *
 * store__rev_replace: a new revision of len bytes of data is about to
 * replace prev (0: none) as its document's current one: retires prev, as
 * store__rev_retire, and stores the new content whole in the row of whole
 * that prev had, in place when it fits (a commit then writes the pages
 * whose bytes changed, not the whole document), naming that row in *slot
 * (0 for empty content) for the new revision's row to name. Called before
 * that row is inserted, so that its INSERT sets it at once. 0 or a
 * negative errno.
 *
 * store__rev_pass_on: a new revision with prev's content, len bytes at
 * data (a rename's copy), is about to replace prev: retires prev, as
 * store__rev_retire, and names in *slot prev's row of whole for the new
 * revision's row to take over as it is, its pieces with it; a content no
 * row held (empty, or kept in an older store's revision row) is stored as
 * store__rev_replace stores it. Called before that row is inserted. 0 or
 * a negative errno.
 *
 * store__rev_append: a new revision is about to replace prev, its
 * document's current one, with prev's content followed by len > 0 bytes of
 * data (an append): retires prev, as store__rev_retire but reading only
 * what its run of appends added since its base when it can
 * (revisions.grown_from), writes data after prev's bytes in the row of
 * whole prev had (only the pages they fall in; a new row when they do not
 * fit its room), and fills *g with what the new revision's row is to hold:
 * its row of whole, the run it continues (grown_from) and its size.
 * Called before that row is inserted, as store__rev_replace. 0, -ESTALE
 * (prev is not a current revision) or a negative errno.
 *
 * store__rev_compact: retires every content revision that no document
 * names and that is still stored whole: the step of migration 0008, which
 * converts a store of an older packetfs. 0 or a negative errno.
 */
int store__rev_content(struct store *s, int64_t id, char **data, size_t *len);
/* How revisions are stored (store_rev.c's top comment), shared by its read
 * side (store_rev.c) and its write side (store_retire.c). revisions.enc
 * (schema/0008_compact.sql); a REV_APPEND's suffix is compressed against
 * the last REV_APPEND_TAIL bytes of its base (all of it when shorter), part
 * of the stored format; a chain of deltas is at most REV_DEPTH_MAX long. */
enum { REV_RAW = 0, REV_KEPT = 1, REV_ZSTD = 2, REV_DELTA = 3, REV_APPEND = 4 };
#define REV_APPEND_TAIL 4096
#define REV_DEPTH_MAX 32
/* The stored bytes of revision r (a SELECT over revisions r LEFT JOIN
 * whole w ON w.slot = r.slot): a whole one's (enc 0) are in the table
 * whole, but for the revisions of an older store while migration 0008
 * retires them. */
#define WHOLE_CONTENT "CASE WHEN r.enc = 0 THEN COALESCE(w.content, r.content) ELSE r.content END"
/* Compresses src (len bytes) against prefix (plen bytes; none when 0) into
 * a new buffer *out of *olen bytes (caller frees), as the stored format
 * wants it. Lock held (it uses s->zc). 0, -ENOMEM or -EIO. */
int store__rev_compress(struct store *s, const void *src, size_t len, const void *prefix,
			size_t plen, void **out, size_t *olen);
/* Keeps a copy of the content (len bytes at data) of retired revision id in
 * s->revs (a revision's content never changes once retired), dropping the
 * least recently used ones to stay within 16 MiB in all; content over a
 * quarter of that is not kept, nor anything when memory is short. Lock
 * held. */
void store__rev_keep(struct store *s, int64_t id, const char *data, size_t len);
/* store__rev_keep of data itself, not a copy: takes data (malloc'd, with a
 * NUL at data[len]), which it keeps or frees. Lock held. */
void store__rev_keep_owned(struct store *s, int64_t id, char *data, size_t len);
/* The file type (S_IFREG, S_IFLNK, S_IFIFO, ...) that column col of st, a
 * kind column of documents or revisions (schema/0009_nodes.sql), names; a
 * document for an unknown value (store_doc.c). */
mode_t store__kind_type(sqlite3_stmt *st, int col);
/* The columns of a documents row d as store__doc_row reads them, in a
 * statement's result from column first on: its type, content revision,
 * size, mode, times, owner, link number and link count (store_doc.c). */
#define DOC_COLS                                                                          \
	"d.is_dir, d.rev_id, d.size, d.mode, d.mtime_ns, d.ctime_ns, "                   \
	"COALESCE((SELECT rev FROM revisions r WHERE r.id = d.rev_id), 0), d.atime_ns, "     \
	"d.uid, d.gid, d.kind, d.rdev, d.link, CASE WHEN d.is_dir THEN 0 WHEN d.link = 0 THEN 1 " \
	"ELSE (SELECT count(*) FROM documents p WHERE p.item_id = d.item_id AND "          \
	"p.link = d.link AND p.link <> 0) END"
/* Fills *m from the current row of st, a statement that selects DOC_COLS
 * from its column first on (m->subdirs is set to 0: only the read of one
 * row counts them). Lock held; st is the caller's (store_doc.c). */
void store__doc_row(sqlite3_stmt *st, int first, struct doc_meta *m);
int store__rev_retire(struct store *s, int64_t id);
int store__rev_whole(struct store *s, int64_t id, const void *data, size_t len);
/*
 * The rows of whole and their pieces (store_whole.c; schema/0019). Lock
 * held, inside a write transaction for the writes; 0 or a negative errno
 * (-EIO: rows that do not hold what the revision says, -ENOMEM).
 *
 * store__whole_put: stores len bytes of data as whole content, in one row
 * of whole padded to its room, and names that row in *out (0 for empty
 * content, which needs no row: reads find revisions.content, X''), for the
 * caller to set as its revision's slot. The row slot (0: none), when there
 * is one, is taken over, its pieces dropped: rewritten in place when len
 * fits its room and the room is not more than twice what len needs (SQLite
 * then writes only the pages whose bytes change); else deleted and a new
 * row made, with room to grow when the content outgrew the old one.
 *
 * store__whole_append: writes len > 0 bytes of data after the first size
 * bytes of the content of slot (0: none yet, size 0), in the last row that
 * holds it while that has room, else in a new piece (a content of
 * WHOLE_PIECE bytes or more) or a new row with room to grow (a shorter
 * one); the slot that then holds size + len bytes in *out. A row of whole
 * of WHOLE_PIECE bytes or more is never written into, whatever its room
 * (an append there would walk it). The piece written is the one holding
 * offset size; rows that disagree with size (a piece after it) are not
 * looked for here: store__whole_finish reports them (-EIO) at the read.
 *
 * store__whole_read: reads n bytes at offset off of the content of slot
 * into buf (the caller has checked they are within its size).
 *
 * store__whole_finish: *data (malloc'd, *len bytes, NUL after them) holds
 * the row of whole slot of a revision of size bytes, which has pieces
 * when pieces is not 0 (the caller's query asked: WHOLE_PIECES); joins
 * them after it, or drops the row's padding, so that *data holds the size
 * bytes (NUL-terminated; replaced by a new buffer when there are pieces).
 */
int store__whole_put(struct store *s, const void *data, size_t len, int64_t slot, int64_t *out);
int store__whole_append(struct store *s, int64_t slot, size_t size, const void *data, size_t len,
			int64_t *out);
int store__whole_read(struct store *s, int64_t slot, size_t off, size_t n, void *buf);
int store__whole_finish(struct store *s, int64_t slot, int pieces, char **data, size_t *len,
			size_t size);
/* Whether the row of whole w (in a SELECT joining it as w) has pieces: an
 * index probe within the statement that reads the row. */
#define WHOLE_PIECES "EXISTS (SELECT 1 FROM whole_pieces p WHERE p.slot = w.slot)"
int store__rev_replace(struct store *s, int64_t prev, const void *data, size_t len, int64_t *slot);
int store__rev_pass_on(struct store *s, int64_t prev, const void *data, size_t len,
			int64_t *slot);
/* What the row of an appended revision holds (store__rev_append): its row
 * of whole (revisions.slot, 0: none), the run of appends it continues
 * (revisions.grown_from) and its size in bytes. */
struct rev_grown {
	int64_t slot, grown;
	uint64_t size;
};
int store__rev_append(struct store *s, int64_t prev, const void *data, size_t len,
		      struct rev_grown *g);
/* store__rev_grow: the current revision id, still current, takes len > 0
 * bytes of data after its content, in place (store_doc_grow): its row of
 * whole grows (store__whole_append) and its row gets the new size and
 * slot; g->grown is its run's, unchanged. -ESTALE when id is no current
 * revision of content kept in a row of whole. Lock held, inside a
 * transaction. */
int store__rev_grow(struct store *s, int64_t id, const void *data, size_t len,
		    struct rev_grown *g);
/* store_doc_attr.c: moves the mtime and ctime of the directory that holds
 * path to now: the items row for a top-level path, else the directory's
 * documents row (none for validation/, which the store does not keep).
 * Lock held. 0 or a negative errno. */
int store__touch_parent(struct store *s, int64_t item, const char *path);
int store__rev_compact(struct store *s);
/* store_save.c, inside a transaction, lock held. store__life_is_save: 1
 * when the life of path (its revisions since its latest tombstone) began
 * with a create by thread pid or another thread of its process (the end of
 * a temp-file-then-rename save), 0 when not or path has no life, or a
 * negative errno; it may read /proc (util_tgid); *tomb gets the rev of
 * path's latest tombstone (0: none) when path has a life, else -1.
 * store__life_carry moves the life of path from (its revisions since its
 * latest tombstone, whose rev is tomb; -1: not known, looked up) to path
 * to, numbered after to's revisions. store__unlink_forget, for an
 * unlink of the document m at path: when path holds only the copy a
 * rename made of a document whose old name has a new document since,
 * removes that copy and the rename's tombstone (renumbering the old
 * name's later revisions) and returns 1; so too, removing it, when path's
 * life is one empty create by process pid (a probe); else changes nothing
 * and returns 0. Both: a negative errno on failure. The documents row at
 * path must be gone already. */
int store__life_is_save(struct store *s, int64_t item, const char *path, pid_t pid, int *tomb);
int store__life_carry(struct store *s, int64_t item, const char *from, const char *to, int tomb);
int store__unlink_forget(struct store *s, int64_t item, const char *path, const struct doc_meta *m,
			 pid_t pid);
/*
 * store_later.c: revisions retired later. store__later_add, for a revision
 * of size bytes that stopped being current (a rename over its name, an
 * unlink): waits for the store's thread to retire it (or, past the bound
 * or without the thread, store__rev_retire now); in a transaction, lock
 * held. 0 or a negative errno. store__later_now retires a waiting revision
 * at once (a base of one retired now); in a transaction, lock held.
 * store__later_settle at the end of a transaction (store__txn_unlock,
 * committed or not), lock held: counts what it added, and wakes the
 * thread. store__later_start and
 * store__later_stop, at a writable open and at close, from the thread that
 * opens and closes; stop retires every waiting revision before it returns.
 * store__later_hold: while hold is 1, the thread retires nothing (what a
 * test looks at stays as it is); 0 lets it go on. Any thread.
 */
int store__later_add(struct store *s, int64_t rev_id, uint64_t size);
int store__later_now(struct store *s, int64_t rev_id);
void store__later_settle(struct store *s, int committed);
void store__later_start(struct store *s);
void store__later_stop(struct store *s);
void store__later_hold(struct store *s, int hold);
/* Forgets the decoded revisions kept (s->revs): at a rollback, which may
 * give the ids of the revisions it undid to other revisions, and at close. */
void store__rev_forget(struct store *s);

/* The empty table of kept item rows (store_open; store_item.c). */
void store__items_init(struct store *s);
/* The empty table of kept sizes of views (store_open; store_run.c). */
void store__sizes_init(struct store *s);
/* Every kept item row is out of date (an items row was written; store_item.c). */
void store__items_changed(struct store *s);
/* Writes the fields store_item_update writes, updated_at = now, of the item
 * row with it's id (store_item.c). 0 or a negative errno. */
int store__item_write(struct store *s, const struct item *it, const char *now);
/* RFC 3339 UTC now (store.c). */
void store__now(char out[32]);
/* Before schema/0013_states.sql (store.c's migrate_check): 0 when every
 * item's state and every run's status is a name of store.h's enums, else
 * -EUCLEAN with the first row that is not, and its value, in err (errlen
 * bytes). Lock held. */
int store__states_check(struct store *s, char *err, size_t errlen);

#endif
