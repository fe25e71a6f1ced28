/*
 * fs_int.h - what the FUSE front end's files share: fs.c (the life of a
 * mount: daemon, session, loop, teardown), fs_cache.c (what the kernel may
 * cache and for how long, and the invalidations that keep it exact),
 * fs_ops.c (the operations on names and attributes, and the table of
 * operations), fs_ops_file.c (open files), fs_ops_dir.c (directory
 * listings) and fs_io.c (the session's reads and writes of /dev/fuse). Not
 * for the rest of packetfs: fs.h is the contract.
 *
 * Threads. Every function here may be called from any FUSE worker thread
 * unless it says otherwise. No request handler calls a FUSE notify
 * function (see fs.c, DESIGN): the only ones that do are fs__wake_polls
 * (notifier thread) and fs__changed, whose attribute-only invalidation
 * cannot deadlock and is never sent for what a handler reports (see
 * fs_cache.c). Errors are negative errno values; the handlers flip the
 * sign when they reply.
 *
 * Locks: fs.open_lock protects the list of open files, each one's poll
 * handle and its count of users; it is never held while the engine is
 * called, or a notification sent. fs__open_flush and fs__open_getattr count
 * themselves as users of an open file while they call the engine on it
 * without the lock, and a release waits on fs.open_idle until the count
 * is 0 before it unlists the file. The engine's handle has a lock of its
 * own for its state (engine.h).
 */
#ifndef PACKETFS_FS_INT_H
#define PACKETFS_FS_INT_H

#include <pthread.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

#include "engine.h"
#include "inode.h"
#include "notify.h"

/* A user's membership of the store's group, as the group database gave it
 * (fs_team.c). */
#define TEAM_SLOTS 64
struct team_slot {
	uid_t uid;
	int member;
	int64_t expires_ns; /* CLOCK_MONOTONIC; 0: empty */
};

/* The state of a mount, shared by every request (fuse_req_userdata);
 * lives in serve()'s frame for as long as the session. */
struct fs {
	struct engine *engine;
	struct inode_table *inodes;
	const char *store; /* for statfs */
	int shared;        /* mounted with -o allow_other (fs_team.c) */
	struct fuse_session *se;
	struct notifier *notifier; /* replays the engine's own changes (notify.h) */
	uint64_t changes;          /* atomic: changes reported by the engine (fs__changed) and
				    * namespace changes begun or ended (fs__ns_change_begin) */
	uint64_t moving;           /* atomic: namespace changes in progress (fs__ns_change_begin) */
	pthread_rwlock_t ns_lock;  /* written across a namespace change (fs__ns_change_begin to
				    * end), read across an open's path-to-file resolution
				    * (fs__ns_open_begin to end); prefers writers */
	pthread_mutex_t open_lock;
	pthread_cond_t open_idle; /* with open_lock: an open file's users dropped to 0 */
	uint64_t creating;        /* atomic: creates between reading the new file's attributes
				   * and replying (fs_ops_file.c "Creates") */
	uint64_t created_cached;  /* atomic: open files whose create reply let the kernel cache
				   * their attributes (open_file.created_cached) */
	struct open_file *open;   /* protected by open_lock */
	struct {
		uid_t owner;            /* constant: the store owner (engine_team) */
		gid_t group;            /* constant: the store's group */
		pthread_mutex_t lock;
		struct team_slot slots[TEAM_SLOTS]; /* protected by lock; by uid */
	} team;                         /* fs_team.c */
};

/* An open file: what fi->fh points to. Open files are listed so that an
 * inode whose path was unlinked still has attributes (fstat after unlink). */
struct open_file {
	struct pfs_file *f;        /* constant */
	uint64_t ino;              /* constant */
	struct fuse_pollhandle *ph; /* protected by fs.open_lock: a poll waiting for a change */
	int users;                 /* protected by fs.open_lock: fs__open_flush and
				    * fs__open_getattr calls on f under way */
	int releasing;             /* protected by fs.open_lock: its release waits for the
				    * users to end; no new one starts */
	int created_cached;        /* protected by fs.open_lock: the create reply let the
				    * kernel cache the attributes of the document it made,
				    * until a commit of it through this handle
				    * (fs_ops_file.c "Creates") */
	struct open_file *prev;    /* protected by fs.open_lock */
	struct open_file *next;    /* protected by fs.open_lock */
};

/* The mount a request belongs to. */
static inline struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* The uid, gid and pid of the process that made req, into *who. */
static inline void caller_of(fuse_req_t req, struct pfs_caller *who)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	who->uid = c->uid;
	who->gid = c->gid;
	who->pid = c->pid;
}

/* The engine's file of a handle fi that fs_ops_file.c opened (not
 * NOTIFY_FH); it stays owned by the open file. */
static inline struct pfs_file *file_of(const struct fuse_file_info *fi)
{
	return ((struct open_file *)(uintptr_t)fi->fh)->f;
}

/* ---- fs_cache.c: the caching rules ---- */

/* The number of changes counted so far, to take before attributes are
 * asked of the engine and hand to fs__fill_entry or fs__reply_attr as
 * seen: UINT64_MAX (never a count) while a namespace change is under way. */
uint64_t fs__change_count(struct fs *fs);
/* Bracket a rename, unlink, rmdir or link through the mount, from before
 * the engine is asked until the inode table has followed (inode_rename,
 * inode_unlink): attributes asked in between are not cached, and no open
 * resolves an inode to a file meanwhile (fs__ns_open_begin waits). Every
 * begin has exactly one end, on the same thread; they do not nest. */
void fs__ns_change_begin(struct fs *fs);
void fs__ns_change_end(struct fs *fs);
/* Bracket an open's resolution of an inode to the engine's file (its path,
 * then engine_file_open), so that it sees the names of the engine and of
 * the inode table agree: a rename over a document changes the engine
 * before the table, and an open of the replaced inode in between would
 * give it the new document's content, mixing two versions in the one page
 * cache of that inode. Shared among opens; waits while a namespace change
 * is under way. Every begin has exactly one end, on the same thread; not
 * nested, and not taken by the notifier's requests. */
void fs__ns_open_begin(struct fs *fs);
void fs__ns_open_end(struct fs *fs);
/* Fills e for handing ino (already referenced in the inode table by the
 * caller) to the kernel with the attributes ps, asked of the engine after
 * fs__change_count gave seen: the entry timeout, and the attribute timeout
 * the rules give (marking ino cached when it is not 0). Also records
 * whether ino is a leaf (inode_set_leaf). Cannot fail. */
void fs__fill_entry(fuse_req_t req, uint64_t ino, const struct pfs_stat *ps, uint64_t seen,
		    struct fuse_entry_param *e);
/* Replies to req with the attributes ps of ino, asked of the engine after
 * fs__change_count gave seen, under the attribute timeout the rules give. */
void fs__reply_attr(fuse_req_t req, fuse_ino_t ino, const struct pfs_stat *ps, uint64_t seen);
/* Sets the page-cache flags of a handle opened on f (direct_io, keep_cache,
 * noflush) in fi. */
void fs__cache_open(struct fuse_file_info *fi, struct pfs_file *f);
/* The engine's change hook (an engine_change_fn, given to engine_watch;
 * arg is the struct fs): counts the change, drops the kernel's cached
 * attributes of what changed and queues it for the notifier. Any engine
 * thread, possibly with engine locks held. */
void fs__changed(void *arg, const char *path, enum engine_change what);
/* Whether a lookup of name (path, joined to its directory's) that finds
 * nothing may be kept by the kernel as far as the front end goes (not a
 * shared mount, not the notifier's, not . or .., below an item's own
 * directory): then engine_lookup is asked whether the engine allows it.
 * Any request thread. */
int fs__miss_may_keep(fuse_req_t req, const char *name, const char *path);
/* Replies to req, a lookup that the engine answered -ENOENT after
 * fs__change_count gave seen: with a negative entry the kernel keeps when
 * keepable (engine_lookup) and no change was counted since, else with
 * ENOENT (fs_cache.c "Negative entries"). Any request thread. */
void fs__reply_missing(fuse_req_t req, int keepable, uint64_t seen);
/* Drops the kernel's attributes of the inode at path when a reply let it
 * cache them: for a change through the mount that the kernel does not
 * connect to that inode (link(2) of its file, under another inode). Any
 * thread; the notification takes no lock a request holds (see Caching). */
void fs__drop_attrs(struct fs *fs, const char *path);
/* Drops the kernel's attributes of ino: a commit of a document whose
 * create reply let the kernel cache them moved its times (fs_ops_file.c).
 * Any thread, as fs__drop_attrs. */
void fs__drop_ino_attrs(struct fs *fs, uint64_t ino);

/* Whether the kernel may cache the listing of directory ino, whose
 * attributes ps were just asked of the engine (fs_cache.c "Listings");
 * when it may, ino is marked cached first, so that fs__changed drops the
 * listing at a change. */
int fs__cache_listing(fuse_req_t req, fuse_ino_t ino, const struct pfs_stat *ps);
/* Drops the kernel's cached listing (and attributes) of directory ino.
 * Any thread: a directory has no dirty pages to wait for. */
void fs__drop_listing(struct fs *fs, fuse_ino_t ino);

/* ---- fs_team.c: who may use the mount ---- */

/* The operations the session is made with (fuse_session_new): those of
 * fs__handlers behind fs__admit. */
extern const struct fuse_lowlevel_ops fs__ops;
/* Reads the store owner and the store's group of fs->engine. Call once,
 * before the session serves. */
void fs__team_init(struct fs *fs);
/* Whether req comes from root, the store owner or a member of the store's
 * group: 1; else replies EACCES to req and returns 0. */
int fs__admit(fuse_req_t req);
/* Whether the process that made req is in group gid (its filesystem gid,
 * or one of its supplementary groups): 1 or 0. */
int fs__in_group(fuse_req_t req, gid_t gid);

/* ---- fs_ops.c: names, attributes, and the table of operations ---- */

/* Every operation's handler, none of them gated (fs__ops is). */
extern const struct fuse_lowlevel_ops fs__handlers;
/* The path of ino in *out (caller frees): -ESTALE for an inode without a
 * path (replaced by a rename or unlinked), -ENOMEM. */
int fs__path_of(struct fs *fs, uint64_t ino, char **out);
/* The path of name in the directory parent in *out (caller frees); "." and
 * ".." are resolved. -ENOENT for an unknown parent, -ENAMETOOLONG, -ENOMEM. */
int fs__child_path(struct fs *fs, fuse_ino_t parent, const char *name, char **out);
/* Logs a refusal of the engine's own (r: -EACCES, -EPERM; other results
 * are not logged here) of the request op on path (may be NULL) with its
 * reason. Any thread. */
void fs__refused(const char *op, const char *path, int r);
/* "/a" + "b" -> "/a/b"; "/" + "b" -> "/b" in *out (caller frees).
 * -ENAMETOOLONG for a name longer than NAME_MAX, -ENOMEM. */
int fs__join(const char *dir, const char *name, char **out);
/* The parent directory of a normalised path in *out (caller frees): "/"
 * for "/a" and for "/". 0 or -ENOMEM. */
int fs__parent_of(const char *path, char **out);
/* When req comes from the notifier, makes ps, the attributes anyone would
 * be told, what it is told: the owner's write bit added once it needs one
 * (notifier_write_bit; symbolic links excepted), and then not stable
 * (never cached). Any request thread. */
void fs__notifier_attrs(fuse_req_t req, struct pfs_stat *ps);

/* ---- fs_ops_file.c: open files ---- */

/* The notifier replayed a change of path (a notifier wake callback; arg is
 * the struct fs): wakes the polls waiting on it. Notifier thread only. */
void fs__wake_polls(void *arg, const char *path);
/* Commits what is pending in the open documents of ino (views left alone).
 * 0 or the first failure's negative errno. Takes fs.open_lock, but not
 * across the commits. */
int fs__open_flush(struct fs *fs, uint64_t ino, const struct pfs_caller *who);
/* Attributes of ino through any of its open files into ps: 0, -ENOENT when
 * none is open, or the engine's error. Takes fs.open_lock, but not across
 * the engine's call. */
int fs__open_getattr(struct fs *fs, uint64_t ino, struct pfs_stat *ps);
/* The file handlers of fs__ops (struct fuse_lowlevel_ops). */
void fs__op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs__op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi);
void fs__op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
void fs__op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		  struct fuse_file_info *fi);
void fs__op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		      struct fuse_file_info *fi);
void fs__op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs__op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs__op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fs__op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		 struct fuse_pollhandle *ph);

/* ---- fs_io.c: the session's reads and writes of /dev/fuse ---- */

/* Routes the reads and writes of se's /dev/fuse through fs_io.c's (after
 * fuse_session_mount, before the loop), so that the INIT reply asks for
 * FUSE_HANDLE_KILLPRIV_V2 when the kernel offers it, and, with ring 1, for
 * FUSE over io_uring (fs_ring.c starts the rings once the kernel has the
 * reply). 0 or a negative errno (fuse_session_custom_io's; the session
 * then goes on without either). On the mounting thread. */
int fs__io_install(struct fuse_session *se, int ring);
/* Notes what the request at buf (n bytes, as read(2) of /dev/fuse gives
 * it) means for the calling thread's handler: the INIT's flags, and
 * whether a WRITE, SETATTR or OPEN asks that the set-user-ID and
 * set-group-ID bits be cleared (fs__io_kill_suidgid). On the thread that
 * is about to process it. */
void fs__io_note_request(const void *buf, size_t n);
/* Whether the session agreed FUSE_HANDLE_KILLPRIV_V2: the kernel then
 * leaves the clearing of the set-user-ID and set-group-ID bits on write,
 * truncate, O_TRUNC open and chown to packetfs. */
int fs__io_killpriv(void);
/* Whether the request the calling worker thread serves (a WRITE, SETATTR
 * or OPEN) asks that those bits be cleared: 1 or 0. */
int fs__io_kill_suidgid(void);

/* ---- fs_ring.c: FUSE over io_uring ---- */

/* Makes the rings of se, before the INIT reply asks for them:
 * RING_THREADS threads per possible CPU, each with one entry whose payload
 * buffer holds payload_sz bytes (the kernel's least: fs_io.c's
 * ring_payload), its registration prepared and its thread waiting for
 * fs__ring_go. 0, or a negative errno (memory, io_uring_setup, eventfd,
 * threads) with nothing left made: the reply must then not ask. Called
 * once, by fs_io.c, on the thread that writes the INIT reply. */
int fs__ring_prepare(struct fuse_session *se, size_t payload_sz);
/* After the INIT reply: go 1 (the kernel took it) lets the threads
 * register their entries and serve; go 0 (it was not written) ends them.
 * Same thread as fs__ring_prepare. */
void fs__ring_go(int go);
/* Takes the reply iov[0..count) (a fuse_out_header, then its arguments)
 * into the ring entry the calling thread serves, when it answers that
 * entry's request: 1, and the entry's next fetch commits it; else 0, and
 * the reply goes to /dev/fuse. Any thread. */
int fs__ring_reply(const struct iovec *iov, int count);
/* Ends every ring thread, logs how many requests the rings served, and
 * frees them; after the mount is gone (fuse_session_unmount) and before
 * the engine closes. Safe when no ring was started. On the mounting
 * thread. */
void fs__ring_stop(void);

/* ---- fs_ops_dir.c: directory listings ---- */

/* The extended attribute handlers of fs__ops (fs_ops_xattr.c). */
void fs__op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void fs__op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags);
void fs__op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void fs__op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);
/* The directory handlers of fs__ops (struct fuse_lowlevel_ops). */
void fs__op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs__op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void fs__op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi);
void fs__op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
