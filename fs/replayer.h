/*
 * replayer.h - the process that makes the notifier's system calls on the
 * mount (see notify.h).
 *
 * The replays cannot come from a thread of the daemon: a thread waiting
 * for the answer to its own mount's request is in uninterruptible sleep,
 * and a kill -9 of the daemon would then never finish (the FUSE device is
 * closed, and the connection aborted, only once every thread has exited),
 * leaving the store locked by a process that cannot die. The replayer is a
 * child process holding nothing but its socket: when the daemon dies its
 * device closes, the pending request fails, and the replayer is killed by
 * its parent-death signal.
 *
 * Threads: replayer_start must be called while the process has one thread
 * (the child runs on after fork). replayer_call from one thread at a time.
 */
#ifndef PACKETFS_REPLAYER_H
#define PACKETFS_REPLAYER_H

#include <sys/types.h>

/* Operations, each on MOUNTPOINT + path: */
enum replay_op {
	REPLAY_WRITE = 'W',  /* open O_WRONLY, write one byte at 0, close */
	REPLAY_CREATE = 'C', /* the same with O_CREAT|O_EXCL (0644); EEXIST: REPLAY_WRITE */
	REPLAY_RMDIR = 'R',  /* rmdir */
	REPLAY_MKDIR = 'D',  /* mkdir 0755 */
};

struct replayer;

/* Forks the replayer for the mount at mountpoint (absolute). 0 or a
 * negative errno; *out is freed with replayer_stop. */
int replayer_start(const char *mountpoint, struct replayer **out);

/* Has the replayer do op on path (absolute within the mount) and waits for
 * it. Returns 0, the positive errno of the failed system call, or -EPIPE
 * when the replayer is gone. */
int replayer_call(struct replayer *r, enum replay_op op, const char *path);

/* The replayer's process id: the pid (and thread id) in its requests. */
pid_t replayer_pid(const struct replayer *r);

/* Ends the replayer (its socket closed) and waits for it; frees r. Its
 * request in flight must be able to end: the mount still served, or
 * unmounted. NULL is allowed. */
void replayer_stop(struct replayer *r);

#endif
