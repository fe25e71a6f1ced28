/*
 * fs.h - the FUSE front end: the libfuse low-level operations over the
 * engine's path-addressed namespace, and the life of a mount (daemon,
 * session, loop, teardown) behind `packetfs mount`.
 */
#ifndef PACKETFS_FS_H
#define PACKETFS_FS_H

struct fs_mount_options {
	const char *store;      /* absolute path of the store directory */
	const char *mountpoint; /* absolute path of the mount point */
	const char *options;    /* extra mount options, comma-separated (-o); NULL for none */
	int foreground;         /* 1: serve in this process (mount -f); 0: daemonize */
};

/*
 * Mounts the store and serves it until it is unmounted (fusermount3 -u) or
 * the daemon gets SIGINT, SIGTERM or SIGHUP.
 *
 * In the background (foreground == 0) the calling process forks a daemon
 * that opens the engine, mounts and reports back through a pipe; the caller
 * returns 0 once the mount is up, or prints the daemon's error on stderr
 * and returns 1. The daemon itself never returns: it exits when the mount
 * ends. In the foreground the same steps run in the calling process, which
 * returns 0 after a clean unmount, or 1 with a message on stderr.
 *
 * The store and the engine are opened after the fork, never across it.
 * Call from the main thread of a process that has not started threads.
 */
int fs_mount(const struct fs_mount_options *o);

#endif
