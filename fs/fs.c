/*
 * fs.c - the FUSE front end: libfuse low-level operations over the engine,
 * and the life of a mount.
 *
 * DESIGN
 *
 * Threads. The FUSE session loop runs multithreaded (fuse_session_loop_mt)
 * on the main thread of the mount process; each request is handled on one
 * of its worker threads, which calls the engine directly (every engine
 * function may be called from any thread). The engine runs its pipeline on
 * a libuv loop thread of its own, started by engine_start(); SIGINT,
 * SIGTERM and SIGHUP are blocked while it is created so that only FUSE
 * threads take them (libfuse's handlers end the session loop). No request
 * handler calls a FUSE notify function: a notification sent from inside a
 * handler can deadlock against the kernel, which holds locks until the
 * reply. The engine makes its own changes visible from its own threads
 * (fs_changed, the notifier and the poll wake-ups below).
 *
 * Inodes. The engine is addressed by path; the inode table (inode.c) maps
 * the kernel's inode numbers to paths, counts lookups and is re-keyed on
 * rename and unlink. Every reply that hands an inode to the kernel adds one
 * lookup, and takes it back when the reply fails (an interrupted request).
 *
 * Caching. The kernel keeps every entry (name -> inode) for CACHE_TTL, and
 * the attributes the engine calls stable (struct pfs_stat: documents not
 * held open, document and item directories without a document created
 * open and not stored yet, the root and the fixed directories that have no
 * item, an item's stages/, validation/, validation/logs/ and .history/,
 * whose times follow the item's updated time, sealed logs) for as long;
 * every other reply - views, logs still growing, the subdirectories of
 * .history, the worktree link, anything told to the notifier - has an
 * attribute timeout of 0, so the kernel asks again each time. Negative
 * entries are never cached (a miss is answered with ENOENT, not an entry
 * with inode 0). Exactness rests on these rules:
 *  - Every change made through the mount is seen by the kernel, which drops
 *    what it holds itself (the parent directory on create, unlink, rename,
 *    mkdir and rmdir; the inode on write, truncate and setattr, whose reply
 *    carries the new attributes). Its side effects the kernel does not see
 *    (status, evidence.md, events, registry.jsonl, .history) are all in
 *    replies with timeout 0; a document's first commit at close moves its
 *    directory's times again, which is why a directory holding a document
 *    created open is not stable until that commit.
 *  - Every change the engine makes on its own is reported to fs_changed
 *    (engine_watch), which drops at once, before the engine goes on, the
 *    attributes of the changed file, of the directory of a new file, of
 *    an archived item's directory and of the fixed directories of an item
 *    whose row was written (ENGINE_TIMES), with an attribute-only
 *    fuse_lowlevel_notify_inval_inode. That notification takes no lock a
 *    request may hold (the kernel bumps the inode's attribute version and
 *    clears its timeout under the inode's spinlock, nothing else), so it
 *    cannot deadlock; and it is only sent for inodes a reply let the kernel
 *    cache (inode_set_cached). Those are reported by the engine's loop
 *    thread only (a document it writes, the directory of a file it creates,
 *    an archived item, an item row written); views are never marked, so the reports made inside
 *    request handlers (a registry append changes evidence.md and events)
 *    send no notification.
 *  - A reply races with a change: attr_ttl marks the inode before it looks
 *    whether fs_changed counted a change since the attributes were asked
 *    of the engine, and gives 0 if so; a change after that finds the mark
 *    and invalidates, and the kernel drops a reply older than an
 *    invalidation by its attribute version. A rename, unlink or rmdir
 *    through the mount counts too, for the span in which a path already
 *    names another document than its inode's (ns_change_begin): a lookup
 *    that revalidates a dentry takes no directory lock, so the kernel does
 *    not keep it out of that span.
 *  - An entry the engine removes (an archived item) stays in the kernel
 *    until the notifier replays its rmdir, but its attributes were dropped:
 *    every use of the name asks the daemon, which answers ENOENT.
 * readdirplus replies carry only entries of stable kinds as lookups, stat-ed
 * when the reply is made (the listing snapshot has names and types only,
 * engine_list); the others go without attributes, and the kernel looks
 * them up when they are used. Views and growing logs are opened with
 * direct_io (engine_file_direct()); documents go through the page cache
 * without keep_cache, so shared mmap reads work and each open sees the
 * current content; a sealed log never changes and keeps its pages across
 * opens (engine_file_immutable()). Handles opened only to read anything but
 * a document are opened with noflush (engine_file_flushes()): their flush
 * does nothing.
 *
 * Handles. fi->fh holds a struct open_file * (the engine's struct
 * pfs_file, listed per inode so that fstat works after unlink) for files
 * and a struct dir_handle * for directories. A directory listing is snapshotted
 * at opendir (and again when a handle is rewound to offset 0 after being
 * read); readdir offsets are indices into the snapshot, "." and ".." first.
 *
 * Left to the kernel on purpose: locks (getlk/setlk/flock), so the kernel
 * does fcntl and flock locking locally, which is correct on a single host;
 * access, which default_permissions makes the kernel answer; and the xattr
 * operations: libfuse answers ENOSYS, after which the kernel answers every
 * xattr call with EOPNOTSUPP (ENOTSUP) itself, without a round trip for the
 * security.capability check it makes before each write.
 *
 * Teardown. When the loop ends, the mount is taken down before the engine
 * is closed: closing the FUSE device aborts the connection, so anything
 * still touching the mount (stage programs being cancelled, the engine's
 * own writes through it) fails at once instead of waiting for a server
 * that no longer answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <linux/close_range.h>

#include "engine.h"
#include "fs.h"
#include "inode.h"
#include "notify.h"

/* The inode number readdir reports for entries the table does not know. */
#define UNKNOWN_INO 0xffffffffu
#define MAX_WRITE (1u << 20)
/* Seconds the kernel may keep an entry, and the attributes the engine calls
 * stable: a bound only, every change to them is invalidated (see Caching). */
#define CACHE_TTL 3600.0

struct fs {
	struct engine *engine;
	struct inode_table *inodes;
	const char *store; /* for statfs */
	struct fuse_session *se;
	struct notifier *notifier; /* replays the engine's own changes (notify.h) */
	uint64_t changes;          /* atomic: changes reported by the engine (fs_changed) and
				    * namespace changes begun or ended (ns_change_begin) */
	uint64_t moving;           /* atomic: namespace changes in progress (ns_change_begin) */
	pthread_mutex_t open_lock;
	struct open_file *open; /* protected by open_lock */
};

/* An open file: what fi->fh points to. Open files are listed so that an
 * inode whose path was unlinked still has attributes (fstat after unlink). */
struct open_file {
	struct pfs_file *f;        /* constant */
	uint64_t ino;              /* constant */
	struct fuse_pollhandle *ph; /* protected by fs.open_lock: a poll waiting for a change */
	struct open_file *prev;    /* protected by fs.open_lock */
	struct open_file *next;    /* protected by fs.open_lock */
};

struct dir_entry {
	char *name;
	struct pfs_stat st;
};

struct dir_handle {
	pthread_mutex_t lock;
	char *path;             /* constant */
	struct dir_entry *ents; /* protected by lock; "." and ".." first */
	size_t n;               /* protected by lock */
	size_t cap;             /* protected by lock */
	int was_read;           /* protected by lock */
};

static struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void caller_of(fuse_req_t req, struct pfs_caller *who)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	who->uid = c->uid;
	who->gid = c->gid;
	who->pid = c->pid;
}

static struct pfs_file *file_of(const struct fuse_file_info *fi)
{
	return ((struct open_file *)(uintptr_t)fi->fh)->f;
}

/* Lists f as open on ino and points fi at it. Returns 0 or -ENOMEM. */
static int open_add(struct fs *fs, uint64_t ino, struct pfs_file *f, struct fuse_file_info *fi)
{
	struct open_file *of = calloc(1, sizeof(*of));

	if (of == NULL)
		return -ENOMEM;
	of->f = f;
	of->ino = ino;
	pthread_mutex_lock(&fs->open_lock);
	of->next = fs->open;
	if (fs->open)
		fs->open->prev = of;
	fs->open = of;
	pthread_mutex_unlock(&fs->open_lock);
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->direct_io = engine_file_direct(f) ? 1 : 0;
	fi->keep_cache = engine_file_immutable(f) ? 1 : 0;
	fi->noflush = engine_file_flushes(f) ? 0 : 1;
	return 0;
}

/* Unlists and releases the open file of fi. */
static void open_release(struct fs *fs, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

	pthread_mutex_lock(&fs->open_lock);
	if (of->prev)
		of->prev->next = of->next;
	else
		fs->open = of->next;
	if (of->next)
		of->next->prev = of->prev;
	pthread_mutex_unlock(&fs->open_lock);
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	engine_file_release(of->f);
	free(of);
}

/* The notifier replayed a change of path: wakes the polls waiting on it.
 * Runs on the notifier thread (never in a request handler, where a
 * notification could deadlock against the kernel). */
static void wake_polls(void *arg, const char *path)
{
	struct fs *fs = arg;
	struct fuse_pollhandle *ph[64];
	struct open_file *of;
	uint64_t ino = inode_peek(fs->inodes, path);
	size_t n = 0, i;

	if (ino == 0)
		return;
	/* In rounds of at most 64 handles, each taken off its file, until
	 * none is left. */
	do {
		n = 0;
		pthread_mutex_lock(&fs->open_lock);
		for (of = fs->open; of && n < sizeof(ph) / sizeof(ph[0]); of = of->next) {
			if (of->ino == ino && of->ph) {
				ph[n++] = of->ph;
				of->ph = NULL;
			}
		}
		pthread_mutex_unlock(&fs->open_lock);
		for (i = 0; i < n; i++) {
			fuse_lowlevel_notify_poll(ph[i]);
			fuse_pollhandle_destroy(ph[i]);
		}
	} while (n == sizeof(ph) / sizeof(ph[0]));
}

/*
 * Commits what is pending in the open documents of ino. cp -a, tar and
 * rsync write, set the times (futimens, which carries no file handle) and
 * only then close: without this, the commit at close would stamp the time
 * of the close over the one they set. Views are left alone: their flush
 * has effects of its own (a ctl command).
 */
static int open_flush(struct fs *fs, uint64_t ino, const struct pfs_caller *who)
{
	struct open_file *of;
	int r = 0;

	pthread_mutex_lock(&fs->open_lock);
	for (of = fs->open; of && r == 0; of = of->next) {
		if (of->ino == ino && !engine_file_direct(of->f))
			r = engine_file_flush(of->f, who);
	}
	pthread_mutex_unlock(&fs->open_lock);
	return r;
}

/* Attributes of ino through any of its open files: -ENOENT when none. */
static int open_getattr(struct fs *fs, uint64_t ino, struct pfs_stat *ps)
{
	struct open_file *of;
	int r = -ENOENT;

	pthread_mutex_lock(&fs->open_lock);
	for (of = fs->open; of; of = of->next) {
		if (of->ino == ino) {
			r = engine_file_getattr(of->f, ps);
			break;
		}
	}
	pthread_mutex_unlock(&fs->open_lock);
	return r;
}

static struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += 1000000000;
	}
	return ts;
}

static void to_stat(const struct pfs_stat *ps, uint64_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = ps->mode;
	st->st_nlink = ps->nlink ? ps->nlink : 1;
	st->st_uid = ps->uid;
	st->st_gid = ps->gid;
	st->st_size = (off_t)ps->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((ps->size + 511) / 512);
	st->st_mtim = ns_to_ts(ps->mtime_ns);
	st->st_atim = ns_to_ts(ps->atime_ns ? ps->atime_ns : ps->mtime_ns);
	st->st_ctim = ns_to_ts(ps->ctime_ns);
}

/* The number of changes the engine reported so far: taken before
 * attributes are asked of the engine, for attr_ttl. */
static uint64_t change_count(struct fs *fs)
{
	uint64_t c = __atomic_load_n(&fs->changes, __ATOMIC_SEQ_CST);

	/* Mid-rename, a path may name the document its inode no longer is:
	 * nothing asked now is cached (UINT64_MAX is never a count). */
	return __atomic_load_n(&fs->moving, __ATOMIC_SEQ_CST) ? UINT64_MAX : c;
}

/*
 * A rename, unlink or rmdir through the mount changes what a path names in
 * the engine before the inode table follows (inode_rename, inode_unlink):
 * in between, attributes asked by path (a lookup that revalidates a
 * dentry, a getattr) may be another document's, or be handed over under
 * the wrong inode. ns_change_begin and ns_change_end bracket that span, so
 * that attr_ttl gives 0 to whatever was asked during it.
 */
static void ns_change_begin(struct fs *fs)
{
	__atomic_add_fetch(&fs->moving, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
}

static void ns_change_end(struct fs *fs)
{
	__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&fs->moving, 1, __ATOMIC_SEQ_CST);
}

/*
 * How long the kernel may keep the attributes ps of ino, asked of the
 * engine after change_count gave seen: 0 unless they are stable. A stable
 * inode is marked first (inode_set_cached), so that fs_changed invalidates
 * it from then on; a change reported since seen may have been missed by
 * that (it looked before the mark) and gives 0. The notifier is told its
 * own mode (notifier_mode): never cached.
 */
static double attr_ttl(fuse_req_t req, uint64_t ino, const struct pfs_stat *ps, uint64_t seen)
{
	struct fs *fs = fs_of(req);

	if (!ps->stable || notifier_is_self(fs->notifier, req))
		return 0.0;
	inode_set_cached(fs->inodes, ino);
	return change_count(fs) == seen ? CACHE_TTL : 0.0;
}

static void fill_entry(fuse_req_t req, uint64_t ino, const struct pfs_stat *ps, uint64_t seen,
		       struct fuse_entry_param *e)
{
	struct fs *fs = fs_of(req);

	memset(e, 0, sizeof(*e));
	e->ino = ino;
	e->generation = inode_generation(fs->inodes);
	to_stat(ps, ino, &e->attr);
	e->attr_timeout = attr_ttl(req, ino, ps, seen);
	e->entry_timeout = CACHE_TTL;
	inode_set_leaf(fs->inodes, ino, !S_ISDIR(ps->mode));
}

/*
 * The path of ino (caller frees *out). An inode without a path was replaced
 * by a rename or unlinked after the kernel looked it up: -ESTALE, on which
 * the VFS looks the name up once more and retries open, stat, chmod...
 * (an open racing a rename-over then opens the new file, as on a local
 * disk, instead of failing with ENOENT).
 */
static int path_of(struct fs *fs, uint64_t ino, char **out)
{
	int r = inode_path(fs->inodes, ino, out);

	return r == -ENOENT ? -ESTALE : r;
}

/* "/a" + "b" -> "/a/b"; "/" + "b" -> "/b". Caller frees *out. */
static int join(const char *dir, const char *name, char **out)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p;

	if (nl > NAME_MAX)
		return -ENAMETOOLONG;
	p = malloc(dl + nl + 2);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, dir, dl);
	if (dl > 1)
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	*out = p;
	return 0;
}

/* The parent directory of a normalised path ("/" for "/a" and for "/"). */
static int parent_of(const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash && slash != path ? (size_t)(slash - path) : 1;

	*out = strndup(path, len);
	return *out ? 0 : -ENOMEM;
}

/* Drops the kernel's attributes of path when a reply let it cache them. */
static void invalidate_attrs(struct fs *fs, const char *path)
{
	uint64_t ino = inode_peek_cached(fs->inodes, path);

	if (ino)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
}

/*
 * The engine's change hook (an engine_change_fn; arg is the struct fs): a
 * change the engine made on its own. Counts it (attr_ttl), drops at once
 * the attributes the kernel may hold of what changed: the file itself (a
 * document the engine wrote), the directory of a new file (its times
 * moved) and an archived item's directory (it no longer exists); then
 * queues the change for the notifier, which replays it for inotify and
 * poll(2). Any engine thread, possibly with engine locks held: the only
 * notification sent is the attribute-only inode invalidation, which takes
 * no lock a request holds, and only for inodes whose attributes a reply
 * let the kernel cache (see Caching: never views or growing logs, the only
 * files reported from inside request handlers).
 */
static void fs_changed(void *arg, const char *path, enum engine_change what)
{
	struct fs *fs = arg;
	char *parent;

	__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
	invalidate_attrs(fs, path);
	if (what == ENGINE_CREATED && parent_of(path, &parent) == 0) {
		invalidate_attrs(fs, parent);
		free(parent);
	}
	if (what != ENGINE_TIMES)
		notifier_changed(fs->notifier, path, what);
}

/* The path of name in the directory parent. Caller frees *out. */
static int child_path(struct fs *fs, fuse_ino_t parent, const char *name, char **out)
{
	char *dir;
	int r = inode_path(fs->inodes, parent, &dir);

	if (r < 0)
		return r;
	if (strcmp(name, ".") == 0) {
		*out = dir;
		return 0;
	}
	if (strcmp(name, "..") == 0)
		r = parent_of(dir, out);
	else
		r = join(dir, name, out);
	free(dir);
	return r;
}

/* Hands the inode of path to the kernel as a lookup reply; ps was asked of
 * the engine after change_count gave seen. */
static void reply_entry(fuse_req_t req, const char *path, const struct pfs_stat *ps,
			uint64_t seen)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;
	uint64_t ino;
	int r = inode_ref(fs->inodes, path, &ino);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fill_entry(req, ino, ps, seen, &e);
	if (fuse_reply_entry(req, &e) != 0)
		inode_forget(fs->inodes, ino, 1);
}

static void reply_attr(fuse_req_t req, fuse_ino_t ino, const struct pfs_stat *ps, uint64_t seen)
{
	struct stat st;

	to_stat(ps, ino, &st);
	fuse_reply_attr(req, &st, attr_ttl(req, ino, ps, seen));
}

/* The notifier opens views for writing to replay changes: under
 * default_permissions the kernel checks the mode it is told, so the
 * notifier alone is told the owner may write. */
static void notifier_mode(fuse_req_t req, struct pfs_stat *ps)
{
	if (!S_ISLNK(ps->mode) && notifier_is_self(fs_of(req)->notifier, req))
		ps->mode |= S_IWUSR;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* libfuse lowers this to what its buffers hold; the kernel then
	 * also allows reads of that size (max_pages). */
	conn->max_write = MAX_WRITE;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	uint64_t seen = change_count(fs);
	struct pfs_stat ps;
	char *path, as[PATH_MAX];
	int r = child_path(fs, parent, name, &path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	switch (notifier_lookup(fs->notifier, req, path, as, sizeof(as))) {
	case NOTIFY_HIDE:
		r = -ENOENT;
		break;
	case NOTIFY_REVEAL:
		r = engine_getattr(fs->engine, as, &ps);
		break;
	default:
		r = engine_getattr(fs->engine, path, &ps);
		break;
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		notifier_mode(req, &ps);
		reply_entry(req, path, &ps, seen);
	}
	free(path);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_forget(fs_of(req)->inodes, ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fs *fs = fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		inode_forget(fs->inodes, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* Current attributes of ino: through fi when given, else by path, else
 * (the path was unlinked) through any open file of ino. */
static int getattr_of(struct fs *fs, fuse_ino_t ino, struct fuse_file_info *fi,
		      struct pfs_stat *ps)
{
	char *path;
	int r;

	if (fi && fi->fh) {
		r = engine_file_getattr(file_of(fi), ps);
		if (r != -ENOSYS)
			return r;
		/* Views and logs have no attributes of their own handle. */
	}
	r = path_of(fs, ino, &path);
	if (r == 0) {
		r = engine_getattr(fs->engine, path, ps);
		free(path);
	}
	if (r == -ENOENT || r == -ESTALE) {
		int o = open_getattr(fs, ino, ps);

		if (o == 0 || r == -ENOENT)
			r = o;
	}
	return r;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs_stat ps;
	uint64_t seen = change_count(fs_of(req));
	int r = getattr_of(fs_of(req), ino, fi, &ps);

	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		notifier_mode(req, &ps);
		reply_attr(req, ino, &ps, seen);
	}
}

/*
 * The kernel passes fi for any setattr through an open file, directories
 * included, so fi->fh is used only for a size change, which the VFS allows
 * on regular files only.
 */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_stat ps;
	char *path = NULL;
	uint64_t seen;
	int r;

	caller_of(req, &who);
	r = inode_path(fs->inodes, ino, &path);
	if (r < 0 && !(r == -ENOENT && fi && fi->fh))
		goto out;
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		/* chown to the owner it already has is all a local disk allows
		 * an unprivileged user, and everything belongs to the mounting
		 * user. */
		r = getattr_of(fs, ino, fi, &ps);
		if (r < 0)
			goto out;
		if (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != ps.uid) ||
		    ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != ps.gid)) {
			r = -EPERM;
			goto out;
		}
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (fi && fi->fh)
			r = engine_file_truncate(file_of(fi), (uint64_t)attr->st_size, &who);
		else
			r = engine_truncate(fs->engine, path, (uint64_t)attr->st_size, &who);
		if (r < 0)
			goto out;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW |
		      FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW) &&
	    path == NULL) {
		r = -ENOENT;
		goto out;
	}
	if (to_set & FUSE_SET_ATTR_MODE) {
		r = engine_chmod(fs->engine, path, attr->st_mode & 07777);
		if (r < 0)
			goto out;
	}
	/* A time left out (UTIME_OMIT) keeps its stored value. */
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_ATIME |
		      FUSE_SET_ATTR_ATIME_NOW)) {
		int64_t at = PFS_TIME_OMIT, mt = PFS_TIME_OMIT;

		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			at = PFS_TIME_NOW;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			at = (int64_t)attr->st_atim.tv_sec * 1000000000 + attr->st_atim.tv_nsec;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			mt = PFS_TIME_NOW;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			mt = (int64_t)attr->st_mtim.tv_sec * 1000000000 + attr->st_mtim.tv_nsec;
		r = open_flush(fs, ino, &who);
		if (r < 0)
			goto out;
		r = engine_utimens(fs->engine, path, at, mt);
		if (r < 0)
			goto out;
	}
	seen = change_count(fs);
	r = getattr_of(fs, ino, fi, &ps);
out:
	free(path);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_attr(req, ino, &ps, seen);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = fs_of(req);
	char buf[PATH_MAX];
	char *path;
	int r = path_of(fs, ino, &path);

	if (r == 0) {
		r = engine_readlink(fs->engine, path, buf, sizeof(buf));
		free(path);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_readlink(req, buf);
}

/* Creates the empty document path and replies with its entry. */
static void make_node(fuse_req_t req, const char *path, mode_t mode)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_file *f;
	struct pfs_stat ps;
	uint64_t seen = change_count(fs);
	int r;

	caller_of(req, &who);
	r = engine_file_open(fs->engine, path, O_CREAT | O_EXCL | O_WRONLY, mode & 07777, &who,
			     &f);
	if (r < 0)
		goto fail;
	r = engine_file_flush(f, &who);
	if (r == 0)
		r = engine_file_getattr(f, &ps);
	engine_file_release(f);
	if (r < 0)
		goto fail;
	reply_entry(req, path, &ps, seen);
	return;
fail:
	fuse_reply_err(req, -r);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	char *path;
	int r;

	/* Packets hold documents and directories only. */
	if (!S_ISREG(mode)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	r = child_path(fs_of(req), parent, name, &path);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	make_node(req, path, mode);
	free(path);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_stat ps;
	uint64_t seen = change_count(fs);
	char *path;
	int r = child_path(fs, parent, name, &path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	caller_of(req, &who);
	/* The notifier makes an existing directory again (an archived item's):
	 * it is new to the kernel, which tells inotify. */
	if (!notifier_is_self(fs->notifier, req))
		r = engine_mkdir(fs->engine, path, mode & 07777, &who);
	if (r == 0)
		r = engine_getattr(fs->engine, path, &ps);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_entry(req, path, &ps, seen);
	free(path);
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	char *path;
	int r = child_path(fs, parent, name, &path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	caller_of(req, &who);
	ns_change_begin(fs);
	/* The notifier removes what the engine has archived already. */
	if (dir && notifier_is_self(fs->notifier, req))
		r = 0;
	else if (dir)
		r = engine_rmdir(fs->engine, path, &who);
	else
		r = engine_unlink(fs->engine, path, &who);
	if (r == 0)
		inode_unlink(fs->inodes, path);
	ns_change_end(fs);
	free(path);
	fuse_reply_err(req, -r);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 1);
}

/* Symbolic and hard links: packets hold documents and directories only
 * (the worktree link is the engine's own). */
static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EPERM);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	char *from = NULL, *to = NULL;
	int r;

	r = child_path(fs, parent, name, &from);
	if (r == 0)
		r = child_path(fs, newparent, newname, &to);
	if (r == 0) {
		caller_of(req, &who);
		ns_change_begin(fs);
		r = engine_rename(fs->engine, from, to, flags, &who);
		/* inode_rename keeps the table consistent even when it runs out
		 * of memory; the rename itself has happened. */
		if (r == 0)
			inode_rename(fs->inodes, from, to);
		ns_change_end(fs);
	}
	free(from);
	free(to);
	fuse_reply_err(req, -r);
}

/* Opens for the notifier: a handle whose writes change nothing. */
static void notifier_open(fuse_req_t req, struct fuse_file_info *fi)
{
	fi->fh = NOTIFY_FH;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_file *f;
	char *path;
	int r = path_of(fs, ino, &path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (notifier_is_self(fs->notifier, req)) {
		free(path);
		notifier_open(req, fi);
		return;
	}
	caller_of(req, &who);
	r = engine_file_open(fs->engine, path, fi->flags, 0, &who, &f);
	free(path);
	if (r == 0) {
		r = open_add(fs, ino, f, fi);
		if (r < 0)
			engine_file_release(f);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else if (fuse_reply_open(req, fi) != 0)
		open_release(fs, fi);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct pfs_caller who;
	struct pfs_file *f = NULL;
	struct pfs_stat ps;
	uint64_t ino, seen = change_count(fs);
	char *path;
	int r = child_path(fs, parent, name, &path);

	if (r < 0)
		goto fail;
	if (notifier_is_self(fs->notifier, req)) {
		/* The notifier creates an existing file again (see notify.h). */
		r = engine_getattr(fs->engine, path, &ps);
		if (r == 0 && !S_ISREG(ps.mode))
			r = -EISDIR;
		if (r < 0)
			goto fail;
		r = inode_ref(fs->inodes, path, &ino);
		if (r < 0)
			goto fail;
		notifier_mode(req, &ps);
		fill_entry(req, ino, &ps, seen, &e);
		fi->fh = NOTIFY_FH;
		fi->direct_io = 1;
		if (fuse_reply_create(req, &e, fi) != 0)
			inode_forget(fs->inodes, ino, 1);
		free(path);
		return;
	}
	caller_of(req, &who);
	r = engine_file_open(fs->engine, path, fi->flags | O_CREAT, mode & 07777, &who, &f);
	if (r < 0)
		goto fail;
	r = engine_file_getattr(f, &ps);
	if (r < 0)
		goto fail;
	r = inode_ref(fs->inodes, path, &ino);
	if (r < 0)
		goto fail;
	fill_entry(req, ino, &ps, seen, &e);
	r = open_add(fs, ino, f, fi);
	if (r < 0) {
		inode_forget(fs->inodes, ino, 1);
		goto fail;
	}
	if (fuse_reply_create(req, &e, fi) != 0) {
		inode_forget(fs->inodes, ino, 1);
		open_release(fs, fi);
	}
	free(path);
	return;
fail:
	if (f)
		engine_file_release(f);
	free(path);
	fuse_reply_err(req, -r);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	char *buf;
	ssize_t n;

	if (fi->fh == NOTIFY_FH) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	buf = malloc(size ? size : 1);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = engine_file_read(file_of(fi), buf, size, (uint64_t)off);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct pfs_caller who;
	ssize_t n;

	if (fi->fh == NOTIFY_FH) {
		fuse_reply_write(req, size);
		return;
	}
	caller_of(req, &who);
	n = engine_file_write(file_of(fi), buf, size, (uint64_t)off, &who);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pfs_caller who;

	if (fi->fh == NOTIFY_FH) {
		fuse_reply_err(req, 0);
		return;
	}
	caller_of(req, &who);
	fuse_reply_err(req, -engine_file_flush(file_of(fi), &who));
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fi->fh != NOTIFY_FH)
		open_release(fs_of(req), fi);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct pfs_caller who;

	if (fi->fh == NOTIFY_FH) {
		fuse_reply_err(req, 0);
		return;
	}
	caller_of(req, &who);
	fuse_reply_err(req, -engine_file_fsync(file_of(fi), &who));
}

/*
 * poll(2): the readiness the engine reports for the handle. A waiter's
 * handle is kept (replacing an older one) until the notifier replays a
 * change of the file (wake_polls); it is stored before readiness is
 * computed, so that a change in between still wakes it.
 */
static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct fs *fs = fs_of(req);
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct fuse_pollhandle *old = NULL;

	if (fi->fh == NOTIFY_FH) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM);
		return;
	}
	if (ph) {
		pthread_mutex_lock(&fs->open_lock);
		old = of->ph;
		of->ph = ph;
		pthread_mutex_unlock(&fs->open_lock);
		if (old)
			fuse_pollhandle_destroy(old);
	}
	fuse_reply_poll(req, engine_file_poll(of->f));
}

static void dir_clear(struct dir_handle *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->ents[i].name);
	d->n = 0;
}

static int dir_add(struct dir_handle *d, const char *name, const struct pfs_stat *st)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct dir_entry *v = realloc(d->ents, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		d->ents = v;
		d->cap = cap;
	}
	d->ents[d->n].name = strdup(name);
	if (d->ents[d->n].name == NULL)
		return -ENOMEM;
	d->ents[d->n].st = *st;
	d->n++;
	return 0;
}

static int collect_entry(void *arg, const char *name, const struct pfs_stat *st)
{
	return dir_add(arg, name, st);
}

/* (Re)reads the listing of d->path into the snapshot: names, types and
 * the stable flag of each entry's kind (engine_list), no attributes. On
 * failure the snapshot is empty. */
static int dir_load(struct fs *fs, struct dir_handle *d)
{
	struct pfs_stat self;
	int r;

	dir_clear(d);
	r = engine_getattr(fs->engine, d->path, &self);
	if (r < 0)
		return r;
	if (!S_ISDIR(self.mode))
		return -ENOTDIR;
	r = dir_add(d, ".", &self);
	if (r == 0)
		r = dir_add(d, "..", &self);
	if (r == 0)
		r = engine_list(fs->engine, d->path, collect_entry, d);
	if (r > 0)
		r = -ENOMEM;
	if (r < 0)
		dir_clear(d);
	return r;
}

static void dir_free(struct dir_handle *d)
{
	dir_clear(d);
	free(d->ents);
	free(d->path);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct dir_handle *d = calloc(1, sizeof(*d));
	int r;

	if (d == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	r = path_of(fs, ino, &d->path);
	if (r == 0)
		r = dir_load(fs, d);
	if (r < 0) {
		dir_free(d);
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->keep_cache = 0;
	fi->cache_readdir = 0;
	if (fuse_reply_open(req, fi) != 0)
		dir_free(d);
}

/* The inode number readdir shows for entry i of d. */
static uint64_t entry_ino(struct fs *fs, struct dir_handle *d, size_t i, fuse_ino_t self)
{
	char *path = NULL;
	uint64_t ino = 0;

	if (i == 0)
		return self;
	if (i == 1 ? parent_of(d->path, &path) : join(d->path, d->ents[i].name, &path))
		return UNKNOWN_INO;
	ino = inode_peek(fs->inodes, path);
	free(path);
	return ino ? ino : UNKNOWN_INO;
}

/*
 * The readdirplus record of entry de of directory dir, at most rem bytes
 * at p (its size returned; more than rem: nothing was added). An entry of
 * a stable kind is stat-ed now (the snapshot has no attributes, and the
 * kernel keeps them) and handed over as a lookup (*eino, 0 otherwise);
 * others go without attributes (ino 0), as "." and "..": the kernel looks
 * them up when they are used, and asks their attributes each time anyway.
 */
static size_t dirent_plus(fuse_req_t req, const char *dir, const struct dir_entry *de,
			  uint64_t dino, char *p, size_t rem, off_t next, uint64_t *eino, int *err)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct pfs_stat st;
	uint64_t seen = change_count(fs);
	char *path;
	size_t len;

	*eino = 0;
	*err = 0;
	memset(&e, 0, sizeof(e));
	e.attr.st_ino = dino;
	e.attr.st_mode = de->st.mode;
	if (!de->st.stable)
		return fuse_add_direntry_plus(req, p, rem, de->name, &e, next);
	*err = join(dir, de->name, &path);
	if (*err < 0)
		return 0;
	if (engine_getattr(fs->engine, path, &st) < 0) {
		/* Gone since the listing: the lookup the kernel makes says so. */
		free(path);
		return fuse_add_direntry_plus(req, p, rem, de->name, &e, next);
	}
	*err = inode_ref(fs->inodes, path, eino);
	free(path);
	if (*err < 0)
		return 0;
	fill_entry(req, *eino, &st, seen, &e);
	len = fuse_add_direntry_plus(req, p, rem, de->name, &e, next);
	if (len > rem) {
		inode_forget(fs->inodes, *eino, 1);
		*eino = 0;
	}
	return len;
}

/*
 * readdir and readdirplus. For readdirplus every entry of a stable kind is
 * a lookup (dirent_plus): it adds to the lookup count only when the entry
 * made it into the reply, and all of them are taken back when the reply
 * fails.
 */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, int plus)
{
	struct fs *fs = fs_of(req);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	uint64_t *refs = NULL;
	size_t nrefs = 0, rem = size, i;
	char *buf = malloc(size ? size : 1), *p = buf;
	int r = 0;

	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&d->lock);
	if (off == 0 && d->was_read)
		r = dir_load(fs, d);
	d->was_read = 1;
	if (r == 0 && plus && (size_t)off < d->n) {
		refs = malloc((d->n - (size_t)off) * sizeof(*refs));
		if (refs == NULL)
			r = -ENOMEM;
	}
	for (i = (size_t)off; r == 0 && i < d->n; i++) {
		struct dir_entry *de = &d->ents[i];
		size_t len;

		if (!plus) {
			struct stat st;

			memset(&st, 0, sizeof(st));
			st.st_ino = entry_ino(fs, d, i, ino);
			st.st_mode = de->st.mode;
			len = fuse_add_direntry(req, p, rem, de->name, &st, (off_t)(i + 1));
		} else if (i < 2) {
			struct fuse_entry_param e;

			/* ino 0: attributes and no lookup, for "." and "..". */
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = entry_ino(fs, d, i, ino);
			e.attr.st_mode = de->st.mode;
			len = fuse_add_direntry_plus(req, p, rem, de->name, &e, (off_t)(i + 1));
		} else {
			uint64_t eino;

			len = dirent_plus(req, d->path, de, entry_ino(fs, d, i, ino), p, rem,
					  (off_t)(i + 1), &eino, &r);
			if (r < 0)
				break;
			if (eino)
				refs[nrefs++] = eino;
		}
		if (len > rem)
			break;
		p += len;
		rem -= len;
	}
	pthread_mutex_unlock(&d->lock);
	/* An entry that failed after others were added ends the listing
	 * early; the next call reports the error. */
	if (r < 0 && p == buf) {
		fuse_reply_err(req, -r);
	} else if (fuse_reply_buf(req, buf, size - rem) != 0) {
		for (i = 0; i < nrefs; i++)
			inode_forget(fs->inodes, refs[i], 1);
	}
	free(refs);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 1);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	dir_free((struct dir_handle *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* The space of the file system holding the store, which is where packet
 * content lives. */
static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (statvfs(fs_of(req)->store, &sv) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	sv.f_namemax = NAME_MAX;
	sv.f_flag = 0;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.link = op_link,
	.rename = op_rename,
	.open = op_open,
	.create = op_create,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.poll = op_poll,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.statfs = op_statfs,
};

/* Reports a mount failure: to the waiting parent through the status pipe
 * (fd >= 0), or on stderr. */
static void report(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(int fd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "packetfs: mount: ");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(msg, "\n");
	if (fd >= 0) {
		ssize_t w = write(fd, msg, strlen(msg));

		(void)w;
	} else {
		fputs(msg, stderr);
	}
}

/* Makes the session with the fixed and the user's mount options and mounts
 * it. Returns 0 or -1 after reporting. */
static int session_open(struct fs *fs, const struct fs_mount_options *o, int status_fd)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char fixed[2 * PATH_MAX + 64], *store = realpath(o->store, NULL), *w;
	const char *c;
	int r = -1;

	/* The source of the mount is the store (as sshfs shows user@host:), so
	 * that `packetfs umount` finds the daemon; ',' and '\' are escaped for
	 * libfuse's option parser. */
	w = fixed + snprintf(fixed, sizeof(fixed), "default_permissions,subtype=packetfs,fsname=");
	for (c = store ? store : "packetfs"; *c && w < fixed + sizeof(fixed) - 3; c++) {
		if (*c == ',' || *c == '\\')
			*w++ = '\\';
		*w++ = *c;
	}
	*w = '\0';
	free(store);
	if (fuse_opt_add_arg(&args, "packetfs") != 0 || fuse_opt_add_arg(&args, "-o") != 0 ||
	    fuse_opt_add_arg(&args, fixed) != 0 ||
	    (o->options && (fuse_opt_add_arg(&args, "-o") != 0 ||
			    fuse_opt_add_arg(&args, o->options) != 0))) {
		report(status_fd, "%s", strerror(ENOMEM));
		goto out;
	}
	fs->se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), fs);
	if (fs->se == NULL) {
		report(status_fd, "%s: invalid mount options", o->options ? o->options : "");
		goto out;
	}
	if (fuse_session_mount(fs->se, o->mountpoint) != 0) {
		report(status_fd, "%s: cannot mount (see the message above)", o->mountpoint);
		fuse_session_destroy(fs->se);
		fs->se = NULL;
		goto out;
	}
	r = 0;
out:
	fuse_opt_free_args(&args);
	return r;
}

/* Detaches the daemon from the caller's terminal and directory, before the
 * engine starts processes that would inherit them. */
static void detach(void)
{
	int null = open("/dev/null", O_RDWR), r;

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	/* Keep no directory busy; "/" always exists. */
	r = chdir("/");
	(void)r;
}

/* Tells the waiting parent that the mount is up. */
static void report_ok(int status_fd)
{
	ssize_t w = write(status_fd, "OK", 2);

	(void)w;
	close(status_fd);
}

/* Opens the engine, mounts, serves until unmounted and tears down. With
 * status_fd >= 0 this is the daemon and reports through the pipe. Returns
 * the exit status. */
static int serve(const struct fs_mount_options *o, int status_fd)
{
	struct engine_options eo = { o->store, o->mountpoint, 0 };
	struct fuse_loop_config lc = { .clone_fd = 0, .max_idle_threads = 10 };
	struct fs fs = { .store = o->store, .open_lock = PTHREAD_MUTEX_INITIALIZER };
	char err[1024] = "";
	sigset_t block, old;
	int r, rc = 1;

	r = engine_open(&eo, &fs.engine, err, sizeof(err));
	if (r < 0) {
		if (err[0])
			report(status_fd, "%s", err);
		else
			report(status_fd, "%s: %s", o->store, strerror(-r));
		return 1;
	}
	r = inode_table_new(&fs.inodes);
	if (r < 0) {
		report(status_fd, "%s", strerror(-r));
		goto close_engine;
	}
	if (session_open(&fs, o, status_fd) < 0)
		goto free_inodes;
	if (fuse_set_signal_handlers(fs.se) != 0) {
		report(status_fd, "cannot install signal handlers");
		goto unmount;
	}
	if (status_fd >= 0)
		detach();
	/* Nothing the caller handed down, nor the FUSE device or the database,
	 * may reach the stage programs and recipes the engine starts. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = notifier_start(fs.se, fs.inodes, o->mountpoint, wake_polls, &fs, &fs.notifier);
	if (r == 0) {
		engine_watch(fs.engine, fs_changed, &fs);
		r = engine_start(fs.engine);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		report(status_fd, "%s: cannot start the pipeline: %s", o->store, strerror(-r));
		goto remove_handlers;
	}
	if (status_fd >= 0)
		report_ok(status_fd);
	r = fuse_session_loop_mt(fs.se, &lc);
	rc = r < 0 ? 1 : 0;
	if (rc && status_fd < 0)
		report(-1, "%s: %s", o->mountpoint, strerror(-r));
remove_handlers:
	fuse_remove_signal_handlers(fs.se);
unmount:
	/* Unmounting aborts the connection: a replay in flight fails, and the
	 * notifier can be stopped. The engine may still report changes while
	 * it closes; a stopped notifier drops them. */
	fuse_session_unmount(fs.se);
	notifier_stop(fs.notifier);
	engine_close(fs.engine);
	fs.engine = NULL;
	notifier_free(fs.notifier);
	fuse_session_destroy(fs.se);
free_inodes:
	inode_table_free(fs.inodes);
close_engine:
	engine_close(fs.engine);
	return rc;
}

int fs_mount(const struct fs_mount_options *o)
{
	char msg[1024];
	size_t len = 0;
	int pfd[2], status;
	pid_t pid;

	if (o->foreground)
		return serve(o, -1);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		report(-1, "pipe: %s", strerror(errno));
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		report(-1, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		setsid();
		exit(serve(o, pfd[1]));
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], msg + len, sizeof(msg) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		msg[len] = '\0';
		/* Stop at "OK": the daemon's children might hold the pipe. */
		if (strcmp(msg, "OK") == 0) {
			close(pfd[0]);
			return 0;
		}
		if (len == sizeof(msg) - 1)
			break;
	}
	close(pfd[0]);
	msg[len] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (len > 0)
		fputs(msg, stderr);
	else
		report(-1, "%s: the daemon exited before the mount was up", o->mountpoint);
	return 1;
}
