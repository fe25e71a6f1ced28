/*
 * store.h - the SQLite store: items, documents with every revision, runs
 * with their logs, the registry and events (schema/0001_init.sql and the
 * migrations after it).
 *
 * This header defines the interface between the engine and its database.
 * One connection in WAL mode (synchronous=NORMAL: a committed transaction
 * survives the death of the process; store_sync() makes it survive power
 * loss) guarded by one mutex: every function takes it, so any thread may
 * call any function. A writable store also has a thread with a second
 * connection that runs the WAL checkpoints, off the committing threads
 * (store.c). Each function that changes the store does so in one
 * transaction: it either happens whole or not at all. SQLite result codes
 * are translated to negative errno values in one place (SQLITE_FULL ->
 * -ENOSPC, SQLITE_CONSTRAINT -> -EEXIST or -EPERM for the registry
 * triggers, SQLITE_BUSY -> -EBUSY, others -EIO) and logged with SQLite's
 * message to stderr.
 *
 * Strings returned in structs are owned by the struct (free with the
 * matching *_clear function); strings passed in are copied.
 */
#ifndef PACKETFS_STORE_H
#define PACKETFS_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util.h"

struct store;

/* The database file name inside the store directory. */
#define STORE_DB_NAME "packetfs.db"

/* Opens (creating when create != 0) STORE/packetfs.db and applies pending
 * migrations; readonly opens with SQLITE_OPEN_READONLY and applies none.
 * Returns 0 with *out (close it with store_close), or -ENOENT (no
 * database, or not a packetfs store), -EPROTO (a store newer than this
 * packetfs), -ENOMEM, or -EIO or another negative errno from SQLite, with
 * what went wrong in err (errlen bytes; err may be NULL; not for -ENOMEM).
 * A writable store starts its checkpointer thread: open it after a fork,
 * not before. */
int store_open(const char *dir, int create, int readonly, struct store **out, char *err,
	       size_t errlen);
/* Stops the checkpointer and closes the store; NULL is ignored. No other
 * call on s may be running or follow. */
void store_close(struct store *s);
/* How many transactions this store's connection has committed (or begun
 * to commit: a commit that then fails counts too) since store_open. Two
 * equal values read around some reads of a writable store mean that no
 * change came in between: the daemon's connection is the only writer of a
 * mounted store. A read-only store also counts its own commits only, so
 * it tells nothing of another process's writes. Any thread, no lock. */
uint64_t store_commits(struct store *s);
/* Retires up to max (at most 16) of the revisions that wait to be retired
 * (store_later.c: a rename over a document or an unlink ends its current
 * revision, which keeps its content whole until then), oldest first, in
 * one transaction. The number still waiting, or a negative errno (nothing
 * retired). Any thread; a writable store. */
int store_later_run(struct store *s, int max);
/* Makes every transaction committed so far survive power loss: an fsync of
 * the WAL file (a full checkpoint where this connection has none open).
 * 0 or a negative errno (-EIO: the fsync failed, -EBUSY). Any thread; the
 * store's lock is not held while the disk syncs (after the WAL's first
 * sync), so other threads' commits go on meanwhile. */
int store_sync(struct store *s);
/*
 * Reclaiming space (store_gc.c): deletes the whole history of every path
 * that is no document now and either was deleted (its last revision is an
 * unlink tombstone) before `before` (RFC 3339 UTC, as the store writes
 * times: "2026-12-03T14:00:00Z"), or has a temporary file's name
 * (store_gc_temp_name), at any age; a path a revision of which is still
 * used (a live hard link's content, another path's delta base) stays.
 * Runs, logs, the registry and events are never touched. In one
 * transaction; then checkpoints the WAL, VACUUMs and truncates the WAL, so
 * the files shrink. What went into *out. 0 or a negative errno (-ENOSPC:
 * no room for VACUUM's copy; what was deleted stays deleted). Not for a
 * read-only store.
 */
struct store_gc {
	int64_t paths;     /* paths whose history went */
	int64_t revisions; /* revisions deleted */
	int64_t bytes;     /* the bytes they held, as stored (compressed) */
};
int store_gc(struct store *s, const char *before, struct store_gc *out);
/* Whether name (a last path component) is a temporary file's: .NAME.swp
 * (vim's swap files: .s[uvw][a-z], its own pattern, .swx its probe), 4913 (vim's probe), #NAME# (Emacs's
 * auto-save), NAME~ (backups), sedXXXXXX (sed -i: "sed" and 6 letters or
 * digits), NAME.tmp.PID.HEX (atomic saves of write-file-atomic and agent
 * tools). Any thread. */
int store_gc_temp_name(const char *name);

/* PRAGMA integrity_check; appends problems to out. 0 clean, 1 problems,
 * or a negative errno when the check could not run. */
int store_integrity(struct store *s, struct buf *out);
/* A read snapshot: every read of s between store_snapshot_begin and
 * store_snapshot_end sees one committed state of the store (a deferred
 * SQLite read transaction; WAL mode lets the daemon go on writing), so that
 * rows read apart (a run and its log) agree while a mounted store changes.
 * Only for a read-only store whose connection one thread uses (the CLI's
 * `packetfs check`); no write may come between. begin returns 0 or a
 * negative errno; end ends the snapshot (after a failed begin too). */
int store_snapshot_begin(struct store *s);
void store_snapshot_end(struct store *s);

/* meta key/value. get: 0 and *value (caller frees), -ENOENT, or a negative
 * errno. set: stores value under key, replacing any; 0 or a negative errno. */
int store_meta_get(struct store *s, const char *key, char **value);
int store_meta_set(struct store *s, const char *key, const char *value);

/*
 * Item states (SPEC §4 `state`) and run statuses (SPEC §6 `status` for a
 * recipe's run; succeeded and failed for a stage's), each as an enum whose
 * names are the strings of items.state and runs.status, of status and of
 * every view (store_state.c holds the one table of them). The store takes
 * and returns the enums; schema/0013_states.sql keeps any other string out
 * of the tables (a row of an older store opened read-only that holds one
 * reads as -EIO, logged). Which state may follow which is the pipeline's to
 * say (pipeline.h, pipe_state.c).
 */
enum item_state {
	ITEM_NEW,     /* made, no stage ran yet */
	ITEM_QUEUED,  /* waiting for a slot to run its next stage */
	ITEM_RUNNING, /* a stage (or a round) runs */
	ITEM_WAITING, /* a stage succeeded; the next waits for advance or approve */
	ITEM_BLOCKED, /* a gate refused, or review ran out of iterations */
	ITEM_FAILED,  /* a stage failed; last_error says why */
	ITEM_DONE,    /* the last stage succeeded, or the plan ended the item */
	ITEM_NSTATES
};
enum run_status {
	RUN_ANY = -1,                 /* no status: store_run_each's "whatever the status" */
	RUN_QUEUED, RUN_RUNNING,      /* not finished */
	RUN_SUCCEEDED, RUN_FAILED,    /* a stage's run ended */
	RUN_VALIDATED, RUN_FAILING,   /* a recipe's run ended (SPEC §6) ... */
	RUN_BLOCKED, RUN_TIMED_OUT,   /* ... or did not run (blocked) */
	RUN_CANCELLED, RUN_INTERRUPTED, /* stopped, by cancel or by the daemon's end */
	RUN_NSTATUSES
};
/* The name of a state or status ("new", "timed_out"), a static string;
 * "?" for a value out of range. Any thread. */
const char *item_state_name(enum item_state state);
const char *run_status_name(enum run_status status);
/* The state or status named name (exactly, as the name functions write it)
 * into *out: 0, or -EINVAL (NULL or another string; *out untouched). Any
 * thread. */
int item_state_parse(const char *name, enum item_state *out);
int run_status_parse(const char *name, enum run_status *out);

struct item {
	int64_t id;
	char *name, *title, *stage;
	enum item_state state;
	int stage_ok, iteration;
	char *branch, *base, *verdict, *assessment;
	/* The commits the verdict and the assessment were made at (40 hex
	 * digits), "" when none: when the branch head is another commit they
	 * are stale (SPEC §5). */
	char verdict_head[41], assessment_head[41];
	int hold, approved;
	char *last_error, *last_result;
	int archived;           /* 0, 1: archived, or ITEM_LEARNINGS */
	char *created_at, *updated_at;
	/* Times of the item's directory, ns since the Unix epoch: mtime and
	 * ctime move to now when an entry of its top level is created,
	 * removed or renamed in or out (store_doc_*), or as set by
	 * store_item_set_times. */
	int64_t dir_mtime_ns, dir_ctime_ns, dir_atime_ns;
	/* Rounds of the item's rounds stage in the current series (SPEC §5
	 * "After publish"), 0 when none ran. */
	int round;
	/* The word of plan.md's "Disposition:" line when the plan ended the
	 * item without a change (SPEC §5), else "". */
	char *disposition;
	/* The header lines of the plan (SPEC §5 "Routes and templates";
	 * schema 0013), "" when absent: its Route, the template in effect
	 * (named by the plan, or chosen by its route or default_template;
	 * "" for the top-level stages), its Engine and its Review request. */
	char *route, *template, *engine, *review_request;
	/* Owner, group and permission bits of the item's directory (schema
	 * 0006; STORE_ID_DEFAULT: see there). */
	uid_t dir_uid;
	gid_t dir_gid;
	mode_t dir_mode;
};
/* Frees the strings of it and zeroes it (a zeroed item may be cleared
 * again). */
void item_clear(struct item *it);
/* A copy of src into dst (item_clear frees it). 0 or -ENOMEM (dst empty). */
int item_copy(struct item *dst, const struct item *src);

/* items.archived of the row that holds MOUNT/learnings/ (schema 0005): it
 * is named "learnings", no listing of items shows it and no pipeline runs
 * it; its documents are the learnings, with their history. */
#define ITEM_LEARNINGS 2

/*
 * Owners (schema 0006). Every document, directory and item directory keeps
 * an owner uid and gid. STORE_ID_DEFAULT, as either, stands for the store
 * owner (a uid) or the store's group (a gid), whoever they are when the
 * store is mounted: entries made before version 6 have it, and the engine
 * gives it to what the mounting user makes, so that a store keeps
 * belonging to whoever mounts it. The store keeps the ids as given and
 * never resolves this one.
 */
#define STORE_ID_DEFAULT ((uint32_t)-1)

/* Inserts a new item (state ITEM_NEW, iteration 1) whose directory has owner
 * uid, group gid (each may be STORE_ID_DEFAULT) and permission bits
 * mode & 07777. 0 with *id (id may be NULL), -EEXIST (the name is taken),
 * or a negative errno. */
int store_item_create_owned(struct store *s, const char *name, const char *branch,
			    const char *base, uid_t uid, gid_t gid, mode_t mode, int64_t *id);
/* Sets the owner, group and permission bits (mode & 07777) of the item's
 * directory, and its ctime to now. 0, -ENOENT, or a negative errno. */
int store_item_set_owner(struct store *s, int64_t item_id, uid_t uid, gid_t gid, mode_t mode);
/* The item by name (archived too) or by id into out (item_clear it
 * after). 0, -ENOENT, or a negative errno. */
int store_item_get(struct store *s, const char *name, struct item *out);
/* store_item_get by name without copying: when the store keeps the row
 * (a writable store's item cache), out's strings are the kept copy's,
 * read-only and valid until store_item_put(*ref), and *ref is set; else
 * out owns its strings (item_clear it) and *ref is NULL. Any thread;
 * store_item_put takes no lock and may run on another thread. */
struct item_ref;
int store_item_get_shared(struct store *s, const char *name, struct item *out,
			  struct item_ref **ref);
void store_item_put(struct item_ref *ref);
int store_item_get_id(struct store *s, int64_t id, struct item *out);
/* Writes every mutable field of it (by id) and sets updated_at to now, in
 * the row and in it. 0 (also when no row has that id), -EINVAL (a state
 * out of enum item_state's range), or a negative errno. */
int store_item_update(struct store *s, struct item *it);
/* Calls cb for each item with archived == archived, by name; cb's item is
 * valid during the call only. cb runs without the store's lock (it may
 * call the store); a non-zero return stops the walk. The rows are read a
 * page at a time (memory bounded whatever the number of items), so an item
 * made, removed or renamed during the walk may be seen or not, a renamed
 * one under both names. 0 or a negative errno. */
int store_item_each(struct store *s, int archived, int (*cb)(void *arg, const struct item *it),
		    void *arg);
/* Sets the times of the item's directory (ns since the Unix epoch, or
 * STORE_TIME_OMIT to keep one) and its ctime to now. 0 or -ENOENT. */
int store_item_set_times(struct store *s, int64_t item_id, int64_t atime_ns, int64_t mtime_ns);

/* Who made a change: recorded with each revision. */
struct store_who {
	uid_t uid;
	pid_t pid;
	const char *comm;  /* command name, "" when unknown */
	const char *stage; /* stage whose process wrote, or "" */
};

struct doc_meta {
	int is_dir;
	mode_t type;     /* documents: S_IFREG, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR or
	                  * S_IFBLK (schema 0007); 0 for directories */
	uint64_t rdev;   /* a device's number (dev_t), else 0 */
	int64_t rev_id;  /* 0 for directories */
	int rev;         /* revision number of the current content */
	uint64_t size;
	mode_t mode;     /* permission bits only */
	uid_t uid;       /* owner and group (STORE_ID_DEFAULT: see there) */
	gid_t gid;
	int64_t mtime_ns, ctime_ns;
	int64_t atime_ns; /* the last content write's mtime, unless set since */
	int64_t link;    /* the link number the names of this file share (schema
	                  * 0010): 0 when link(2) never gave it a second name */
	uint32_t nlink;  /* its names (hard links): 1 when link is 0; 0 for directories */
	uint32_t subdirs; /* a directory's subdirectories, as store_doc_subdirs counts
	                   * them, in a row store_doc_stat read; else 0 */
};

/*
 * Directory times. A directory's mtime and ctime (the item's directory for
 * a top-level path, else the directory entry holding the path) move to now,
 * in the same transaction, whenever store_doc_write creates a document or
 * store_doc_mkdir_owned, _unlink, _rmdir or _rename adds or removes an entry in
 * it. Access times are never moved by reads (as on a noatime mount).
 */
/* A time argument meaning "keep the stored one". */
#define STORE_TIME_OMIT INT64_MIN

/* Metadata of the live entry at path. 0, -ENOENT, or a negative errno. */
int store_doc_stat(struct store *s, int64_t item_id, const char *path, struct doc_meta *out);
/* Current content of a document (*data NUL-terminated, caller frees; its
 * length in *len, len may be NULL). 0, -ENOENT, -EISDIR, or a negative
 * errno. */
int store_doc_read(struct store *s, int64_t item_id, const char *path, char **data, size_t *len);
/* Stores data as a new revision of path (creating the document; the
 * caller checks that its parent directory exists) with op "write" or
 * "create". mode: permission bits, or (mode_t)-1 to keep the current ones
 * (0644 for a new document). mtime_ns < 0 means now; atime_ns becomes the
 * same. *rev (may be NULL) gets the new revision number. -EISDIR when
 * path is a directory. A document this creates is owned by uid and gid
 * (store_doc_write: STORE_ID_DEFAULT); an existing one keeps its owner. */
int store_doc_write(struct store *s, int64_t item_id, const char *path, const void *data,
		    size_t len, mode_t mode, int64_t mtime_ns, const char *op,
		    const struct store_who *who, int *rev);
int store_doc_write_owned(struct store *s, int64_t item_id, const char *path, const void *data,
			  size_t len, mode_t mode, int64_t mtime_ns, const char *op,
			  const struct store_who *who, uid_t uid, gid_t gid, int *rev);
/* Appends len > 0 bytes of data to the current content of the document
 * path, as a new revision of it (op "write", by who) whose bytes are the
 * old ones followed by data, without reading the old ones (store_rev.c:
 * runs of appends); mode as store_doc_write ((mode_t)-1 keeps it), mtime_ns
 * < 0 now. *rev_id and *size (either may be NULL) get the new revision's id
 * and the document's new size. 0, -ESTALE when path is no document with
 * content to append to (none, a directory, a symlink or special file: write
 * the whole content instead), -EINVAL for len 0, or a negative errno
 * (-ENOSPC: nothing changed). Any thread; takes the store's lock. */
int store_doc_append(struct store *s, int64_t item_id, const char *path, const void *data,
		     size_t len, mode_t mode, int64_t mtime_ns, const struct store_who *who,
		     int64_t *rev_id, uint64_t *size);
/* Appends len > 0 bytes of data to revision rev_id of the document path
 * in place, while that is its current revision: the revision made by the
 * same handle's earlier write (a write-through append, packet_through.c),
 * so that one handle's writes leave one revision however many they are;
 * mtime_ns as store_doc_append. *size (may be NULL) gets the document's
 * new size. 0, -ESTALE when rev_id is not path's current revision of
 * content (append a new revision instead), -EINVAL for len 0, or a
 * negative errno (-ENOSPC: nothing changed). Any thread; takes the store's
 * lock. */
int store_doc_grow(struct store *s, int64_t item_id, const char *path, int64_t rev_id,
		   const void *data, size_t len, int64_t mtime_ns, uint64_t *size);
/* Replaces, in place, the content of revision rev_id of path while it is
 * still the document's current revision: for a commit that only made a
 * close durable before the same handle's writes. 0, or -ESTALE when it is
 * not current (write a new revision instead). mtime_ns < 0: now; atime_ns
 * becomes the same. */
int store_doc_amend(struct store *s, int64_t item_id, const char *path, int64_t rev_id,
		    const void *data, size_t len, mode_t mode, int64_t mtime_ns);
/* Creates the entry path of a kind other than a plain document (schema
 * 0007): type S_IFLNK with its target as data (len bytes, 1 to PATH_MAX -
 * 1), or S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK with no data and rdev (a
 * device's number; 0 for the others). Its first revision has op "create";
 * mode & 07777 are its permission bits; it is owned by uid and gid. The
 * caller checks that the parent directory exists. 0, -EEXIST, -EINVAL (a
 * bad type) or a negative errno. Any thread. */
int store_doc_make_node(struct store *s, int64_t item_id, const char *path, mode_t type,
			uint64_t rdev, const void *data, size_t len, mode_t mode, uid_t uid,
			gid_t gid, const struct store_who *who);
/* Creates a directory entry with permission bits mode & 07777, owned by
 * uid and gid (each may be STORE_ID_DEFAULT); the caller checks that its
 * parent directory exists. 0, -EEXIST, or a negative errno. */
int store_doc_mkdir_owned(struct store *s, int64_t item_id, const char *path, mode_t mode,
			  uid_t uid, gid_t gid);
/* Gives the file at from the second name to (link(2)): from is a document
 * of any kind, to names nothing yet and its parent directory exists (the
 * caller checks it). Both names then stand for one file (schema/0010_
 * links.sql), whose ctime moves to now, as do the mtime and ctime of to's
 * directory; to's history starts with a revision of op "link" holding
 * the content. 0, -ENOENT (no from), -EPERM (from is a directory),
 * -EEXIST (to exists) or a negative errno. */
int store_doc_link(struct store *s, int64_t item_id, const char *from, const char *to,
		   const struct store_who *who);
/* Removes a document's name, recording a tombstone revision (history is
 * kept); the file's other names, if any, stay, with one link less and
 * their ctime moved to now. 0, -ENOENT, -EISDIR, or a negative errno. */
int store_doc_unlink(struct store *s, int64_t item_id, const char *path, const struct store_who *who);
/* Another name of the file at path (hard links), the first in byte order,
 * as a new string in *other (caller frees). 0, -ENOENT (path names no
 * document, or its file has no other name), or a negative errno. */
int store_doc_other_name(struct store *s, int64_t item_id, const char *path, char **other);
/* Removes an empty directory. 0, -ENOENT, -ENOTDIR, -ENOTEMPTY, or a
 * negative errno. */
int store_doc_rmdir(struct store *s, int64_t item_id, const char *path);
/*
 * Renames a document or directory (with everything below it) within one
 * item, replacing an existing document at `to` (or an empty directory when
 * from is a directory). Each moved document gets a new revision at its
 * new path (op "rename") and a tombstone at the old one; with
 * STORE_RENAME_CARRY in flags, a document with one name (no hard links)
 * instead takes its life (its revisions since its latest tombstone) to
 * `to`, after the revisions `to` has, and leaves no revision at from (a
 * temp-file-then-rename save; store_save.c); with STORE_RENAME_SAVE, so
 * too when from's life began with a create by who->pid or another thread
 * of its process. -ENOENT, -EEXIST
 * (STORE_RENAME_NOREPLACE and to exists), -EISDIR / -ENOTDIR (kind mismatch),
 * -ENOTEMPTY, -EINVAL (to inside from). from and to naming one file
 * (hard links) is 0 and changes nothing, as rename(2).
 *
 * replaced (NULL: not wanted) is set, once the rename is committed, to the
 * revision number of the content of the regular document with one name
 * that `to` named and the rename replaced (its revisions stay, so that
 * revision can still be read: store_rev_read), else to 0.
 *
 * Every change of a document through one of its names (write, amend,
 * rename, set_mode, set_owner, set_times, the xattrs) changes the file:
 * all its names show it (store_link.c).
 */
#define STORE_RENAME_NOREPLACE 1u
#define STORE_RENAME_CARRY 2u
#define STORE_RENAME_SAVE 4u
int store_doc_rename(struct store *s, int64_t item_id, const char *from, const char *to,
		     unsigned flags, const struct store_who *who, int *replaced);
/* Sets the permission bits (mode & 07777) of the entry at path and its
 * ctime to now. 0, -ENOENT, or a negative errno. */
int store_doc_set_mode(struct store *s, int64_t item_id, const char *path, mode_t mode);
/* Sets the owner, group and permission bits (mode & 07777) of the entry
 * at path, and its ctime to now. 0, -ENOENT, or a negative errno. */
int store_doc_set_owner(struct store *s, int64_t item_id, const char *path, uid_t uid, gid_t gid,
			mode_t mode);
/* Sets the access and modification times of the entry at path (ns since
 * the Unix epoch, or STORE_TIME_OMIT to keep one) and its ctime to now.
 * 0 or -ENOENT. */
int store_doc_set_times(struct store *s, int64_t item_id, const char *path, int64_t atime_ns,
			int64_t mtime_ns);
/* Moves the mtime and ctime of the directory that holds path (the item's
 * directory for a top-level path) to now: for an entry that appears before
 * the store records it (a document created open). 0, or a negative errno;
 * a holding directory the store does not keep (validation/) is no error. */
int store_doc_touch_parent(struct store *s, int64_t item_id, const char *path);
/* The number of directories directly in the directory dir ("" for the
 * item directory) into *n: what its link count adds to 2. Any thread. 0 or a
 * negative errno. */
int store_doc_subdirs(struct store *s, int64_t item_id, const char *dir, uint32_t *n);
/* Calls cb with the name (last component) and metadata of each live entry
 * directly inside directory dir ("" for the item's top level), by name;
 * both are valid during the call only. cb runs without the store's lock;
 * a non-zero return stops the walk. 0 or a negative errno. */
int store_doc_list(struct store *s, int64_t item_id, const char *dir,
		   int (*cb)(void *arg, const char *name, const struct doc_meta *m), void *arg);

/*
 * Extended attributes (store_xattr.c) of the entry at path in item_id: a
 * document or document directory (path as store_doc_*), or the item
 * directory (path ""). name is the whole attribute name, NUL-terminated;
 * values are bytes. An attribute follows its entry through
 * store_doc_rename and goes with it at store_doc_unlink and _rmdir.
 * Setting and removing move the entry's ctime to now. Any thread.
 *
 * store_xattr_get: the value into *value (NUL-terminated, caller frees)
 * and its length into *len. 0, -ENODATA (none of that name), or a negative
 * errno. store_xattr_set: how is 0 (create or replace), STORE_XATTR_CREATE
 * (-EEXIST when it exists) or STORE_XATTR_REPLACE (-ENODATA when it does
 * not). store_xattr_list: appends every name, each with its NUL, in byte
 * order, to names. store_xattr_remove: 0, -ENODATA, or a negative errno.
 */
#define STORE_XATTR_CREATE 1
#define STORE_XATTR_REPLACE 2
int store_xattr_get(struct store *s, int64_t item_id, const char *path, const char *name,
		    char **value, size_t *len);
int store_xattr_set(struct store *s, int64_t item_id, const char *path, const char *name,
		    const void *value, size_t len, int how);
int store_xattr_list(struct store *s, int64_t item_id, const char *path, struct buf *names);
int store_xattr_remove(struct store *s, int64_t item_id, const char *path, const char *name);

struct rev_info {
	const char *path;
	int rev;
	const char *op;
	int64_t size;      /* -1 for a tombstone */
	mode_t mode;
	mode_t type;       /* as struct doc_meta's (a tombstone: what it removed) */
	uint64_t rdev;
	uid_t uid;
	pid_t pid;
	const char *comm, *stage, *created_at;
};
/* Calls cb for every revision of the item whose path equals path, or (path
 * NULL) of every path, ordered by path then rev; r is valid during the call
 * only. cb runs without the store's lock; a non-zero return stops the
 * walk. 0 or a negative errno. */
int store_rev_each(struct store *s, int64_t item_id, const char *path,
		   int (*cb)(void *arg, const struct rev_info *r), void *arg);
/* store_rev_each(path NULL) restricted to the paths below dir (a path
 * relative to the item; "" for all), with one index range. */
int store_rev_each_below(struct store *s, int64_t item_id, const char *dir,
			 int (*cb)(void *arg, const struct rev_info *r), void *arg);
/* The size in bytes of one revision's content, without reading it. 0 or
 * -ENOENT (no such revision, or a tombstone). */
int store_rev_size(struct store *s, int64_t item_id, const char *path, int rev, size_t *len);
/* What one revision was, without reading its content, into m: its size
 * in bytes, type and device number, the permission bits its document had
 * then (mode) and who wrote it (uid; gid is STORE_ID_DEFAULT), as struct
 * doc_meta's; the other members are zero. 0 or -ENOENT (no such
 * revision, or a tombstone). */
int store_rev_stat(struct store *s, int64_t item_id, const char *path, int rev,
		   struct doc_meta *m);
/* Whether some revision of the item has a path below dir (a path relative
 * to the item, not ""): 1, 0, or a negative errno. One index probe. */
int store_rev_dir_exists(struct store *s, int64_t item_id, const char *dir);
/* Content of one revision (*data NUL-terminated, caller frees; its length
 * in *len, len may be NULL). 0, -ENOENT (no such revision, or a
 * tombstone), or a negative errno. */
int store_rev_read(struct store *s, int64_t item_id, const char *path, int rev, char **data,
		   size_t *len);
/* store_rev_read of the revision whose id (struct doc_meta's rev_id) is
 * rev_id, wherever its path is now. Any thread; takes the store's lock. */
int store_rev_read_id(struct store *s, int64_t rev_id, char **data, size_t *len);

struct run {
	int64_t id, item_id;
	int run_no;
	char kind[8];      /* "stage" | "recipe" */
	char *name;
	int iteration;
	enum run_status status; /* out of its range: every write of r is -EINVAL */
	char *command, *log_path, *note;
	int pgid;
	int has_exit_code, exit_code, signal;
	char head[41];
	char *gpus;        /* JSON array text, "[]" */
	char executor[16];
	char started_at[32], finished_at[32];
	double duration_s;
	int64_t log_size;
	char log_sha256[65];
	char job_id[32];   /* batch system job id ("" for a local run) */
	char *job_output;  /* the job's output file, "" when none */
	int64_t job_offset; /* bytes of job_output the log holds */
	int log_no;        /* store_run_begin's number for the log's name (not stored) */
};
/* Frees the strings of r and zeroes it (a zeroed run may be cleared again). */
void run_clear(struct run *r);
/*
 * Starts a run in one transaction, which happens whole or not at all: the
 * item's next run number into r->run_no (counting over stages and recipes),
 * the next log number of its kind into r->log_no (one more than the largest
 * in the names of the item's logs of r->kind: "stages/N-NAME.log" for a
 * stage, "...-N.log" for a recipe; 1 for the first), then name(arg, r,
 * event), which must set r->log_path (malloc'd; it may use r->run_no and
 * r->log_no) and may put event
 * lines into event, each ending in a newline; then r is inserted (its id
 * set), it (when not NULL; the run's item) written as store_item_update
 * writes it, and each event line added. name runs under the
 * store's lock: it must not call the store or take any other lock. On an
 * error nothing is stored (-ENOSPC for a full disk) and r->run_no,
 * r->log_no and r->log_path may be set all the same. 0 or a negative errno. Any thread.
 */
int store_run_begin(struct store *s, struct run *r, struct item *it,
		    int (*name)(void *arg, struct run *r, struct buf *event), void *arg);
/* Writes the mutable fields (status, pgid, exit, signal, note, head, gpus,
 * finished_at, duration_s, log_sha256, command, executor, job_id,
 * job_output, job_offset) of the run with r's id. 0 (also when there is
 * none) or a negative errno. */
int store_run_update(struct store *s, const struct run *r);
/* Bytes for the end of a run's log (store_run_end). */
struct store_log_piece {
	int64_t run_id;
	const void *data;
	size_t len;
};
/*
 * A run's start and end, each in one transaction that happens whole or
 * not at all (nothing stored on an error: -ENOSPC for a full disk, -EINVAL
 * for a status out of range). 0 or a negative errno. Any thread.
 *
 * store_run_start writes r as store_run_update does (e.g. the process group
 * of a run just spawned), appends len bytes of log to its log (len 0:
 * none) and adds event (one JSON line, no newline; NULL: none) for
 * r->item_id.
 *
 * store_run_end appends each of the n pieces to the log of its run, in
 * order (r's footer, and e.g. a line for the log of the stage that ran r),
 * then seals r: r->log_size and r->log_sha256 become those of r's whole
 * stored log, and r is written as store_run_update writes it; then
 * line(arg, r), when line is not NULL, makes the run's registry line
 * (malloc'd, no newline, freed here; NULL: -ENOMEM) from the sealed r,
 * which is appended as store_registry_append(s, r->item_id, LINE, "engine",
 * r->id) appends it; it (when not NULL; the run's item) is written as
 * store_item_update writes it, and event added for r->item_id. line runs
 * under the store's lock: it must not call the store or take any other
 * lock. On an error r->log_size and r->log_sha256 may be set all the same.
 */
int store_run_start(struct store *s, const struct run *r, const void *log, size_t len,
		    const char *event);
int store_run_end(struct store *s, struct run *r, const struct store_log_piece *pieces, size_t n,
		  char *(*line)(void *arg, const struct run *r), void *arg, struct item *it,
		  const char *event);
/* The run with that id, or whose log is at log_path in the item, into out
 * (run_clear it after). 0, -ENOENT, or a negative errno. */
int store_run_get(struct store *s, int64_t id, struct run *out);
int store_run_by_log(struct store *s, int64_t item_id, const char *log_path, struct run *out);
/* Calls cb for the item's runs of the given kind (NULL: all) by run_no;
 * item_id 0: every item; of that status (RUN_ANY: any). r is valid during
 * the call only; cb runs without the store's lock and a non-zero return
 * stops the walk. 0 or a negative errno. */
int store_run_each(struct store *s, int64_t item_id, const char *kind, enum run_status status,
		   int (*cb)(void *arg, const struct run *r), void *arg);

/* Appends len bytes to a run's log. 0 (also for len 0) or a negative errno. */
int store_log_append(struct store *s, int64_t run_id, const void *data, size_t len);
/* The same for output copied from a batch job's output file: job_offset
 * (bytes of that file the log holds with these) is written as the run's
 * job_offset in the same transaction, so that a restarted daemon neither
 * loses nor repeats output. 0 or a negative errno. Any thread. */
int store_log_append_job(struct store *s, int64_t run_id, const void *data, size_t len,
			 int64_t job_offset);
/* Reads up to size bytes of a run's log at off into buf; returns the
 * number read (fewer at the end of the log) or a negative errno. */
ssize_t store_log_read(struct store *s, int64_t run_id, uint64_t off, void *buf, size_t size);
/* sha256 (64 hex digits and a NUL) and size (size may be NULL) of the
 * whole stored log. 0, -ENOMEM, or a negative errno. */
int store_log_sha256(struct store *s, int64_t run_id, char hex[65], int64_t *size);

/* Appends one registry line (no newline). source "engine" | "external"
 * (another is refused: -EEXIST); run_id 0: none. 0 or a negative errno. */
int store_registry_append(struct store *s, int64_t item_id, const char *line, const char *source,
			  int64_t run_id);
/* store_registry_append of an external line (source "external", no run)
 * and store_event_add of event (one line, no newline) for the same item,
 * in one transaction: both are stored or neither. 0 or a negative errno. */
int store_registry_append_event(struct store *s, int64_t item_id, const char *line,
				const char *event);
/*
 * Reading the registry. The raw forms give each line as stored, the bytes
 * of validation/registry.jsonl. The others give each line as evidence is
 * read from it: the same, except that a line carried in by an import that
 * does not count here (source "imported": store_carry_line) reads with
 * "source":"imported" and its reason as "note", so that what counts
 * (registry.h: "source":"engine" lines only) never counts it.
 *
 * *_lines: all lines of the item, oldest first (*lines NULL-terminated;
 * strv_free; their count in *n, n may be NULL). 0 or a negative errno.
 */
int store_registry_lines(struct store *s, int64_t item_id, char ***lines, size_t *n);
int store_registry_raw_lines(struct store *s, int64_t item_id, char ***lines, size_t *n);
/* Calls cb(arg, id, line, len) for every line of the item whose id (the
 * registry row's, increasing with every append) is above after, oldest
 * first, under the store's lock (cb must not call the store); a non-zero
 * return of cb stops the walk and is returned. 0 or a negative errno. */
int store_registry_since(struct store *s, int64_t item_id, int64_t after,
			 int (*cb)(void *arg, int64_t id, const char *line, size_t len), void *arg);
int store_registry_raw_since(struct store *s, int64_t item_id, int64_t after,
			     int (*cb)(void *arg, int64_t id, const char *line, size_t len),
			     void *arg);
/*
 * Carrying an item in from another store (`packetfs import`; schema
 * 0011_carry.sql). Any thread.
 *
 * store_carry_line appends a registry line carried in, as it was written
 * (no newline): source "engine" (a line that counts; run_id its restored
 * run), "external", or "imported" (a line that never counts here; why, not
 * empty, says why, and evidence reads it as its note). 0, -EEXIST (another
 * source) or a negative errno.
 *
 * store_carry_run inserts r, a finished run of another store, as it was
 * there: run_no, kind, name, iteration, status, command, log_path, note,
 * head, gpus, executor, started_at, finished_at, duration_s, exit code and
 * signal; its log is the len bytes at log, and its log_size and log_sha256
 * are theirs. The item's run counter rises to r->run_no when below, so
 * that the item's next run comes after it. One transaction; r->id is set.
 * 0, -EEXIST (the item has a run of that number), or a negative errno.
 */
int store_carry_line(struct store *s, int64_t item_id, const char *line, const char *source,
		     int64_t run_id, const char *why);
int store_carry_run(struct store *s, struct run *r, const void *log, size_t len);
/* Calls cb(arg, item_id, line, source, run_id) for every registry line of
 * every item, oldest first, under the store's lock (cb must not call the
 * store); a non-zero return stops the walk. 0 or a negative errno. */
int store_registry_each(struct store *s,
			int (*cb)(void *arg, int64_t item_id, const char *line, const char *source,
				  int64_t run_id),
			void *arg);

/* Appends an event (one JSON object, no newline); item_id 0: store-wide.
 * 0 or a negative errno. */
int store_event_add(struct store *s, int64_t item_id, const char *line);
/* store_registry_since for the events of an item (item_id 0: all). */
int store_events_since(struct store *s, int64_t item_id, int64_t after,
		       int (*cb)(void *arg, int64_t id, const char *line, size_t len), void *arg);
/* Appends the events of an item (item_id 0: all) to out, one per line. 0
 * or a negative errno. */
int store_events_render(struct store *s, int64_t item_id, struct buf *out);
/* The size in bytes of validation/registry.jsonl (every line and its
 * newline) of item item_id, or of the events of item_id (0: all items), as
 * rendered, without rendering them. 0 or a negative errno. */
int store_registry_size(struct store *s, int64_t item_id, uint64_t *size);
int store_events_size(struct store *s, int64_t item_id, uint64_t *size);

#endif
