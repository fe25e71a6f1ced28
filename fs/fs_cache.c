/*
 * fs_cache.c - the caching rules of the FUSE front end: how long the
 * kernel may keep what a reply hands it (entries, attributes, pages), and
 * the invalidations that keep what it keeps exact.
 *
 * DESIGN
 *
 * Caching. The kernel keeps every entry (name -> inode) for CACHE_TTL, and the
 * attributes the engine calls stable (struct pfs_stat: documents not held open
 * for writing, through the path or through a handle open for reading, document
 * and item directories without a document created open and not stored yet, the
 * root and the fixed directories that have no item, an item's stages/,
 * validation/, validation/logs/ and .history/, whose times follow the item's
 * updated time, sealed logs, registry.jsonl) for as long, and those of the
 * reply to a create of a document until its first commit drops them
 * (fs_ops_file.c "Creates"); every other reply - views, logs still growing, the
 * subdirectories of .history, the worktree link, what only the notifier is told
 * (a mode with the owner's write bit added, a file's attributes unrendered,
 * what it makes or creates again: fs_ops.c fs__notifier_attrs,
 * notifier_getattr, reply_made) - has an attribute timeout of 0, so the kernel
 * asks again each time, as does the root of a mount shared with -o allow_other
 * (fs_team.c). Negative entries: see below. Exactness rests on these rules:
 *  - Every change made through the mount is seen by the kernel, which drops
 *    what it holds itself (the parent directory on create, unlink, rename,
 *    mkdir and rmdir; the inode on write, truncate and setattr, whose reply
 *    carries the new attributes; after a write it asks the size and times
 *    again, so a registry.jsonl line stored otherwise than written shows).
 *    Its side effects the kernel does not see (status, evidence.md, events,
 *    .history) are all in replies with timeout 0; a document's first commit
 *    at close moves its directory's times again, which is why a directory
 *    holding a document created open is not stable until that commit.
 *  - Every change the engine makes on its own is reported to fs__changed
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
 *    an archived item, an item row written, a registry line of a run);
 *    views are never marked, so the reports made inside request handlers
 *    (a registry append changes evidence.md and events) send no
 *    notification.
 *  - A reply races with a change: attr_ttl marks the inode before it looks
 *    whether fs__changed counted a change since the attributes were asked
 *    of the engine, and gives 0 if so; a change after that finds the mark
 *    and invalidates, and the kernel drops a reply older than an
 *    invalidation by its attribute version. A rename, unlink or rmdir
 *    through the mount counts too, for the span in which a path already
 *    names another document than its inode's (fs__ns_change_begin): a lookup
 *    that revalidates a dentry takes no directory lock, so the kernel does
 *    not keep it out of that span.
 *  - An entry the engine removes (an archived item) stays in the kernel
 *    until the notifier replays its rmdir, but its attributes were dropped:
 *    every use of the name asks the daemon, which answers ENOENT.
 *
 * Listings. The kernel keeps the listing of a directory whose listing the
 * engine calls stable (pfs_stat.list_stable: an item's directory, its
 * document directories, stages/, validation/, validation/logs/) in its page
 * cache across opens (cache_readdir, keep_cache), so that a second find
 * or ls sends no readdir. Exactness rests on three things:
 *  - An entry made or removed through the mount is seen by the kernel,
 *    which bumps the directory's version and drops the cached listing at
 *    the next read from its start.
 *  - An entry the engine makes (a document it writes, a stage or recipe
 *    log) is reported ENGINE_CREATED: fs__changed drops the listing of the
 *    directory holding it with a data invalidation of that directory's
 *    inode (a directory has no dirty pages, so the notification waits on
 *    no request, from any thread).
 *  - A change racing with the reading of a listing: the kernel fills its
 *    cache from a reply after the daemon made it, so an invalidation sent
 *    in between finds no pages to drop. The handle keeps the change count
 *    taken before its snapshot; every later readdir on the handle (the
 *    kernel only sends it once it has filled its cache with the previous
 *    reply, and a listing always ends with a read that finds the end)
 *    drops the listing when the count moved.
 * Other directories (the root, .archive/, .packetfs/, .history/ and
 * below, an archived item's) are listed afresh at every open.
 *
 * Negative entries. A lookup that finds nothing in a document directory
 * below an item's own (engine_lookup's keepable: stable, and the engine makes
 * no file there: its logs, change-validation.md and views are elsewhere) is
 * answered with an entry of inode 0 that the kernel keeps for CACHE_TTL: a
 * compiler's probes of its include path, make's of its implicit rules then
 * cost no round trip after the first (measured: tests/bench/results/
 * 2026-12-05-vm-negative-entries.md). A name comes to be there by a
 * request through the mount, which the kernel puts in the place of its
 * negative entry, or by a refused removal's restore (packet_remove.c),
 * which the engine reports ENGINE_CREATED: the notifier then drops the
 * kernel's entry of the name (notify.c forget_entry, on its own thread,
 * within NOTIFY_PACE_MS) before it replays the create. Until then a
 * process that found the name missing before the restore may still find
 * it missing: the one lag, bounded, and only after an `rm -rf` of an item
 * that the engine refused. Exactness otherwise:
 *  - A lookup runs with the directory's lock held by the kernel, so no
 *    create through the mount comes in between; a commit may (a document
 *    hidden until its first commit stored, after a full disk), so the
 *    directory is asked before the name: it held no document created and
 *    not stored then, hidden or not. It is judged by its path, without a
 *    question to the store (the kernel holds it as a directory, and a
 *    rename of it through the mount moves the change count).
 *  - fs__changed counts a change before the notifier hears of it; a lookup
 *    that sees the count moved since it asked answers plain ENOENT; and the
 *    notifier's entry invalidation takes the directory's lock, which waits
 *    for a lookup under way to reach the kernel first.
 *  - FUSE_NOTIFY_INC_EPOCH (Linux 6.16) would void every entry of the
 *    mount at once and could serve every directory, but a dentry that
 *    fails revalidation loses the mounts below it: a sandbox's bind mount
 *    over part of an item would be detached, in every namespace.
 * Elsewhere (an item's directory, stages/, validation/ and its logs/, the
 * root and the rest), on a mount shared with -o allow_other (a lookup's
 * answer may depend on who asks, fs_team.c), for the notifier's own
 * lookups (notify.c hides names from it) and for a lookup made during a
 * namespace change, misses are answered with ENOENT, which the kernel does
 * not keep.
 *
 * readdirplus replies carry only entries of stable kinds as lookups, stat-ed
 * when the reply is made (the listing snapshot has names and types only,
 * engine_list); the others go without attributes, and the kernel looks
 * them up when they are used. Views and growing logs are opened with
 * direct_io (engine_file_direct()); documents go through the page cache
 * without keep_cache, so shared mmap reads work and each open sees the
 * current content; a sealed log never changes and keeps its pages across
 * opens (engine_file_immutable()). Handles opened only to read are opened
 * with noflush (engine_file_flushes()): their close sends no FLUSH (a
 * document's writers commit at their own close).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include "engine.h"
#include "fs_int.h"
#include "inode.h"
#include "notify.h"

/* Seconds the kernel may keep an entry, and the attributes the engine calls
 * stable: a bound only, every change to them is invalidated (see Caching). */
#define CACHE_TTL 3600.0

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
	st->st_rdev = (dev_t)ps->rdev;
	st->st_nlink = ps->unlinked ? 0 : ps->nlink ? ps->nlink : 1;
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
uint64_t fs__change_count(struct fs *fs)
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
 * the wrong inode. fs__ns_change_begin and fs__ns_change_end bracket that span, so
 * that attr_ttl gives 0 to whatever was asked during it.
 */
void fs__ns_change_begin(struct fs *fs)
{
	pthread_rwlock_wrlock(&fs->ns_lock);
	__atomic_add_fetch(&fs->moving, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
}

void fs__ns_change_end(struct fs *fs)
{
	__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&fs->moving, 1, __ATOMIC_SEQ_CST);
	pthread_rwlock_unlock(&fs->ns_lock);
}

void fs__ns_open_begin(struct fs *fs)
{
	pthread_rwlock_rdlock(&fs->ns_lock);
}

void fs__ns_open_end(struct fs *fs)
{
	pthread_rwlock_unlock(&fs->ns_lock);
}

/*
 * How long the kernel may keep the attributes ps of ino, asked of the
 * engine after fs__change_count gave seen: 0 unless they are stable. A stable
 * inode is marked first (inode_set_cached), so that fs__changed invalidates
 * it from then on; a change reported since seen may have been missed by
 * that (it looked before the mark) and gives 0. What only the notifier is
 * told is not stable (fs__notifier_attrs).
 */
static double attr_ttl(fuse_req_t req, uint64_t ino, const struct pfs_stat *ps, uint64_t seen)
{
	struct fs *fs = fs_of(req);

	if (!ps->stable)
		return 0.0;
	/* A shared mount's root: every path walk from it asks its attributes
	 * (the kernel checks its permissions), so that fs__admit refuses
	 * whoever it does not let in, even where the kernel holds the rest. */
	if (fs->shared && ino == FUSE_ROOT_ID)
		return 0.0;
	inode_set_cached(fs->inodes, ino);
	/* Asked during a namespace change (seen UINT64_MAX): never cached,
	 * even while the count still reads UINT64_MAX. */
	return seen != UINT64_MAX && fs__change_count(fs) == seen ? CACHE_TTL : 0.0;
}

void fs__fill_entry(fuse_req_t req, uint64_t ino, const struct pfs_stat *ps, uint64_t seen,
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

/* The number of names in path (absolute, normalised): "/" 0, "/a/b" 2. */
static int depth(const char *path)
{
	int n = 0;

	for (; *path; path++)
		n += *path == '/' && path[1] != '\0';
	return n;
}

int fs__miss_may_keep(fuse_req_t req, const char *name, const char *path)
{
	struct fs *fs = fs_of(req);

	/* A document directory lies below an item's own: a miss in the root
	 * or an item's directory ("/a" or "/i/a", most misses: each create
	 * starts with one) is never kept. */
	return !fs->shared && !notifier_is_self(fs->notifier, req) && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0 && depth(path) >= 3;
}

void fs__reply_missing(fuse_req_t req, int keepable, uint64_t seen)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;

	/* A change counted since the lookup asked (or under way then): the
	 * kernel looks the name up again at its next use. */
	if (!keepable || seen == UINT64_MAX || fs__change_count(fs) != seen) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.entry_timeout = CACHE_TTL;
	fuse_reply_entry(req, &e);
}

/* Drops the kernel's attributes of path when a reply let it cache them. */
static void invalidate_attrs(struct fs *fs, const char *path)
{
	uint64_t ino = inode_peek_cached(fs->inodes, path);

	if (ino && notifier_send_begin(fs->notifier)) {
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
		notifier_send_end(fs->notifier);
	}
}

void fs__drop_attrs(struct fs *fs, const char *path)
{
	invalidate_attrs(fs, path);
}

void fs__drop_ino_attrs(struct fs *fs, uint64_t ino)
{
	if (notifier_send_begin(fs->notifier)) {
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
		notifier_send_end(fs->notifier);
	}
}

int fs__cache_listing(fuse_req_t req, fuse_ino_t ino, const struct pfs_stat *ps)
{
	struct fs *fs = fs_of(req);

	if (!ps->list_stable || notifier_is_self(fs->notifier, req))
		return 0;
	inode_set_cached(fs->inodes, ino);
	return 1;
}

void fs__drop_listing(struct fs *fs, fuse_ino_t ino)
{
	if (notifier_send_begin(fs->notifier)) {
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
		notifier_send_end(fs->notifier);
	}
}

/* Drops the kernel's listing and attributes of the directory at path when
 * a reply let it cache them. */
static void invalidate_listing(struct fs *fs, const char *path)
{
	uint64_t ino = inode_peek_cached(fs->inodes, path);

	if (ino)
		fs__drop_listing(fs, ino);
}

/*
 * The engine's change hook (an engine_change_fn; arg is the struct fs): a
 * change the engine made on its own. Counts it (attr_ttl), drops at once
 * the attributes the kernel may hold of what changed: the file itself (a
 * document the engine wrote), the directory of a new file (its times
 * moved) and an archived item's directory (it no longer exists); then
 * queues the change for the notifier, which replays it for inotify and
 * poll(2). The directory of a new file also loses its listing (see
 * Listings). Any engine thread, possibly with engine locks held: the
 * notifications sent are the attribute-only inode invalidation, which
 * takes no lock a request holds, and the invalidation of a directory's
 * listing, which waits for no request; and only for inodes whose
 * attributes or listing a reply let the kernel cache (see Caching: never
 * views or growing logs, the only files reported from inside request
 * handlers).
 */
void fs__changed(void *arg, const char *path, enum engine_change what)
{
	struct fs *fs = arg;
	char *parent;

	__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
	invalidate_attrs(fs, path);
	if (what == ENGINE_CREATED && fs__parent_of(path, &parent) == 0) {
		invalidate_listing(fs, parent);
		free(parent);
	}
	if (what != ENGINE_TIMES)
		notifier_changed(fs->notifier, path, what);
}

void fs__reply_attr(fuse_req_t req, fuse_ino_t ino, const struct pfs_stat *ps, uint64_t seen)
{
	struct stat st;

	to_stat(ps, ino, &st);
	fuse_reply_attr(req, &st, attr_ttl(req, ino, ps, seen));
}

/* The page-cache flags of a handle opened on f (see Caching). */
void fs__cache_open(struct fuse_file_info *fi, struct pfs_file *f)
{
	fi->direct_io = engine_file_direct(f) ? 1 : 0;
	fi->keep_cache = engine_file_immutable(f) ? 1 : 0;
	fi->noflush = engine_file_flushes(f) ? 0 : 1;
}
