/*
 * packet_int.h - what the packet namespace's files (packet.c: paths,
 * attributes, views, directories; packet_doc.c: open documents;
 * packet_ns.c: the changes to the namespace; packet_owner.c: owners and chown; packet_node.c:
 * symlinks and special files; packet_history.c: .history/; packet_file.c:
 * open files, the trigger file; packet_append.c: registry appends, live
 * reads of the registry and events; ctl.c: the trigger file's command lines; record.c: the
 * recorder's transaction file) share. Not for the rest of the engine:
 * engine.h is the contract.
 *
 * Locks (namespace.h gives the order): files_lock protects e->docs and
 * each open_doc's rel, refs and unlinked; an open_doc's own lock its
 * content, and is taken after files_lock, never before it.
 */
#ifndef PACKETFS_PACKET_INT_H
#define PACKETFS_PACKET_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "namespace.h"

/* The kinds of node. The fixed entries of a directory stand in the order
 * it lists them (packet__kinds, packet_dir.c). */
enum kind {
	N_ROOT,
	N_EVENTS_ALL,     /* the root's entries */
	N_INDEX,
	N_PFS_DIR,
	N_ARCHIVE_DIR,
	N_PIPELINE,       /* .packetfs/'s entries */
	N_PIPELINE_ERROR,
	N_RECIPES_DIR,
	N_VERSION,
	N_COMPUTE_ENV,
	N_RECIPE,
	N_PFS_TMP,
	N_ITEM,
	N_CTL,            /* an item's entries */
	N_STATUS,
	N_STATUS_JSON,
	N_ITEM_EVENTS,
	N_DIFF,
	N_REPORT,
	N_ITEM_COMPUTE_ENV,
	N_STAGES_DIR,
	N_VALIDATION_DIR,
	N_WORKTREE,
	N_HISTORY_DIR,
	N_REGISTRY,       /* validation/'s entries */
	N_REGISTRY_ERROR,
	N_RECORD,
	N_EVIDENCE,
	N_JUNIT,
	N_SCOPE,
	N_MEASUREMENTS,
	N_LOGS_DIR,
	N_DOC,
	N_DOCDIR,
	N_STAGE_LOG,
	N_RECIPE_LOG,
	N_HISTORY_FILE,
	N_KINDS
};

/* Flags of a kind (struct kind_info). */
#define KIND_STABLE 0x01      /* its attributes can be stable (packet__stable_kind) */
#define KIND_LIST_STABLE 0x02 /* a directory whose listing is stable with its attributes */
#define KIND_NOW 0x04         /* a view dated by the stat: its times are now */
#define KIND_VIEW 0x08        /* generated content (struct pfs_stat's view) */
#define KIND_WRITE 0x10       /* opens for writing (what it takes is its own) */

/* What each kind of node is: packet__kinds[kind] (packet.c). */
struct kind_info {
	const char *name; /* a fixed entry's name in its directory, else NULL */
	enum kind parent; /* that directory's kind (with name) */
	uint32_t mode;    /* type and permission bits; under .archive/ 0444 or
			   * 0555. An item, a document and a directory of them
			   * take theirs from the store instead. */
	unsigned flags;   /* KIND_* */
};
extern const struct kind_info packet__kinds[N_KINDS];

struct node {
	enum kind kind;
	int archived;        /* under .archive/: read-only */
	int learnings;       /* in MOUNT/learnings/ (its N_ITEM: documents only) */
	int has_item;
	struct item item;    /* when has_item; its strings are the store's kept copy's,
			      * read-only, while item_ref is set (store_item_get_shared) */
	struct item_ref *item_ref;
	char rel[PATH_MAX];  /* item-relative path (documents, history) */
	int rev;             /* N_HISTORY_FILE */
	char name[256];      /* N_RECIPE, N_PFS_TMP: the file name */
	struct doc_meta doc; /* N_DOC, N_DOCDIR; sizes of logs and history files */
	int open;            /* N_DOC: held open for writing or with changes not stored
			      * (doc is the open document's state; packet__od_quiet) */
	int from_store;      /* N_DOC, N_DOCDIR: doc is the store's row, read when it
			      * resolved (no open document held it) */
	int sealed;          /* logs: the run ended and its log is sealed (packet__run_sealed) */
};

struct open_doc {
	int64_t item_id;
	char *rel;            /* protected by files_lock */
	int refs;             /* protected by files_lock */
	int writers;          /* protected by files_lock: handles open for writing, until
			       * their release has committed (packet__od_quiet) */
	int readers;          /* protected by files_lock: handles that may read it (not
			       * O_WRONLY) */
	int unlinked;         /* protected by files_lock */
	pthread_mutex_t lock;
	struct buf content;   /* protected by lock: the document's bytes, or while
			       * partial only those after its first stored_len */
	int partial;          /* protected by lock: the first stored_len bytes, those
			       * of revision stored_rev, are not held: handles that
			       * only wrote at the end opened it, or no handle that
			       * reads held it at its last commit (packet__od_load
			       * reads them) */
	uint64_t stored_len;  /* protected by lock: while partial */
	int64_t stored_rev;   /* protected by lock: while partial */
	int dirty;            /* protected by lock */
	int stored;           /* protected by lock: exists in the store */
	int commit_failed;    /* protected by lock: its last commit failed (a full disk):
	                       * never stored, it no longer resolves by name */
	mode_t mode;          /* protected by lock */
	uid_t uid;            /* protected by lock: owner and group, as the store keeps them */
	gid_t gid;            /* protected by lock */
	int64_t mtime_ns;     /* protected by lock */
	int64_t atime_ns;     /* protected by lock: the stored or set atime; while
	                       * dirty the content's mtime_ns stands for it */
	int64_t created_ns;   /* constant: when a create made it, not stored yet; 0
	                       * when it was opened from the store. Until it is
	                       * stored its directory's times are at least this
	                       * (packet.c), as if the entry were stored. */
	struct od_before *before; /* protected by lock: what an O_TRUNC open or a
				   * shrinking truncate took away, read until a change
				   * (by the other handles, until the O_TRUNC handle's
				   * next request: packet__od_trunc; by every handle:
				   * packet__od_cut); or NULL */
	struct open_doc *next;
};

/* ---- packet.c ---- */

/*
 * The two forms of a revision in .history (packet_history.c). A
 * document whose name (the last component of its path) is at most
 * HISTORY_AT_MAX bytes shows revision REV as the file NAME@REV; a longer
 * name shows the directory NAME/ holding one file per revision, named REV.
 * HISTORY_AT_MAX is NAME_MAX less the '@' and the 10 digits of the largest
 * revision (INT_MAX).
 */
#define HISTORY_AT_MAX (NAME_MAX - 1 - 10)

/* The revision a file of the directory form is named by: s holds a number
 * from 1 to INT_MAX written as the listing writes it (digits, no leading
 * zero). The number, or 0 when s is no such name. */
int packet__history_rev(const char *s);

/* The absolute path of revision rev of the document at path (absolute;
 * rel, its path relative to its item directory, ends it) in that item's
 * .history, in the form a listing shows: a new string in *out (caller
 * frees). 0, -EINVAL (path does not end with "/" rel) or -ENOMEM. Any
 * thread. */
int packet__history_path(const char *path, const char *rel, int rev, char **out);

/* Resolves .history/<rest> of the item n already names into n: a directory
 * of .history or a revision file readable as its document is now.
 * 0, -ENOENT, -ENAMETOOLONG or another negative errno from the store.
 * Any thread. */
int packet__resolve_history(struct engine *e, struct node *n, const char *rest);

/* Resolves path into n (packet__node_clear it after, when 0). 0 or a
 * negative errno (-ENOENT, -ENOTDIR, -ENAMETOOLONG, -EINVAL, ...). */
int packet__resolve(struct engine *e, const char *path, struct node *n);
/* packet__resolve without asking the store about a document's path: any
 * path that names a document or document directory, existing or not,
 * resolves to N_DOCDIR with its item and rel (doc and from_store unset).
 * For a caller that needs the kind the path allows, and whose store call
 * checks the document itself (engine_rename, engine_lookup). */
int packet__resolve_shallow(struct engine *e, const char *path, struct node *n);
/* Frees what a resolved node owns (its item row); n may be cleared twice. */
void packet__node_clear(struct node *n);
/* Whether nodes of kind k are directories. */
int packet__is_dir_kind(enum kind k);
/* The fixed entry named by the len bytes at name in a directory of kind
 * parent, or -1 when it has none of that name. */
int packet__fixed_entry(enum kind parent, const char *name, size_t len);
/* Appends the content of a non-log view to out; 0 or a negative errno
 * (-EINVAL for kinds that are not rendered views). */
int packet__render(struct engine *e, struct node *n, struct buf *out);
/* packet__render, and *clocked set to 1 when the content depends on the
 * time it was rendered at (view_report_clocked), else 0. */
int packet__render_clocked(struct engine *e, struct node *n, struct buf *out, int *clocked);
/* packet_size.c: the size of view n (a kind packet__render renders) into
 * *size: its rendering's length, remembered for status, status.json,
 * evidence.md, junit.xml, report.html and change.diff under the stamp it
 * was rendered at (view_size.c). 0 or packet__render's error (none for
 * change.diff and recipes, which are then of size 0). Any thread. */
int packet__view_size(struct engine *e, struct node *n, uint64_t *size);
/* Whether r ended and its log was sealed (its sha256 recorded after the
 * last byte was appended): the log never changes again. */
int packet__run_sealed(const struct run *r);
/* Whether the attributes of nodes of kind k can be stable (engine.h,
 * struct pfs_stat): they do not follow the item's updated time and are not
 * a view's. */
int packet__stable_kind(enum kind k);
/* Attributes of a resolved node into st; 0 or a negative errno. A view
 * rendered on demand is rendered for its size when render is 1, else its
 * size is 0. */
int packet__node_stat(struct engine *e, struct node *n, struct pfs_stat *st, int render);

/* ---- carry.c ---- */

/* Whether git is to trust the store's repository whoever owns it (git's
 * safe.directory): when the caller (the effective uid) owns the store
 * directory, whose owner chose the repository. Any thread. */
int packet__repo_trusted(struct engine *e);
/* The sha256 of the file at path into hex, its length into *size (unless
 * NULL), read in chunks. 0 or a negative errno (open, read). Any thread. */
int packet__file_sha256(const char *path, char hex[65], uint64_t *size);

/* ---- packet_owner.c ---- */

/* Makes the item name (mkdir of "/name"): its branch packetfs/<name> at
 * at (a commit id), or at the configured base when at is NULL, its
 * worktree checked out there, and its row, owned by who with permission
 * bits mode. 0, -EEXIST (a name taken or the root's own), -EINVAL (a bad
 * name), -EROFS, -ENOENT (no such commit or base), -EIO, or a negative
 * errno of the store. Any thread. */
int packet__item_create(struct engine *e, const char *name, mode_t mode,
			const struct pfs_caller *who, const char *at);
/*
 * Owners. The store keeps owner and group ids with STORE_ID_DEFAULT for
 * the store owner and the store's group (store.h); the namespace reports
 * e->uid and e->gid for it (packet__uid, packet__gid), and stores it for
 * them (packet__store_uid, packet__store_gid), so that what the mounting
 * user makes keeps belonging to whoever mounts the store.
 */
uid_t packet__uid(const struct engine *e, uid_t stored);
gid_t packet__gid(const struct engine *e, gid_t stored);
uid_t packet__store_uid(const struct engine *e, uid_t uid);
gid_t packet__store_gid(const struct engine *e, gid_t gid);
/* The owner and group (as the store keeps them) of a new entry that who
 * (NULL: the engine, the store owner) makes in directory node p, and its
 * permission bits *mode, adjusted: the owner is who, the group who's group,
 * or p's when p has the set-group-ID bit, which a new directory then takes
 * too (as Linux and the BSDs do). */
void packet__new_owner(const struct engine *e, const struct node *p, const struct pfs_caller *who,
		       int dir, mode_t *mode, uid_t *uid, gid_t *gid);

/* ---- packet_node.c: symlinks, FIFOs, sockets, devices and hard links ---- */

/* struct pfs_stat's file_id of a document of item item_id with link number
 * link (struct doc_meta): 0 when link is 0. */
uint64_t packet__file_id(int64_t item_id, int64_t link);

/* The mode of a revision file of .history for a revision of a document of
 * type type (struct doc_meta): a symlink's reads back as a symlink (0777),
 * a FIFO's, socket's or device's as such, with the permission bits 0444
 * of every revision file. */
mode_t packet__history_mode(mode_t type);

/* ---- packet_doc.c ---- */

/* Who made a change, as the store records it with a revision. */
struct who_buf {
	struct store_who w;
	char comm[32];  /* the command name, from /proc */
	char stage[64]; /* the stage whose process it is, or "" */
};
/* Commits the pending content of the document open at (item, rel), if
 * one is: for a change of its name, which the store makes to what it
 * holds. 0, or the commit's negative errno. */
int packet__od_commit_path(struct engine *e, int64_t item, const char *rel,
			   const struct pfs_caller *who);

/* ---- packet_who.c ---- */

/* Fills wb for caller c (NULL: the engine itself, the daemon's uid): its
 * command name "" when its process is gone, its stage "" when it is no
 * stage's. Any thread; takes who_lock, and after releasing it the
 * pipeline's locks. */
void packet__who_fill(struct engine *e, const struct pfs_caller *c, struct who_buf *wb);

/* The open document at (item, rel) or NULL; files_lock held. */
struct open_doc *packet__od_find_locked(struct engine *e, int64_t item, const char *rel);
/* Fills m from an open document's in-memory state (takes d->lock), with
 * the stored ctime while nothing is pending; files_lock held. */
void packet__od_meta(struct engine *e, struct open_doc *d, struct doc_meta *m);
/* A reference on the open document (item, rel) in *out, loaded or (create)
 * made empty with mode, owner uid and group gid (as the store keeps them);
 * excl: -EEXIST when it exists. lazy: the caller only writes or only
 * reads (a handle opened O_WRONLY or O_RDONLY), so a document not open yet
 * is not read: it is partial until something needs its bytes (a read, a
 * write inside it, packet__od_load). stored: NULL, or the store's row of
 * (item, rel) as the caller read it (node.from_store) when stored_rc is 0,
 * its absence when stored_rc is -ENOENT: taken for the first try instead
 * of asking again (a commit since is caught as a changed one is). Release
 * with packet__od_put. 0 or a negative errno. */
int packet__od_get(struct engine *e, int64_t item, const char *rel, int create, int excl,
		   int lazy, mode_t mode, uid_t uid, gid_t gid, const struct doc_meta *stored,
		   int stored_rc, struct open_doc **out);
/* Reads the bytes a partial d never read, so that its content is the
 * whole document; nothing when it is not partial. d->lock held. 0 or a
 * negative errno (d unchanged). */
int packet__od_load(struct engine *e, struct open_doc *d);
/* The size of d's content in bytes, partial or not; d->lock held. */
uint64_t packet__od_size(struct open_doc *d);
/* Drops a reference; the last one frees the document (nothing committed). */
void packet__od_put(struct engine *e, struct open_doc *d);
/* Takes d out of e->docs and marks it unlinked: its handles go on with
 * what it holds (a partial d held open is read first), and no later lookup
 * finds it. files_lock held; takes d->lock. */
void packet__od_unlink_locked(struct engine *e, struct open_doc *d);
/* Whether d is held open by readers only, with nothing pending: its
 * attributes are then its stored row's, which change only by an operation
 * through the mount or one the engine reports, as a closed document's do
 * (struct pfs_stat's stable; packet_file.c). Takes d->lock; files_lock
 * held. */
int packet__od_quiet(struct open_doc *d);
/* Commits a changed open document as a new revision (or amends the
 * revision amend); *rev_id (may be NULL) gets the current one. 0 or a
 * negative errno. Takes ns_lock shared, files_lock and d->lock. */
int packet__od_commit(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
		      int64_t amend, int64_t *rev_id);
/* packet__od_commit for a write-through handle: *grow (0 before its first
 * commit) names the revision its earlier writes made, which takes this
 * commit's bytes in place while it is still the current one; *grow gets
 * the current revision id afterwards. Same locks and errors. */
int packet__od_commit_grow(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
			   int64_t *grow);
/* Whether the handle f being opened by who, of a document (creating: the
 * open creates it) or of registry.jsonl, is to write through
 * (packet_through.c: an O_APPEND handle of a process whose last ones
 * wrote at most once each). Takes files_lock. */
int packet__through_wanted(struct engine *e, const struct pfs_file *f, int creating,
			   const struct pfs_caller *who);
/* Counts a WRITE of size bytes at off through f (f->lock held) in
 * f->writes, the write(2) calls through f, as the daemon can tell them. */
void packet__through_count(struct pfs_file *f, uint64_t off, size_t size);
/* At a flush of the handle f of a document or registry.jsonl (f->lock
 * held), or a write-through handle's second write: counts f, once, in its document's mark for its
 * opener when it wrote at most once; sets the count back to 0 when it
 * wrote more. Handles of other kinds and flags: nothing. Takes
 * files_lock. */
void packet__through_note(struct engine *e, struct pfs_file *f);
/* Commits the write just made through the write-through handle f (f->lock
 * held): size bytes at offset end of its document, which held pending
 * bytes before it when was_dirty. Returns size; or the commit's negative
 * errno (-ENOSPC), the bytes taken back out of the document unless
 * another handle's write came after them. Takes what packet__od_commit
 * takes. */
ssize_t packet__through_commit(struct pfs_file *f, const struct pfs_caller *who, uint64_t end,
			       size_t size, int was_dirty);
/* After a change of the document of f (f->lock held) other than a write
 * (a truncate, a fallocate): commits it when f writes through, as its
 * close would not (who NULL: f's opener). 0, or packet__od_commit's
 * negative errno (the change left pending). */
int packet__through_settle(struct pfs_file *f, const struct pfs_caller *who);
/* Resizes d's content to size bytes, zero-filling growth (reading a
 * partial d first, unless size is 0); d->lock held. 0 or a negative errno. */
int packet__od_resize(struct engine *e, struct open_doc *d, uint64_t size);
/* Empties d for an O_TRUNC open by the handle owner (NULL: for
 * packet__od_cut), keeping what d held for the other handles' reads until
 * owner's next request (packet__od_request) or another change of d
 * (packet_doc.c, "Truncation"); without the memory to keep it, d is
 * emptied alone. d->lock held. */
void packet__od_trunc(struct open_doc *d, const struct pfs_file *owner);
/* Shrinks d to size bytes, less than its size, for a truncate(2) or an
 * ftruncate(2), keeping what d held for the reads of every handle until
 * another change of d (packet_doc.c, "Truncation"); size 0 is
 * packet__od_trunc with no owner. Reads a partial d first (size above 0);
 * without the memory to keep the old bytes it cuts d in place. d->lock
 * held. 0 or a negative errno (the load's; d is then unchanged). */
int packet__od_cut(struct engine *e, struct open_doc *d, uint64_t size);
/* Handle f made a request after its open (writes: one that changes d):
 * what an O_TRUNC open by f, or by any handle when writes, emptied is no
 * longer read by the others. Takes d->lock. */
void packet__od_request(struct open_doc *d, const struct pfs_file *f, int writes);
/* The bytes of d the handle f reads at offset off into *out (owned by d,
 * valid while d->lock is held): what d held before an O_TRUNC open by
 * another handle that has made no request since, or before a truncate or
 * ftruncate (but for a read below the size it left when that size is
 * inside a page; packet_doc.c, "Truncation"); otherwise d's content, read
 * whole first when partial. A read by the truncating handle itself is its
 * request (packet__od_request). d->lock held. 0 or a negative errno. */
int packet__od_bytes(struct engine *e, struct open_doc *d, const struct pfs_file *f,
		     uint64_t off, const struct buf **out);
/* The largest document allowed, in bytes (the configuration's). */
uint64_t packet__max_doc(struct engine *e);

/* ---- packet_ns.c: mkdir, rmdir, unlink, rename (and packet__item_create,
 * declared with the owners above; packet__resolve_parent is packet.c's) ---- */

/* Splits path into its parent (copied into parent) and last component
 * (*name points into path). 0, -EINVAL or -ENAMETOOLONG. */
int packet__split(const char *path, char *parent, size_t size, const char **name);
/* Resolves the parent directory of path into p (packet__node_clear it
 * after 0) and points *name at path's last component. 0 or the errors of
 * packet__split and packet__resolve (nothing to clear then). */
int packet__resolve_parent(struct engine *e, const char *path, const char **name, struct node *p);
/* 0 when documents may be made in directory node p, with rel the
 * item-relative path of name inside it; else -EACCES, -ENOTDIR or
 * -ENAMETOOLONG. */
int packet__doc_parent(struct node *p, const char *name, char *rel, size_t size);
/* Where a rename or link of an entry of item item_id puts it: the new
 * path to, whose parent directory resolves into *p (the caller clears it
 * with packet__node_clear after 0; after an error there is nothing to
 * clear) and whose item-relative path goes into rel. 0, -EXDEV (another
 * item), or the errors of packet__split, packet__resolve and
 * packet__doc_parent. */
int packet__dest(struct engine *e, const char *to, int64_t item_id, struct node *p, char *rel,
		 size_t size);

/* ---- packet_file.c: open files (engine.h's struct pfs_file) ----
 * packet_alloc.c (truncate, fallocate) works on them too. */


/* ---- packet_remove.c: a recursive removal of an item (rm -rf) ----
 * who: the caller of the unlink or rmdir; n: the resolved entry. */

/* -EBUSY when who's removal of n's item was refused (the item could not
 * be archived): the entry must not be removed; else 0. */
int packet__remove_blocked(struct engine *e, const struct node *n, const struct pfs_caller *who);
/* Document or document directory n was just removed: when who removes the
 * item, remembers it, to be restored when the item is archived. */
void packet__remove_taken(struct engine *e, const struct node *n, const struct pfs_caller *who);
/* An unlink or rmdir of n, an entry the engine owns in an item (or the
 * item itself), would fail with rc: when who is removing the item, the
 * item is archived (what who took restored first) and 0 returned, or the
 * archive's error (-EBUSY: a stage runs); otherwise rc. */
int packet__remove_item(struct engine *e, const struct node *n, const struct pfs_caller *who,
			int rc);

/* ---- ctl.c: the command lines of ctl ----
 * A ctl handle's pending buffer holds what was written after its last
 * newline. Any thread but the loop thread; calls on one pending buffer must
 * not overlap. Every refused line becomes ctl's result ("LINE: error: WHY",
 * recorded by the loop thread) and is logged to stderr. */

/* Checks the command line line (no newline) and applies it to item through
 * the loop thread; msg (may be NULL) gets its message. 0, -EINVAL (a bad
 * line, or one the item's state refuses), -EBUSY (archive while a stage
 * runs) or another negative errno. */
int packet__ctl_apply(struct engine *e, const char *item, const char *line, char *msg, size_t size);
/* The functions below that take reply (the handle's own answer, may be
 * NULL) empty it when they take a command line and then give it one line
 * per line applied or refused, as packet__ctl_render_reply shows. */
/* A write of data[size] to ctl: appended to pending, then every complete
 * line is checked, and if all are good applied in order. Returns size; or,
 * when a line fails as it is applied, the count of bytes of data up to just
 * after the last line applied (pending emptied), or that line's negative
 * errno when none was; -EINVAL, nothing applied, when a line is bad or the
 * fragment left grows past the longest line. A failed write empties
 * pending (a fragment from earlier writes was part of it); -ENOMEM. */
ssize_t packet__ctl_write(struct engine *e, const char *item, struct buf *pending,
			  struct buf *reply, const char *data, size_t size);
/* A flush of ctl: a pending fragment that is a whole valid command is
 * applied (its result returned, pending emptied); one that is blank or a
 * strict prefix of a valid line stays pending (0); anything else is refused
 * (-EINVAL, pending emptied). */
int packet__ctl_flush(struct engine *e, const char *item, struct buf *pending, struct buf *reply);
/* A flush of a ctl handle opened for writing that wrote nothing (writing
 * nothing means advance) from process pid: when it is pid's last close of
 * path (the file's path on the mount), advance is applied and its result
 * returned (0 or a negative errno, e.g. -ENOSPC when the store cannot take
 * it, -EINVAL when the item's state refuses it); 1 when it is not (the
 * descriptor is still open in pid); 2 when that cannot be told (pid 0: a
 * process outside the daemon's pid namespace; /proc/PID/fd unreadable).
 * On 1 and 2 the caller applies it at release; on 2 it also marks the
 * handle owed (packet__ctl_owe). */
int packet__ctl_empty_close(struct engine *e, const char *item, const char *path, pid_t pid);
/* Marks the ctl handle f owed: its advance comes at its release, which the
 * kernel sends after the close(2) that flushed it has returned. Until
 * packet__ctl_paid, packet__ctl_settle for its item waits. f->lock held. */
void packet__ctl_owe(struct pfs_file *f);
/* f is no longer owed (its release applied the advance or there is none
 * to apply); wakes packet__ctl_settle. Any f; f->lock held. */
void packet__ctl_paid(struct pfs_file *f);
/* The number of ctl handles that have left owed so far (packet__ctl_paid),
 * for packet__ctl_settle. No lock held. */
uint64_t packet__ctl_paid_count(struct engine *e);
/* Waits until no ctl handle of item_id is owed, at most CTL_SETTLE_MS:
 * an open of ctl, status or status.json then sees the answer of an empty
 * write whose close returned before it (a handle still open elsewhere
 * only delays it). since is packet__ctl_paid_count taken before the item
 * was read: a handle paid after it (its release ran between that read and
 * this call) made the read stale too.
 * Returns 1 when it waited or a handle was paid since (the item read
 * before is stale), 0 when not. No lock held. */
int packet__ctl_settle(struct engine *e, int64_t item_id, uint64_t since);
/* The last close of ctl: a pending fragment that is not blank is applied
 * whatever it is (failures only logged and recorded); pending emptied. */
void packet__ctl_release(struct engine *e, const char *item, struct buf *pending);
/* ---- packet_append.c: the append-only files registry.jsonl and events.
 * Any thread but the loop thread; calls on one line buffer or one
 * struct packet_tail must not overlap (a handle's lock, packet_file.c). */

/* What a handle of registry.jsonl or events read so far: the bytes at
 * [off, off + bytes.len) and the id of the last row taken. Zero-filled
 * before the first read; buf_free(&bytes) at the end. */
struct packet_tail {
	struct buf bytes;
	uint64_t off;
	int64_t id;
};

/* One open file. FUSE serves a handle from several worker threads at once
 * (reads, writes, polls, flushes and fsyncs of one descriptor, or of its
 * duplicates, overlap; only release comes after all of them), so what
 * changes after open is guarded by the handle's lock. It is taken before
 * every engine lock (namespace.h), never while one is held, and nothing
 * called under it takes it again: a handle's entry points call no other
 * entry point of the same handle. A snapshot is rendered without it
 * and swapped in under it, so readers copy from the old one meanwhile and
 * none of them sees it freed.
 */
struct pfs_file {
	struct engine *e;     /* constant */
	enum kind kind;       /* constant */
	int flags;            /* constant */
	int64_t item_id;      /* constant */
	char item_name[ITEM_NAME_MAX + 1]; /* constant */
	struct open_doc *od;  /* constant, N_DOC; its content under its own lock */
	struct record_handle *rec; /* constant, N_RECORD; under its own lock (record.c) */
	int64_t run_id;       /* constant: logs */
	int sealed;           /* constant: logs sealed at open, so never to change (packet__run_sealed) */
	struct pfs_caller opener; /* constant: who opened it, the author of commits at release */
	char *path;           /* constant: as opened; rendered views are rendered again from it */
	pthread_mutex_t lock;
	struct buf snap;      /* protected by lock: snapshot views, pipeline.json being edited */
	uint64_t snap_gen;    /* protected by lock: renders begun (engine_file_read) */
	uint64_t snap_at;     /* protected by lock: the render the snapshot is (0: the one at open) */
	struct buf line;      /* protected by lock: ctl, registry: a partial line */
	struct buf reply;     /* protected by lock: ctl, the answer to the last write or flush */
	int wrote;            /* protected by lock: anything written through this handle */
	int writes;           /* protected by lock: documents, the write(2) calls through this
			       * handle (as packet_file.c tells them from the kernel's WRITEs) */
	uint64_t write_end;   /* protected by lock: documents, the offset after the last write */
	int through;          /* constant: documents, each write committed (packet_through.c) */
	int64_t grown;        /* protected by lock: write-through, the revision its writes made */
	int counted;          /* protected by lock: counted in its document's mark
			       * (packet_through.c) */
	int advanced;         /* protected by lock: ctl, no empty-write advance at release
			       * (a truncate by path) */
	int trunc_pending;    /* protected by lock: documents created or emptied at open,
			       * nothing written yet */
	int64_t provisional;  /* protected by lock: documents, the revision committed before any
			       * write (see packet__od_commit) */
	int snap_dirty;       /* protected by lock: pipeline.json changed */
	uint64_t read_end;    /* protected by lock: offset just past the last read (poll readiness) */
	int snap_read;        /* protected by lock: the snapshot was read from */
	struct packet_tail tail; /* protected by lock: registry, events, the rows read so far */
	struct pfs_file *owed_next; /* protected by e->owed_lock: next in e->owed */
	int owed;             /* protected by e->owed_lock: ctl, in e->owed */
};

/* The size of item's registry.jsonl in bytes (0 when the store cannot say). */
uint64_t packet__registry_size(struct engine *e, int64_t item_id);
/* A write of buf[size] at off to the registry.jsonl of item_id (named
 * item_name) through a handle whose fragment since the last newline is
 * line: appended to it, and the lines it completes checked, then stored
 * all or none. append: the handle is O_APPEND (off ignored); otherwise off
 * must be the end of the file (registry and fragment), else -EPERM.
 * through: a write-through handle (packet_through.c), whose close the
 * engine does not see: a write that would leave a whole object without its
 * newline, which a close refuses, is refused (-EINVAL, logged, nothing
 * stored). Returns size; -EINVAL (a bad line, refused and logged), -EFBIG (a line
 * longer than REGISTRY_LINE_MAX), -ENOMEM (line as it was), or the
 * store's negative errno. */
ssize_t packet__registry_write(struct engine *e, int64_t item_id, const char *item_name,
			       int append, int through, struct buf *line, const char *buf,
			       size_t size, uint64_t off);
/* A read of size bytes at off of registry.jsonl (kind N_REGISTRY) or
 * events (N_EVENTS_ALL, N_ITEM_EVENTS) of item_id, read live, into buf,
 * through what t kept: bytes read (0 at the end) or a negative errno. */
ssize_t packet__tail_read(struct engine *e, enum kind kind, int64_t item_id, struct packet_tail *t,
			  char *buf, size_t size, uint64_t off);
/* ---- packet_tmp.c: temp files of .packetfs/ (an editor's save of
 * pipeline.json). NAME is the name inside .packetfs/. Any thread. ---- */

/* Whether the temp file name exists. */
int packet__tmp_exists(struct engine *e, const char *name);
/* Fills st's mode, size, owner and times for the temp file. 0 or -ENOENT. */
int packet__tmp_stat(struct engine *e, const char *name, struct pfs_stat *st);
/* Makes the empty temp file name. 0, -EEXIST (it exists, or is a fixed
 * entry of .packetfs/), -ENOSPC (too many), -ENOMEM. */
int packet__tmp_create(struct engine *e, const char *name, mode_t mode, uid_t uid, gid_t gid);
/* Appends its content to out. 0, -ENOENT, -ENOMEM. */
int packet__tmp_read(struct engine *e, const char *name, struct buf *out);
/* Replaces its content with a copy of data (nothing when it was unlinked).
 * 0 or -ENOMEM. */
int packet__tmp_store(struct engine *e, const char *name, const struct buf *data);
/* 0 or -ENOENT. */
int packet__tmp_unlink(struct engine *e, const char *name);
int packet__tmp_chmod(struct engine *e, const char *name, mode_t mode);
/* Sets its mtime (mtime_ns < 0: left). 0 or -ENOENT. */
int packet__tmp_touch(struct engine *e, const char *name, int64_t mtime_ns);
/* The names of the temp files (caller frees; NULL when none). */
char **packet__tmp_names(struct engine *e);
/* rename(2) of from (node a: a temp file or pipeline.json) to the mount
 * path to; flags bit 0: RENAME_NOREPLACE. A temp file over pipeline.json is
 * applied as a write of it would be (-EINVAL when refused: nothing
 * changes, the refusal is logged and kept); over another name of
 * .packetfs/ it takes that name; pipeline.json to a temp name makes that
 * temp file a copy of it and stays. -EXDEV outside .packetfs/, -EACCES
 * over a fixed entry, -EEXIST, -ENOSPC, -ENOMEM. */
int packet__tmp_rename(struct engine *e, const struct node *a, const char *from, const char *to,
		       unsigned flags);

/* ---- refusal.c: the last refused writes, read back beside them ---- */

/* Keeps why (one line) as the last refusal of a write of item's
 * registry.jsonl (item: its id, item_name its name), or of pipeline.json
 * (item 0, item_name NULL), and tells the watcher. Any thread; on
 * -ENOMEM the refusal is only logged. */
void packet__refusal_set(struct engine *e, int64_t item, const char *item_name, const char *why);
/* Logs the refusal fmt (one line) of a write of item's registry.jsonl or
 * of pipeline.json (item 0) with the file's name, and keeps it
 * (packet__refusal_set). Any thread. */
void packet__refuse(struct engine *e, int64_t item, const char *item_name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Refuses the item name name (one engine_valid_item_name refuses) of a
 * mkdir: says why in the log and in an "item_refused" root event with
 * "name" (bytes that are no UTF-8 as '?') and "error", where the person
 * whose mkdir got EINVAL looks (MNT/events). Any thread. Returns -EINVAL. */
int packet__item_name_refused(struct engine *e, const char *name);
/* Forgets the refusal kept for item (0: pipeline.json), telling the
 * watcher when there was one: a configuration taken since makes the old
 * refusal news no more. Any thread. */
void packet__refusal_clear(struct engine *e, int64_t item, const char *item_name);
/* The last refusal kept for item (0: pipeline.json) into out: "TIME: why\n",
 * nothing when there was none. 0 or -ENOMEM. Any thread. */
int packet__refusal_render(struct engine *e, int64_t item, struct buf *out);

/* The line listing ctl's verbs that ends what ctl reads back. */
extern const char packet__ctl_verbs[];
/* The answer a ctl handle reads back once it wrote: reply (one line per
 * command line of its last write or flush that applied or refused any,
 * "LINE: ok" or "LINE: error: WHY") and the list of verbs, into out.
 * 0 or -ENOMEM. */
int packet__ctl_render_reply(const struct buf *reply, struct buf *out);

/* ---- record.c: validation/record, the recorder's transaction file ----
 * A handle's lines are applied under its own lock; any thread but the
 * loop thread. Every refused line becomes the handle's answer ("error:
 * ENAME: WHY") and is logged to stderr; every request's answer also
 * becomes the item's latest (namespace.h, struct record_slot). */

struct record_handle;

/* A new handle on item's validation/record in *out. 0 or -ENOMEM. */
int packet__record_open(int64_t item_id, const char *item, struct record_handle **out);
/*
 * A write of data[size]: appended to the pending bytes, then every
 * complete line is applied in order (record.h: a request through
 * pipeline_record with who's uid and pid, or cancel through
 * pipeline_record_cancel). Returns size; or, when a line is refused, that
 * line's negative errno when it was the first of the write, else the
 * count of bytes of data up to just after the last line applied; pending
 * is then emptied. Refusals: those of record_parse and of the engine,
 * -EBUSY (a request while the handle's run is queued or running), -ENOENT
 * (cancel with no run), -EALREADY (cancel of a run that ended), -EFBIG
 * (a fragment longer than RECORD_LINE_MAX), -ENOMEM.
 */
ssize_t packet__record_write(struct engine *e, struct record_handle *h, const char *data,
			     size_t size, const struct pfs_caller *who);
/* A flush: a pending fragment that can no longer grow into a line
 * (record_line_open) is applied and its result returned; one that can
 * stays pending (0). */
int packet__record_flush(struct engine *e, struct record_handle *h, const struct pfs_caller *who);
/* The last close: a pending fragment that is not blank is applied whatever
 * it is (a refusal only recorded and logged); then h is freed. NULL is
 * allowed. */
void packet__record_release(struct engine *e, struct record_handle *h, const struct pfs_caller *who);
/* Appends the answer of h to out as "key: value" lines, from the store's
 * current state: h's own when it applied a line, else (h NULL too) the
 * item's latest, else a usage line. 0 or a negative errno. */
int packet__record_render(struct engine *e, int64_t item_id, struct record_handle *h,
			  struct buf *out);

/* The name of the open document d in the directory dir (dlen bytes; ""
 * for the item's top level) of item when it lies right in it, else NULL.
 * files_lock held. */
const char *packet__open_doc_child(const struct open_doc *d, int64_t item, const char *dir,
				   size_t dlen);

#endif
