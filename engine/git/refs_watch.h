/*
 * refs_watch.h - a change count of a repository's refs: a number that
 * moves whenever a ref of the repository may have changed, read without
 * looking a ref up (refs_watch.c says how, and why it is exact).
 *
 * Not thread-safe: one caller at a time per watch (the namespace keeps one
 * under its own lock). Any thread.
 */
#ifndef PACKETFS_REFS_WATCH_H
#define PACKETFS_REFS_WATCH_H

#include <stdint.h>

struct refs_watch;

/*
 * A watch of the refs of the repository at path (a work tree, a linked
 * worktree or a git directory; copied), into *out, which the caller frees
 * with refs_watch_close. The watches themselves are set up at the first
 * refs_watch_count. Returns 0 or -ENOMEM.
 */
int refs_watch_open(const char *path, struct refs_watch **out);

/*
 * The change count of the refs as they are now: a number >= 1 that differs
 * from every earlier answer once any change to the refs has completed
 * (a ref or packed-refs written, renamed over, deleted; a directory of refs
 * made or removed; the repository made anew at the path, or the path made
 * to name another) before this call began, and stays the same while none
 * did. Changes no ref follows from (the index, lock files, objects, the
 * worktrees' own files) may move it too. 0 when the refs cannot be watched
 * now (no repository at the path; a file system other than a local one; a
 * symbolic link among the refs; inotify's limits reached): the caller must
 * then look the refs up. The watch tries again at a later call, a second
 * after the failure, then twice as long after each further one, up to a
 * minute. Counts of two watches are unrelated.
 */
uint64_t refs_watch_count(struct refs_watch *w);

/* The path the watch was opened for. */
const char *refs_watch_path(const struct refs_watch *w);

/* Frees w and its watches; NULL does nothing. */
void refs_watch_close(struct refs_watch *w);

#endif
