/*
 * fs_ops_file.c - open files: the list of open handles and the FUSE
 * operations on them (open, create, read, write, fallocate, flush,
 * release, fsync, poll).
 *
 * DESIGN
 *
 * Handles. fi->fh holds a struct open_file * (the engine's struct
 * pfs_file, listed per inode so that fstat works after unlink), or
 * NOTIFY_FH for a handle the notifier opened (notify.h), whose reads are
 * empty and whose writes change nothing. What the kernel may cache of an
 * open file is fs_cache.c's to say (fs__cache_open). A poll's handle is
 * kept on its open file until the notifier replays a change of the file.
 *
 * Creates. A document is held open for writing from its create on, so its
 * attributes are not stable (struct pfs_stat), but the kernel checks them
 * at once (the open's permission check) and would ask again. What changes
 * them until a commit, the kernel sees (writes, setattr, renames, links);
 * a commit (a flush, fsync or release of any handle on it) moves its times
 * unseen. So the create reply lets the kernel cache them and marks its
 * open file (open_file.created_cached); a commit of the document drops
 * them (created_commit), and ends the mark of the handle that committed.
 * Later replies, while the document is open for writing, are not cached.
 * A create reply may reach the kernel after a commit by another handle
 * that came after the create read the attributes, and after that
 * commit's invalidation: a create under way (fs.creating) makes such a
 * commit count a change (attr_ttl: not cached when the create looks after
 * it), and the other handle's mark stays, so that its own first commit
 * drops them again. (A commit within that window, a few microseconds,
 * can thus leave the kernel the times from before it until the created
 * handle writes, commits or closes.) The entry (name -> inode) is kept as
 * any other: a document whose first commit failed is hidden (engine), and
 * what the kernel then asks of its inode by the name is answered -ESTALE
 * (getattr_of in fs_ops.c, fs__op_open), so the VFS looks the name up
 * again, finds it missing, and an open with O_CREAT creates it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
	fs__cache_open(fi, f);
	return 0;
}

/*
 * The open file by, on ino, may have committed its document (see
 * Creates); one being released is unlisted already, and self says
 * whether it still had its mark. Counts a change while a create is under
 * way, drops the attributes a create reply on ino let the kernel cache,
 * and ends by's own mark. Request threads.
 */
static void created_commit(struct fs *fs, struct open_file *by, uint64_t ino, int self)
{
	struct open_file *of;
	int found = self;

	if (__atomic_load_n(&fs->creating, __ATOMIC_SEQ_CST) != 0)
		__atomic_add_fetch(&fs->changes, 1, __ATOMIC_SEQ_CST);
	if (!found && __atomic_load_n(&fs->created_cached, __ATOMIC_SEQ_CST) == 0)
		return;
	pthread_mutex_lock(&fs->open_lock);
	for (of = fs->open; of; of = of->next) {
		if (of->ino != ino || !of->created_cached)
			continue;
		found = 1;
		if (of == by) {
			of->created_cached = 0;
			__atomic_sub_fetch(&fs->created_cached, 1, __ATOMIC_SEQ_CST);
		}
	}
	pthread_mutex_unlock(&fs->open_lock);
	if (found)
		fs__drop_ino_attrs(fs, ino);
}

/* Unlists and releases the open file of fi, once no fs__open_flush or
 * fs__open_getattr uses it. */
static void open_release(struct fs *fs, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	int cached, doc;

	pthread_mutex_lock(&fs->open_lock);
	of->releasing = 1;
	while (of->users)
		pthread_cond_wait(&fs->open_idle, &fs->open_lock);
	if (of->prev)
		of->prev->next = of->next;
	else
		fs->open = of->next;
	if (of->next)
		of->next->prev = of->prev;
	cached = of->created_cached;
	pthread_mutex_unlock(&fs->open_lock);
	if (cached)
		__atomic_sub_fetch(&fs->created_cached, 1, __ATOMIC_SEQ_CST);
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	doc = !engine_file_direct(of->f);
	engine_file_release(of->f); /* commits what is pending */
	if (doc)
		created_commit(fs, of, of->ino, cached);
	free(of);
}

/* The notifier replayed a change of path: wakes the polls waiting on it.
 * Runs on the notifier thread (never in a request handler, where a
 * notification could deadlock against the kernel). */
void fs__wake_polls(void *arg, const char *path)
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
			if (notifier_send_begin(fs->notifier)) {
				fuse_lowlevel_notify_poll(ph[i]);
				notifier_send_end(fs->notifier);
			}
			fuse_pollhandle_destroy(ph[i]);
		}
	} while (n == sizeof(ph) / sizeof(ph[0]));
}

/*
 * Calls fn on each open file of ino that pick accepts, in turn, until one
 * returns other than 0 (that result returned; 0 when none did); a file
 * being released is passed over (its release flushes it). open_lock
 * is not held across fn: the open file counts fn's call as a use, so that
 * its release waits (open_release) and it stays listed, its next pointer
 * read again under the lock once fn returned.
 */
static int open_each(struct fs *fs, uint64_t ino, int (*pick)(struct pfs_file *),
		     int (*fn)(struct pfs_file *, void *), void *arg)
{
	struct open_file *of, *next;
	int r = 0;

	pthread_mutex_lock(&fs->open_lock);
	for (of = fs->open; of && r == 0; of = next) {
		if (of->ino != ino || of->releasing || !pick(of->f)) {
			next = of->next;
			continue;
		}
		of->users++;
		pthread_mutex_unlock(&fs->open_lock);
		r = fn(of->f, arg);
		pthread_mutex_lock(&fs->open_lock);
		next = of->next;
		assert(of->users > 0);
		if (--of->users == 0)
			pthread_cond_broadcast(&fs->open_idle);
	}
	pthread_mutex_unlock(&fs->open_lock);
	return r;
}

static int pick_buffered(struct pfs_file *f)
{
	return !engine_file_direct(f);
}

static int pick_any(struct pfs_file *f)
{
	(void)f;
	return 1;
}

static int flush_one(struct pfs_file *f, void *who)
{
	return engine_file_flush(f, who);
}

/* The attributes of f into arg (a struct pfs_stat); 1 (stop) once taken. */
static int getattr_one(struct pfs_file *f, void *ps)
{
	int r = engine_file_getattr(f, ps);

	return r < 0 ? r : 1;
}

/*
 * Commits what is pending in the open documents of ino. cp -a, tar and
 * rsync write, set the times (futimens, which carries no file handle) and
 * only then close: without this, the commit at close would stamp the time
 * of the close over the one they set. Views are left alone: their flush
 * has effects of its own (a ctl command). A commit can take milliseconds:
 * other opens and closes do not wait for it (open_each).
 */
int fs__open_flush(struct fs *fs, uint64_t ino, const struct pfs_caller *who)
{
	return open_each(fs, ino, pick_buffered, flush_one, (void *)who);
}

/* Attributes of ino through any of its open files: -ENOENT when none. */
int fs__open_getattr(struct fs *fs, uint64_t ino, struct pfs_stat *ps)
{
	int r = open_each(fs, ino, pick_any, getattr_one, ps);

	return r == 1 ? 0 : r < 0 ? r : -ENOENT;
}

struct reopen {
	int flags;
	const struct pfs_caller *who;
	struct pfs_file *f; /* out */
};

/* Another handle on the content of open file f (engine_file_reopen) into
 * arg (a struct reopen); 1 (stop) once made, 0 to try the next. */
static int reopen_one(struct pfs_file *f, void *arg)
{
	struct reopen *ro = arg;
	int r = engine_file_reopen(f, ro->flags, ro->who, &ro->f);

	return r == -ESTALE ? 0 : r < 0 ? r : 1;
}

/* The notifier's handle (NOTIFY_FH): direct I/O (its one-byte write must
 * reach this daemon, which drops it), and no FLUSH at its close: there is
 * nothing to commit, and the close itself still tells inotify
 * IN_CLOSE_WRITE (the kernel's FOPEN_NOFLUSH, Linux 5.16). */
static void notifier_handle(struct fuse_file_info *fi)
{
	fi->fh = NOTIFY_FH;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fi->noflush = 1;
}

/* Opens for the notifier: a handle whose writes change nothing. */
static void notifier_open(fuse_req_t req, struct fuse_file_info *fi)
{
	notifier_handle(fi);
	fuse_reply_open(req, fi);
}

void fs__op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_file *f;
	char *path = NULL;
	int r;

	if (notifier_is_self(fs->notifier, req)) {
		r = fs__path_of(fs, ino, &path);
		free(path);
		if (r < 0)
			fuse_reply_err(req, -r);
		else
			notifier_open(req, fi);
		return;
	}
	caller_of(req, &who);
	fs__ns_open_begin(fs);
	r = fs__path_of(fs, ino, &path);
	if (r == 0) {
		struct pfs_stat ps;

		r = engine_file_open(fs->engine, path, fi->flags, 0, &who, &f);
		/* The name names nothing now (a new document whose first commit
		 * failed, hidden): the kernel's entry of it is stale, and on
		 * -ESTALE the VFS looks it up again; an open with O_CREAT, which
		 * the kernel does not pass on here, then creates it again. */
		if (r == -ENOENT && engine_getattr_unrendered(fs->engine, path, &ps) == -ENOENT)
			r = -ESTALE;
		fs__refused("open", path, r);
		free(path);
	} else if (r == -ESTALE) {
		/* A rename over ino or an unlink of it came between the kernel's
		 * lookup and this open. Where ino is still open, a reader gets
		 * what those handles read (the file the lookup found, as on a
		 * local disk) instead of an ESTALE the kernel retries only once:
		 * a document saved by rename in a loop could fail that retry too. */
		struct reopen ro = { fi->flags, &who, NULL };

		r = open_each(fs, ino, pick_any, reopen_one, &ro);
		f = ro.f;
		r = r == 1 ? 0 : r < 0 ? r : -ESTALE;
		/* None open: a reader still gets what the file held when the
		 * rename replaced it (inode_replaced); a writer is looked up
		 * again (its write would go to no name). */
		if (r == -ESTALE && (fi->flags & O_ACCMODE) == O_RDONLY &&
		    !(fi->flags & (O_CREAT | O_TRUNC)) &&
		    inode_replaced(fs->inodes, ino, &path) == 0) {
			r = engine_file_open(fs->engine, path, fi->flags, 0, &who, &f);
			free(path);
			path = NULL;
			if (r < 0)
				r = -ESTALE;
		}
	}
	fs__ns_open_end(fs);
	/* An O_TRUNC open by a process without CAP_FSETID (fs_io.c). */
	if (r == 0 && fs__io_kill_suidgid() && (r = engine_file_kill_suidgid(f)) < 0)
		engine_file_release(f);
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

void fs__op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct pfs_caller who;
	struct pfs_file *f = NULL;
	struct open_file *of;
	struct pfs_stat ps;
	uint64_t ino, seen = fs__change_count(fs);
	char *path;
	int mark, r = fs__child_path(fs, parent, name, &path);

	if (r < 0)
		goto fail_path;
	if (notifier_is_self(fs->notifier, req)) {
		/* The notifier creates an existing file again (see notify.h). */
		r = engine_getattr(fs->engine, path, &ps);
		if (r == 0 && !S_ISREG(ps.mode))
			r = -EISDIR;
		if (r < 0)
			goto fail_path;
		r = inode_ref(fs->inodes, path, ps.file_id, &ino);
		if (r < 0)
			goto fail_path;
		fs__notifier_attrs(req, &ps);
		/* Taken by the kernel without comparing versions (reply_made). */
		ps.stable = 0;
		fs__fill_entry(req, ino, &ps, seen, &e);
		notifier_handle(fi);
		if (fuse_reply_create(req, &e, fi) != 0)
			inode_forget(fs->inodes, ino, 1);
		free(path);
		return;
	}
	caller_of(req, &who);
	/* Under way from before the attributes are read (see Creates). */
	__atomic_add_fetch(&fs->creating, 1, __ATOMIC_SEQ_CST);
	r = engine_file_open(fs->engine, path, fi->flags | O_CREAT, mode & 07777, &who, &f);
	fs__refused("create", path, r);
	if (r < 0)
		goto fail;
	r = engine_file_getattr(f, &ps);
	if (r < 0)
		goto fail;
	r = inode_ref(fs->inodes, path, ps.file_id, &ino);
	if (r < 0)
		goto fail;
	r = open_add(fs, ino, f, fi);
	if (r < 0) {
		inode_forget(fs->inodes, ino, 1);
		goto fail;
	}
	/* A document of one name: cached until a commit (see Creates). The
	 * open file is marked before the reply is made, so that a commit
	 * from now on finds it. */
	of = (struct open_file *)(uintptr_t)fi->fh;
	mark = !engine_file_direct(f) && ps.nlink <= 1 && !ps.unlinked;
	if (mark) {
		pthread_mutex_lock(&fs->open_lock);
		of->created_cached = 1;
		pthread_mutex_unlock(&fs->open_lock);
		__atomic_add_fetch(&fs->created_cached, 1, __ATOMIC_SEQ_CST);
	}
	ps.stable = mark;
	fs__fill_entry(req, ino, &ps, seen, &e);
	if (mark && e.attr_timeout == 0.0) {
		pthread_mutex_lock(&fs->open_lock);
		of->created_cached = 0;
		pthread_mutex_unlock(&fs->open_lock);
		__atomic_sub_fetch(&fs->created_cached, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_sub_fetch(&fs->creating, 1, __ATOMIC_SEQ_CST);
	/* The entry is kept as any other (fs_cache.c). The document exists in
	 * the store only once a commit stores it: if none does (a full disk),
	 * it is hidden, and a request of the kernel on this inode by the name
	 * (an open, with O_CREAT or not, a stat) gets -ESTALE, on which the
	 * VFS looks the name up again and finds it missing. */
	if (fuse_reply_create(req, &e, fi) != 0) {
		inode_forget(fs->inodes, ino, 1);
		open_release(fs, fi);
	}
	free(path);
	return;
fail:
	__atomic_sub_fetch(&fs->creating, 1, __ATOMIC_SEQ_CST);
fail_path:
	if (f)
		engine_file_release(f);
	free(path);
	fuse_reply_err(req, -r);
}

void fs__op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
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

void fs__op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct pfs_caller who;
	ssize_t n;

	if (fi->fh == NOTIFY_FH) {
		fuse_reply_write(req, size);
		return;
	}
	caller_of(req, &who);
	/* Before the bytes, as Linux does it: a write that fails here wrote
	 * nothing (fs_io.c). */
	n = fs__io_kill_suidgid() ? engine_file_kill_suidgid(file_of(fi)) : 0;
	if (n == 0)
		n = engine_file_write(file_of(fi), buf, size, (uint64_t)off, &who);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

void fs__op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		      struct fuse_file_info *fi)
{
	struct pfs_caller who;
	int r;

	(void)ino;
	if (fi->fh == NOTIFY_FH || off < 0 || len <= 0) {
		fuse_reply_err(req, fi->fh == NOTIFY_FH ? EOPNOTSUPP : EINVAL);
		return;
	}
	caller_of(req, &who);
	r = engine_file_fallocate(file_of(fi), mode, (uint64_t)off, (uint64_t)len, &who);
	/* No request flag says so: a caller other than root is taken to lack
	 * CAP_FSETID (fs_io.c). */
	if (r == 0 && fs__io_killpriv() && who.uid != 0)
		r = engine_file_kill_suidgid(file_of(fi));
	fuse_reply_err(req, -r);
}

/* Replies req with the result of sync (engine_file_flush or
 * engine_file_fsync) on the file of fi, done for the process that made
 * req; a notifier's handle (NOTIFY_FH) has nothing to sync: 0. On the
 * request's FUSE thread. */
static void reply_sync(fuse_req_t req, struct fuse_file_info *fi,
		       int (*sync)(struct pfs_file *, const struct pfs_caller *))
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct pfs_caller who;
	int r;

	if (fi->fh == NOTIFY_FH) {
		fuse_reply_err(req, 0);
		return;
	}
	caller_of(req, &who);
	r = sync(of->f, &who);
	if (!engine_file_direct(of->f))
		created_commit(fs_of(req), of, of->ino, 0);
	fuse_reply_err(req, -r);
}

void fs__op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	reply_sync(req, fi, engine_file_flush);
}

void fs__op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fi->fh != NOTIFY_FH)
		open_release(fs_of(req), fi);
	fuse_reply_err(req, 0);
}

void fs__op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	reply_sync(req, fi, engine_file_fsync);
}

/*
 * poll(2): the readiness the engine reports for the handle. A waiter's
 * handle is kept (replacing an older one) until the notifier replays a
 * change of the file (fs__wake_polls); it is stored before readiness is
 * computed, so that a change in between still wakes it.
 */
void fs__op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
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
