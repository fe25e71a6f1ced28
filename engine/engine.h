/*
 * engine.h - the packetfs engine as the front end (fs/) sees it: the store,
 * the packet namespace of SPEC §3 addressed by path, and the pipeline
 * engine running in the background. This is the only header fs/ includes.
 *
 * A layer of its own (docs/design.md), below the namespace, which
 * implements most of it, and engine.c, which implements the rest: the
 * contract is declarations only, includes util.h alone and calls nothing,
 * so the namespace includes it downward (tests/tree/layers.py checks it).
 *
 * Paths are absolute within the mount and normalised: "/" is the mount
 * root, "/fix-1/plan.md" a document, "/fix-1/validation/registry.jsonl" a
 * view. No "." or ".." components, no trailing or double slashes.
 *
 * Errors are negative errno values, as the mount must report them:
 * -ENOENT, -EEXIST, -EINVAL (bad name, bad ctl command, invalid registry
 * line or pipeline.json), -EACCES (write to a read-only view), -EPERM
 * (rewrite of an append-only file), -EFBIG (over the document size limit),
 * -EBUSY (archive while a stage runs), -ENOTDIR, -EISDIR, -ENOTEMPTY,
 * -EXDEV (rename across items), -ENOSPC/-EIO (store failures; nothing
 * already stored is lost), -ENOMEM.
 *
 * Threads: every function may be called from any thread, concurrently
 * (FUSE worker threads, the CLI), unless its comment says otherwise. The
 * engine serialises access to the store itself. The pipeline runs on one
 * libuv loop thread of its own, started by engine_start().
 */
#ifndef PACKETFS_ENGINE_H
#define PACKETFS_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util.h"

struct engine;
struct pfs_file;

/* Who performs an operation: recorded with every revision (uid), and the
 * owner and group of what it creates (uid, gid: see struct pfs_stat). */
struct pfs_caller {
	uid_t uid;
	gid_t gid; /* its filesystem gid */
	pid_t pid; /* 0 when unknown (the CLI, the engine itself) */
};

/*
 * Attributes of a namespace entry. Times: documents and document
 * directories keep mtime, ctime and atime in the store, and so does each
 * item directory; a directory's mtime and ctime move to now when an entry
 * is created, removed or renamed in or out of it. No access time moves on
 * read (as on a noatime mount): a document's atime is the mtime of its
 * last content write unless utimens set it since.
 */
struct pfs_stat {
	mode_t mode;      /* the file type (S_IFDIR, S_IFREG, S_IFLNK, and in packets
	                   * S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK) with permission bits */
	uint64_t rdev;    /* a device node's number (dev_t), else 0 */
	uint64_t size;    /* bytes (views: the size of their current content) */
	int64_t mtime_ns; /* since the Unix epoch */
	int64_t ctime_ns;
	int64_t atime_ns; /* 0 where the entry keeps none (views, open-file
	                   * attributes): report mtime_ns as its access time */
	uint32_t nlink;   /* 0 stands for 1 */
	uint64_t file_id; /* a document link(2) gave a second name to: a number
	                   * all its names share and no other file of the store
	                   * has, for st_ino; 0: the front end numbers the entry */
	int unlinked;     /* 1 for a document open after its name was unlinked:
	                   * its link count is 0 (nlink is then ignored) */
	/* Owner and group. Documents, their directories and item directories
	 * belong to whoever made them (the caller's uid, and its gid, or the
	 * directory's gid where the directory has the set-group-ID bit, which
	 * a new directory then takes too) until a chown; generated entries
	 * (the root, views, logs, ctl, the fixed directories) to the store
	 * owner (the mounting user) and the store's group (the group of the
	 * store directory), as does everything made before owners were kept. */
	uid_t uid;
	gid_t gid;
	int view;         /* 1 for generated views and logs: no page caching, direct I/O */
	int stable;       /* 1 when these attributes change only by an operation made
	                   * through the mount (which the kernel sees) or by one the
	                   * engine reports to engine_watch: the front end may let the
	                   * kernel cache them (fs/fs_cache.c "Caching"). 0 for views
	                   * (registry.jsonl aside, whose lines are written through the
	                   * mount or reported) and growing logs, the subdirectories of
	                   * .history and the fixed directories of an archived item,
	                   * documents held open for writing or with a change not
	                   * stored (from the open until the release of the last writer
	                   * has committed; engine_file_getattr of a handle says the
	                   * same) and directories holding a document created open and
	                   * not stored yet. */
	int list_stable;  /* directories: 1 when stable and its listing changes only
	                   * through the mount or by an entry the engine reports
	                   * ENGINE_CREATED in it (an item's directory, its document
	                   * directories, stages/, validation/ and validation/logs/):
	                   * the front end may let the kernel cache the listing. */
};

/* Which daemon-wide facilities engine_open starts. */
struct engine_options {
	const char *store;      /* the store directory */
	const char *mountpoint; /* absolute mount point (stage cwd, worktree link); NULL offline */
	int readonly;           /* CLI readers: no lock, no writes, no pipeline */
};

/*
 * Creates the store directory (it must not exist or be empty) with its
 * SQLite database in WAL mode, the worktrees/ directory, and the pipeline
 * configuration: pipeline_json (validated; NULL means the default for repo).
 * The repo must be a git repository where the configured base resolves.
 * Returns 0; -EEXIST (store not empty), -ENOENT (no repo / base), -EINVAL
 * (bad pipeline, message in err), or another negative errno. On failure
 * nothing is left behind. Any thread.
 */
int engine_init_store(const char *store, const char *repo, const char *pipeline_json, char *err,
		      size_t errlen);

/*
 * The store's signing key pair (SPEC §6 "Evidence leaves the store
 * intact"), files of the store directory: the ed25519 private key (PEM,
 * mode 0600: the store owner's alone) and its public key (PEM, mode 0644:
 * anyone who can reach the store may read it and give it to a verifier).
 * engine_init_store makes them; a store made before they existed gets
 * them from its first engine_attest.
 */
#define ENGINE_SIGNING_KEY "signing.key"
#define ENGINE_SIGNING_PUB "signing.pub"

/* The store's SQLite database, a file of the store directory (with its
 * "-wal" and "-shm" beside it while open): store.h's STORE_DB_NAME. */
#define ENGINE_DB_NAME "packetfs.db"

/*
 * Opens a store. Unless readonly, takes the store's lock (a second daemon
 * gets -EBUSY and "store is in use by process N" in err), applies pending
 * migrations, and performs crash recovery: runs left "running" by a dead
 * daemon are ended (their process groups killed) and recorded as
 * interrupted, and their items re-queued or failed as pipeline.json says.
 * Must be called after any fork (daemonize first). *out is freed with
 * engine_close.
 */
int engine_open(const struct engine_options *opt, struct engine **out, char *err, size_t errlen);

/* Starts the pipeline loop thread; queued work resumes. 0 or -errno. Call
 * once, from the thread that opened the engine. Not for readonly engines. */
int engine_start(struct engine *e);

/* Stops the loop thread (running processes are cancelled and their runs
 * recorded as interrupted), closes the store. NULL is allowed. */
void engine_close(struct engine *e);

/* Namespace queries. */
/* The attributes of path into st: 0, -ENOENT, or another negative errno.
 * A view is rendered to learn its size. Any thread. */
int engine_getattr(struct engine *e, const char *path, struct pfs_stat *st);
/* engine_getattr without rendering: a view rendered on demand (status,
 * evidence.md, change.diff, the pages, ...) reports size 0, everything else
 * as engine_getattr does. For a caller that needs the type, mode and owner
 * only (the front end's notifier, which opens views to replay their
 * changes). Any thread. */
int engine_getattr_unrendered(struct engine *e, const char *path, struct pfs_stat *st);
/* engine_getattr for a lookup: 0 with st filled, -ENOENT, or another
 * negative errno, as engine_getattr. keepable: NULL, or set when path resolves
 * to nothing (-ENOENT) to whether the front end may let the kernel keep
 * that miss (else 0): 1 when path's directory is a document directory below
 * an item's own holding no document created and not stored yet. A name
 * comes to be in such a directory only through the mount, which the
 * kernel locks the directory against while it looks up in it, or by a
 * refused removal's restore, which the engine reports ENGINE_CREATED (the
 * engine makes its logs, change-validation.md and views elsewhere). The
 * directory is judged by its path, before the name is asked and without
 * a question to the store: the caller vouches that the kernel holds it as
 * a directory. Any thread. */
int engine_lookup(struct engine *e, const char *path, struct pfs_stat *st, int *keepable);
typedef int (*engine_dir_cb)(void *arg, const char *name, const struct pfs_stat *st);
/* Calls cb for every entry of the directory at path (not "." and ".."), in
 * a stable order; stops early when cb returns non-zero. */
int engine_readdir(struct engine *e, const char *path, engine_dir_cb cb, void *arg);
/*
 * engine_readdir for a listing: cb's st holds only mode (the type, and the
 * permission bits where they cost nothing), view and stable as they hold
 * for the entry's kind (an entry whose kind is stable may still report
 * stable 0 to engine_getattr, e.g. a document held open for writing); size
 * and times are 0. No view is rendered and no entry is looked up one by one,
 * so a listing costs the queries of its directory only. Any thread.
 */
int engine_list(struct engine *e, const char *path, engine_dir_cb cb, void *arg);
/* The target of a symlink (the item's worktree link, a symlink made in a
 * packet, or a revision of one in .history) into buf (size bytes),
 * NUL-terminated. 0, -EINVAL (not a symlink), -ENAMETOOLONG (buf too
 * small), -ENOENT or a negative errno of the store. */
int engine_readlink(struct engine *e, const char *path, char *buf, size_t size);
/* Makes the symlink path to target (1 to PATH_MAX - 1 bytes) in an item
 * directory or a directory of one, owned by who (as a document it makes),
 * kept in the store with its revisions like a document. 0, -EEXIST,
 * -ENAMETOOLONG (a longer target or path), -ENOENT (an empty target or no
 * such directory), -EACCES (not a directory of documents, or archived),
 * -EROFS (a read-only engine) or a negative errno of the store. */
int engine_symlink(struct engine *e, const char *path, const char *target,
		   const struct pfs_caller *who);
/* Makes the FIFO, socket, character or block device path (the type in mode,
 * permission bits mode & 07777, device number rdev for a device) where
 * engine_symlink makes symlinks, owned by who; it has no content. A device
 * needs who to be root (uid 0), else -EPERM (as the kernel's CAP_MKNOD
 * check on a local disk). 0, -EINVAL (another type: S_IFREG documents are
 * made by engine_file_open) or engine_symlink's errors. */
int engine_mknod(struct engine *e, const char *path, mode_t mode, uint64_t rdev,
		 const struct pfs_caller *who);

/* Gives the document at from (of any kind; packet_node.c) the second name
 * to, in the same item: link(2). Both names then stand for one file, as on
 * a local disk: what is written, chmod-ed, chown-ed or set through one
 * shows through the other, struct pfs_stat's nlink counts them and its
 * file_id is theirs. Documents held open by name are committed first.
 * 0, -EPERM (from is a directory), -EACCES (from is no document, or is
 * archived; to is not where documents go), -EXDEV (another item), -EEXIST,
 * -EROFS (a read-only engine), the errors of resolving either path, or a
 * negative errno of the store. */
int engine_link(struct engine *e, const char *from, const char *to, const struct pfs_caller *who);

/* Namespace changes. */
int engine_mkdir(struct engine *e, const char *path, mode_t mode, const struct pfs_caller *who);
/* A process opened the directory path (opendir): when it is an item's
 * own directory, the process may be removing the item (rm -rf), which
 * engine_unlink and engine_rmdir then finish by archiving it (SPEC §3;
 * packet_remove.c). FUSE threads. */
void engine_dir_opened(struct engine *e, const char *path, const struct pfs_caller *who);
int engine_unlink(struct engine *e, const char *path, const struct pfs_caller *who);
int engine_rmdir(struct engine *e, const char *path, const struct pfs_caller *who);
/* flags: 0, RENAME_NOREPLACE (-EEXIST if to exists) or RENAME_EXCHANGE (-EINVAL).
 * replaced (NULL: not wanted): on success, where the content of the
 * regular document with one name that the rename replaced at to can still
 * be read, read-only: the absolute path of its .history revision (a new
 * string the caller frees), or NULL when to named none. A file system
 * gives it to a process that looked the replaced name up before the
 * rename and opens it after, as a local disk does (fs/inode.h). */
int engine_rename(struct engine *e, const char *from, const char *to, unsigned flags,
		  const struct pfs_caller *who, char **replaced);
/* truncate(2) by path; -EACCES on views, -EPERM on the registry unless
 * size equals its current size. */
int engine_truncate(struct engine *e, const char *path, uint64_t size, const struct pfs_caller *who);
/* chmod: documents, their directories and item directories keep the
 * permission bits; views -EACCES... except a chmod to the mode they
 * already have. (Who may chmod is the kernel's check: default_permissions.) */
int engine_chmod(struct engine *e, const char *path, mode_t mode);
/*
 * chown: sets the owner and group ((uid_t)-1, (gid_t)-1: keep) of a
 * document, a document directory or an item directory, durably (ctime
 * moves). Unless privileged, the set-user-ID bit of a document, a symlink
 * or a special file is cleared, and its set-group-ID bit when it has group
 * execute, as Linux does (a directory keeps them). Who may
 * chown (POSIX: root gives away, the owner may change the group to one of
 * its own) is the caller's check (fs/). Generated entries keep the store
 * owner and group: -EPERM unless nothing changes; -EACCES under .archive/.
 */
int engine_chown(struct engine *e, const char *path, uid_t uid, gid_t gid, int privileged);
/*
 * Extended attributes (packet_xattr.c): documents, document directories
 * and item directories keep attributes of the user namespace ("user."
 * names) in the store, across remounts, renames included; what the kernel
 * checks before (name and value lengths, who may write, that the entry is
 * a regular file or a directory) is not checked again. Any thread.
 *
 * engine_getxattr: the value into *value (caller frees) and its length
 * into *len; -ENODATA when the entry has none of that name (always, for
 * another namespace or a generated entry). engine_setxattr: how is 0,
 * ENGINE_XATTR_CREATE (-EEXIST when it exists) or ENGINE_XATTR_REPLACE
 * (-ENODATA when not); -ENOTSUP for a name outside user. or a generated
 * entry, -EACCES under .archive/. engine_listxattr: appends each name and
 * its NUL to names. engine_removexattr: -ENODATA when there is none,
 * -EACCES under .archive/. Otherwise 0, -ENOENT, or a negative errno.
 */
#define ENGINE_XATTR_CREATE 1
#define ENGINE_XATTR_REPLACE 2
int engine_getxattr(struct engine *e, const char *path, const char *name, char **value,
		    size_t *len);
int engine_setxattr(struct engine *e, const char *path, const char *name, const void *value,
		    size_t len, int how);
int engine_listxattr(struct engine *e, const char *path, struct buf *names);
int engine_removexattr(struct engine *e, const char *path, const char *name);
/* The store owner (the uid of the process that opened e: the mounting
 * user) and the store's group (the group of the store directory, read at
 * engine_open): a mount lets in root, the store owner and the members of
 * the store's group (docs/operating.md "Sharing a mount"). Any thread. */
void engine_team(const struct engine *e, uid_t *owner, gid_t *group);
/* Time arguments of engine_utimens besides ns since the Unix epoch. */
#define PFS_TIME_OMIT INT64_MIN      /* keep the time as it is */
#define PFS_TIME_NOW (INT64_MIN + 1) /* the current time */
/*
 * utimens: sets the access and modification times (ctime moves to now) of
 * a document, a document directory or an item directory, durably. Other
 * directories, ctl, the registry and pipeline.json accept and ignore it;
 * other views give -EACCES, as does anything under .archive/. Commit
 * pending content of open handles first (fs/ does), or their next commit
 * stamps its own time.
 */
int engine_utimens(struct engine *e, const char *path, int64_t atime_ns, int64_t mtime_ns);

/*
 * Open files. flags are open(2) flags (O_ACCMODE, O_TRUNC, O_APPEND,
 * O_CREAT, O_EXCL). A document's content is shared by all its open handles
 * (writes through one are seen by reads through another at once) and
 * committed as a new revision by engine_file_flush or release when it
 * changed. Views are snapshotted at open; logs are read live.
 *
 * One handle may be used by several threads at once (FUSE serves one open
 * file from several workers): reads, writes, truncates, flushes, fsyncs,
 * polls and getattrs of the same handle may overlap, each seeing the
 * handle before or after another, never half changed. Only
 * engine_file_release must come after every other call on the handle has
 * returned, and none may follow it.
 */
int engine_file_open(struct engine *e, const char *path, int flags, mode_t mode,
		     const struct pfs_caller *who, struct pfs_file **out);
/*
 * Opens another read-only handle on the content of f, an open document:
 * the one it has now, also when its name was renamed over or unlinked
 * since (a stale document, as a file on a local disk stays readable
 * through an inode a path walk found before the rename). For an open of an
 * inode whose path went away between the kernel's lookup and its open.
 * flags as open(2), without write access, O_CREAT or O_TRUNC. Returns 0
 * and *out (released with engine_file_release), -ESTALE when f is no
 * document or flags ask to write, or -ENOMEM. Any thread, f in use or not.
 */
int engine_file_reopen(struct pfs_file *f, int flags, const struct pfs_caller *who,
		       struct pfs_file **out);
/* Returns bytes read (0 at end) or -errno. */
ssize_t engine_file_read(struct pfs_file *f, char *buf, size_t size, uint64_t off);
/* Returns bytes written or -errno. O_APPEND handles write at the end
 * whatever off says. A write-through handle's write (engine_file_flushes
 * 0 for a handle that writes) is committed before it returns; a failed
 * commit fails it (-ENOSPC) with its bytes taken back. */
ssize_t engine_file_write(struct pfs_file *f, const char *buf, size_t size, uint64_t off,
			  const struct pfs_caller *who);
/* ftruncate(2) through f: 0 or -errno. Committed at f's close, or before
 * it returns for a write-through handle (as engine_file_write). */
int engine_file_truncate(struct pfs_file *f, uint64_t size, const struct pfs_caller *who);
/* fallocate(2) of [off, off + len) with mode (FALLOC_FL_*) on an open
 * file, as ext4 does it: mode 0 extends the size with zeros, KEEP_SIZE
 * alone changes nothing, PUNCH_HOLE|KEEP_SIZE and ZERO_RANGE zero the
 * range (ZERO_RANGE without KEEP_SIZE also extends). 0, or -EFBIG when
 * off + len passes the document size limit, -EOPNOTSUPP for other modes
 * and for ctl and validation/record, -EPERM for the append-only registry
 * (but KEEP_SIZE alone), -EACCES for views, -EINVAL for len 0. A call that
 * leaves content and size as they were adds no revision; a change is
 * committed as a truncate's is. FUSE threads. */
int engine_file_fallocate(struct pfs_file *f, int mode, uint64_t off, uint64_t len,
			  const struct pfs_caller *who);
/* Clears the set-user-ID bit of the document open as f, and its
 * set-group-ID bit when it has group execute (what Linux does to a file
 * that a process without CAP_FSETID writes or truncates), in the open
 * document and durably in the store (no revision; ctime moves). For a
 * file system that took over that clearing from the kernel (FUSE's
 * HANDLE_KILLPRIV_V2, fs/fs_io.c). Nothing for other kinds of file, nor
 * for a mode without those bits (nothing is stored then). Takes ns_lock
 * shared, files_lock and the document's lock, so that a rename cannot move
 * the path meanwhile. 0 or a negative errno of the store. FUSE threads. */
int engine_file_kill_suidgid(struct pfs_file *f);
/* engine_file_kill_suidgid for the document at path, open or not (a
 * truncate by path): through engine_chmod when the bits are set. 0, the
 * errors of resolving path, or a negative errno of the store. Any thread. */
int engine_kill_suidgid(struct engine *e, const char *path);
/* Commits pending content: after it returns 0 the content survives kill -9
 * of the daemon. For ctl, applies a last line without newline; for the
 * registry, a held partial line fails with -EINVAL. */
int engine_file_flush(struct pfs_file *f, const struct pfs_caller *who);
/* Flush, then make the store durable against power loss. */
int engine_file_fsync(struct pfs_file *f, const struct pfs_caller *who);
/* Flushes (errors are lost, as with close(2) after flush) and frees f. A
 * document's handle that only read, and was not opened with O_CREAT,
 * commits nothing other handles wrote (their own flush or release does,
 * as their writer), unless the last commit of the document failed (a full
 * disk): that is tried again. */
void engine_file_release(struct pfs_file *f);
/* Whether reads must bypass the page cache (views, and logs still growing). */
int engine_file_direct(const struct pfs_file *f);
/* Whether a flush of f must reach engine_file_flush: 0 for a handle opened
 * only to read, whose close then sends no FLUSH (a document's other
 * handles commit what they wrote at their own close; its fsync still
 * commits and syncs), and for a write-through append handle, whose every
 * write commits before engine_file_write returns (packet_through.c).
 * Constant for a handle from its open on. */
int engine_file_flushes(const struct pfs_file *f);
/* Whether the content read through f can never change (a log whose run
 * ended and was sealed): the kernel may keep its pages across opens. */
int engine_file_immutable(const struct pfs_file *f);
int engine_file_getattr(struct pfs_file *f, struct pfs_stat *st);

/*
 * Readiness of an open file for poll(2), as a mask of POLLIN, POLLRDNORM,
 * POLLOUT and POLLWRNORM (<poll.h>). Append-only views (events, logs,
 * registry.jsonl) are readable when they hold bytes past the end of this
 * handle's last read, and a log also once its run has ended (end of file
 * is then final); status, status.json, evidence.md and change.diff when
 * their content changed since this handle's snapshot or the snapshot was
 * not read to its end. Everything else is always ready, as a regular file
 * on a local disk. Writable handles add POLLOUT|POLLWRNORM.
 */
unsigned engine_file_poll(struct pfs_file *f);

/*
 * Watching the engine's own changes. The kernel reports changes made by a
 * request through the mount to inotify itself; the changes the engine
 * makes on its own (a log created or growing, status, events, the
 * registry, evidence.md, change.diff, a document the engine writes, an
 * item archived) it cannot see. The engine tells fn of each, with path
 * normalised as above:
 *	ENGINE_CREATED   a file appeared at path
 *	ENGINE_MODIFIED  the content of the file at path changed
 *	ENGINE_ARCHIVED  the item directory at path ("/<item>") moved to
 *	                 "/.archive/<item>"
 *	ENGINE_TIMES     the times of the directory at path moved (nothing in
 *	                 it changed: nothing for a watcher to see)
 * fn is called on any engine thread, possibly with engine locks held: it
 * must return quickly and must not call into the engine. Call once,
 * before engine_start, from the thread that opened the engine; fn stays in
 * use until engine_close returns.
 */
enum engine_change {
	ENGINE_CREATED,
	ENGINE_MODIFIED,
	ENGINE_ARCHIVED,
	ENGINE_TIMES,
};
typedef void (*engine_change_fn)(void *arg, const char *path, enum engine_change what);
void engine_watch(struct engine *e, engine_change_fn fn, void *arg);

/* The CLI's queries. Text is appended to out. */
/* `packetfs log`: revisions (rev, time, op, size, uid, pid, comm, stage) of
 * the item's documents (or of path only), then the item's events. -ENOENT
 * for an unknown item. */
int engine_log(struct engine *e, const char *item, const char *path, struct buf *out);
/* `packetfs check`: SQLite integrity, every log against its recorded size
 * and sha256, every engine registry line against its run in the runs table
 * and its log, every external line saying it is external. Returns 0 when
 * clean ("store is consistent" in out), 1 when problems were found (one
 * line each in out, naming the item and the run), or -errno. */
int engine_check(struct engine *e, struct buf *out);
/*
 * `packetfs gc` (gc.c, store_gc.c): reclaims space under the retention
 * rules of SPEC §2. The whole history of every path that is no document now
 * goes when it was deleted (unlinked) more than days days ago (0: any
 * deleted path), or has a temporary file's name (vim's .NAME.swp and 4913,
 * Emacs's #NAME#, NAME~, sed's sedXXXXXX, NAME.tmp.PID.HEX: store.h,
 * store_gc_temp_name), whatever its age; a path renamed away keeps its
 * history (the document lives on under its new name). Documents, runs,
 * logs, the registry and events - the evidence - are never touched. Then
 * the WAL is checkpointed and the database VACUUMed, so the files shrink.
 * What went into *out. 0, -EROFS (a read-only engine), -EINVAL (days < 0), -ENOSPC (no
 * room for VACUUM's copy) or another negative errno. The CLI's, on an
 * engine opened read-write (which a mounted store refuses: EBUSY).
 */
struct engine_gc {
	int64_t paths;         /* paths whose history went */
	int64_t revisions;     /* revisions deleted */
	int64_t stored_bytes;  /* what they took in the store (compressed) */
};
int engine_gc(struct engine *e, int days, struct engine_gc *out);

/*
 * `packetfs attest`: an in-toto Statement v1 about the item's head commit
 * (subject: "git+REPO@BRANCH" with digest {"gitCommit": HEAD}), whose
 * predicate is a test result v0.1 (result PASSED, WARNED or FAILED;
 * configuration: a resource descriptor per recipe the plan names; the
 * passed, warned and failed recipes) made from the latest engine run of
 * each named recipe at the head, as evidence.md counts them (external
 * claims never count), in a DSSE envelope signed with the store's key
 * (ENGINE_SIGNING_KEY), appended to out as JSON. A store without a key
 * pair gets one first (*made set to 1; made may be NULL). 0; -ENOENT (no
 * such item, or its branch has no head: why in err), -EACCES (the key
 * cannot be read or made: why in err), or another negative errno. Any
 * thread; a readonly engine will do.
 */
int engine_attest(struct engine *e, const char *item, struct buf *out, int *made, char *err,
		  size_t errlen);
/* The process id of the daemon that last opened the store for writing
 * (recorded in the store), or 0. It may have exited since. */
pid_t engine_daemon_pid(struct engine *e);

/*
 * Carrying an item to another store whole (carry.c, carry_in.c; SPEC §6):
 * its evidence and history of work travel with its documents. An export
 * is a directory holding the packet's files (the CLI copies them through
 * the namespace) and what engine_carry_export adds: every run's log as
 * stored (stages/, validation/logs/), validation/registry.jsonl as stored,
 * the item branch as a git bundle (ENGINE_CARRY_BUNDLE) and a manifest
 * (ENGINE_CARRY_MANIFEST: format, packetfs version, item, base and head
 * commits, the bundle's and the registry's sha256, the item's stage, state, verdict and
 * assessment with their heads, and every run with its log's path, sha256
 * and size). Both paths are packetfs's in an export: a document of the
 * item at one of them is overwritten there and not imported.
 */
#define ENGINE_CARRY_MANIFEST ".packetfs/export.json"
#define ENGINE_CARRY_BUNDLE ".packetfs/branch.bundle"
#define ENGINE_CARRY_FORMAT 1

/* Writes the carry of item (live or archived) into the directory dir,
 * after the CLI wrote the packet's files there; the manifest last. Runs
 * git (bundle create) in the store's repository, trusting it whoever owns
 * it only when the caller owns the store (carry.c). 0, or a negative errno
 * with the reason in err (-ENOENT: no such item or branch; -EIO: git
 * failed, or refused another user's repository, which err names); dir is
 * then partly written: the CLI writes into a temporary directory and
 * renames it into place only after 0. Any thread; a read-only engine
 * does. */
int engine_carry_export(struct engine *e, const char *item, const char *dir, char *err,
			size_t errlen);

/*
 * Importing a carry, in three steps around the CLI's copy of the documents:
 *
 * engine_carry_open reads and checks dir's carry before anything is stored:
 * the manifest's format, each log's sha256 against the manifest and against
 * the log_sha256 of the registry lines of its run, the registry's sha256,
 * and the bundle (it holds the head, the repository has every commit it
 * starts from, its history meets the configured base; an empty bundle,
 * or one whose sha256 is not the manifest's bundle_sha256, is refused
 * before git sees it); it stores the bundle's objects in the repository
 * and moves no ref. 0 with *out; else a negative errno, nothing stored in
 * the store, and the reason in err: -ENOENT (no manifest: "not a packetfs
 * export (no .packetfs/export.json): ...", saying whether dir is a folder
 * of plain files or what an unfinished export left; a log or the bundle
 * missing, a bundle without the head), -EPROTO (a format this packetfs
 * does not read), -EINVAL (a manifest or registry line that does not
 * parse, a log, registry or bundle whose hash does not match, an empty
 * bundle), -EXDEV (a bundle of another project), -EACCES (git refused
 * another user's repository).
 *
 * engine_carry_item makes the item name at the carried head (its branch
 * and worktree there), then restores every run with its log, and the
 * registry byte for byte: a registry line counts as evidence here only
 * when its run and log came with it, its log_sha256 is its log's, and it
 * ran at the carried head; every other engine line is kept with source
 * "imported" (store_carry_line) and never counts. A run still going when
 * exported is restored as interrupted. mode and who: as engine_mkdir's.
 * 0, or a negative errno (-EEXIST: the name is taken) with err.
 *
 * engine_carry_finish, after the documents were copied in, sets the item's
 * stage, state, iteration, title and last error as they were, and reads
 * the verdict of change-validation.md and the assessment of review.md as
 * the engine reads them when their stage ends, each bound to the head it
 * was made at there (the manifest's verdict_head, assessment_head) when
 * the document still says what it said, else to no head (stale). An item
 * that was running is restored failed, saying so. 0 or a negative errno.
 *
 * engine_carry_free frees c (NULL is allowed). Not for read-only engines;
 * one thread at a time per carry.
 */
struct engine_carry;
/* What engine_carry_describe tells of a carry. */
struct engine_carry_about {
	char item[65];      /* the item it was exported from ("" when the manifest's
			       name is no item name) */
	char head[41];      /* its head commit */
	size_t runs;        /* runs that came with it */
	int lines_counted;  /* registry lines restored as engine lines (after
			       engine_carry_item), */
	int lines_imported; /* and with source "imported" */
};
int engine_carry_open(struct engine *e, const char *dir, struct engine_carry **out, char *err,
		      size_t errlen);
int engine_carry_item(struct engine *e, struct engine_carry *c, const char *name, mode_t mode,
		      const struct pfs_caller *who, char *err, size_t errlen);
int engine_carry_finish(struct engine *e, struct engine_carry *c, const char *name, char *err,
			size_t errlen);
/* Fills *out from c (opened by engine_carry_open). Any thread that owns c. */
void engine_carry_describe(const struct engine_carry *c, struct engine_carry_about *out);
void engine_carry_free(struct engine_carry *c);

/*
 * Runs argv[0] (found on PATH, no shell; argv NULL-terminated) to its end:
 * the CLI's helper programs (fusermount3). No engine is needed. stdin is
 * /dev/null; the program runs in a process group of its own, which is
 * killed (SIGKILL) past timeout_ms milliseconds; its stdout is captured
 * (at most 64 KiB kept) and, unless quiet, written to this process's
 * stdout once it ended; its stderr is this process's, or /dev/null when
 * quiet. Returns its exit status (0-255; 128 + N when signal N ended it),
 * or a negative errno: -ENOENT (not on PATH), -ETIMEDOUT (killed at the
 * deadline), -ENOMEM, or another of its start. Any thread; blocks the
 * caller for at most about timeout_ms.
 */
int engine_run_program(char *const *argv, int timeout_ms, int quiet);

#endif
