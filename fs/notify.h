/*
 * notify.h - the watcher of the mount: replays the engine's own changes
 * through the mount so that inotify and poll(2) see them.
 *
 * The kernel sends inotify events for operations a process makes through
 * the VFS, never for a FUSE daemon's cache invalidations. So the notifier
 * repeats each change the engine made by itself as an ordinary system call
 * on the mount, made by a child process of the daemon (replayer.h says why
 * not by a thread): a changed file is opened for
 * writing and written one byte (IN_OPEN, IN_MODIFY, IN_CLOSE_WRITE), a new
 * file is created with O_CREAT|O_EXCL (IN_CREATE first), and an archived
 * item's directory is removed (IN_DELETE|IN_ISDIR) and made again under
 * .archive/ (IN_CREATE|IN_ISDIR). The request handlers recognise the
 * replayer's requests by the process id the kernel puts in each request,
 * and answer them without changing anything
 * (notifier_is_self, notifier_lookup, NOTIFY_FH): the new name looks
 * absent to the notifier until it has made it, the archived one present
 * until it has removed it. After each change the notifier wakes the poll(2)
 * waiters of the path (the wake function).
 *
 * (fuse_lowlevel_notify_delete would be simpler for the archive, but the
 * kernel sends no inotify event for it either: seen on Linux 6.18.)
 *
 * Changes are queued (one entry per path: a path changed twice before the
 * notifier gets to it is replayed once) and replayed in batches at most
 * every NOTIFY_PACE_MS, so a log growing by many small writes costs a
 * bounded number of round trips while a change is still seen well within
 * 100 ms.
 *
 * Threads: notifier_changed may be called from any thread, with any engine
 * lock held; it never blocks on the mount. The notifier thread holds no
 * lock while the replayer makes its system calls, which worker threads of
 * the FUSE session serve.
 */
#ifndef PACKETFS_NOTIFY_H
#define PACKETFS_NOTIFY_H

#include <fuse_lowlevel.h>

#include "engine.h"
#include "inode.h"

/* The file handle of the notifier's own opens: no pfs_file behind it, its
 * writes change nothing. */
#define NOTIFY_FH 0

/* Replay batches start at most this often, in milliseconds. */
#define NOTIFY_PACE_MS 25

struct notifier;

/* Called on the notifier thread after path's change was replayed. */
typedef void (*notifier_wake_fn)(void *arg, const char *path);

/*
 * Starts the notifier thread for the session se mounted at mountpoint
 * (absolute), with the session's inode table (for inode numbers of names
 * to invalidate). wake (may be NULL) is told of each path replayed.
 * Returns 0 or a negative errno; *out is freed with notifier_free. Call
 * while the process has a single thread (the replayer is forked), with the
 * signals the FUSE session handles blocked, so that the thread never takes
 * them.
 */
int notifier_start(struct fuse_session *se, struct inode_table *inodes, const char *mountpoint,
		   notifier_wake_fn wake, void *wake_arg, struct notifier **out);

/* Stops the thread (pending changes are dropped) and waits for it. The
 * system call it is making must be able to end: call after the session is
 * unmounted, or while it is still served. Changes told after this are
 * dropped. Any thread but the notifier's. */
void notifier_stop(struct notifier *n);

/* Frees a stopped notifier. NULL is allowed. */
void notifier_free(struct notifier *n);

/* Queues a change (an engine_change_fn: arg is the notifier). Any thread. */
void notifier_changed(void *arg, const char *path, enum engine_change what);

/*
 * Notifications on the session's device. Every fuse_lowlevel_notify_* call
 * of the daemon is bracketed: notifier_send_begin returns 1 (send, then
 * call notifier_send_end) or 0 (do not send: the device is being closed).
 * notifier_send_close, called once the session loop has ended and before
 * the session is unmounted (which closes the device, whose number another
 * thread may then get for a file of its own), refuses further sends and
 * waits up to wait_ms milliseconds for those under way. One still under
 * way then is blocked in the kernel (an entry invalidation waits for its
 * directory, which a request the loop no longer serves holds until the
 * unmount aborts it), where it holds the device itself, not its number.
 * A NULL n lets every send through. Any thread.
 */
int notifier_send_begin(struct notifier *n);
void notifier_send_end(struct notifier *n);
void notifier_send_close(struct notifier *n, long wait_ms);
/* Whether req was sent by the notifier (its replayer process). */
int notifier_is_self(struct notifier *n, fuse_req_t req);

/*
 * Whether req was sent by the notifier and the notifier must be told the
 * owner may write what it replays (fs__notifier_attrs). Under
 * default_permissions the kernel checks the mode it is told before it
 * lets the replayer open a read-only view for writing or make a log in a
 * read-only directory. A replayer that overrides modes (CAP_DAC_OVERRIDE:
 * a daemon run as root) needs no such bit, and then what it is told is
 * what everyone is told, which the kernel may cache. So the bit is only
 * given once the kernel refused a replay with EACCES; that replay is made
 * again at once. Any thread.
 */
int notifier_write_bit(struct notifier *n, fuse_req_t req);

/* How a lookup of path by req must be answered. */
enum notify_lookup {
	NOTIFY_AS_IS,  /* as for anyone */
	NOTIFY_HIDE,   /* ENOENT: the notifier makes path anew */
	NOTIFY_REVEAL, /* the entry of the path written into as: the notifier
			* removes path, which the engine has moved there */
};
enum notify_lookup notifier_lookup(struct notifier *n, fuse_req_t req, const char *path, char *as,
				   size_t size);

#endif
