/*
 * inode.h - the inode table of the mount: FUSE inode numbers <-> the
 * engine's normalised absolute paths (one or more: hard links).
 *
 * The engine addresses everything by path; the kernel by inode number. The
 * table gives each path the kernel has looked up a number (the root "/" is
 * INODE_ROOT, FUSE_ROOT_ID) and counts the kernel's lookups of it, as the
 * FUSE lookup/forget protocol requires: every reply that hands an inode to
 * the kernel (lookup, create, mkdir, mknod, readdirplus entries) adds one
 * lookup with inode_ref(); forget and forget_multi take them back with
 * inode_forget(). An inode is freed when its count reaches zero; the root
 * is never freed.
 *
 * Invariants: a path maps to at most one inode. An inode has one path, or
 * several when it stands for a file with hard links (a file the engine
 * numbers: struct pfs_stat's file_id), so that the kernel sees the names
 * of one file as one inode, as on a local disk (Linux expects link(2)'s
 * reply to name the linked inode). unlink/rmdir drop a path (and every
 * path below it) but the inode lives on, pathless when that was its last,
 * until the kernel forgets it. Inode numbers are never reused during the
 * life of a table; all inodes share one generation number chosen when the
 * table is made.
 *
 * Threads: every function may be called from any thread; one mutex inside
 * the table serialises them.
 */
#ifndef PACKETFS_INODE_H
#define PACKETFS_INODE_H

#include <stddef.h>
#include <stdint.h>

#define INODE_ROOT 1

struct inode_table;

/* Makes an empty table holding only the root "/". Returns 0 or -ENOMEM;
 * *out is freed with inode_table_free. */
int inode_table_new(struct inode_table **out);
/* Frees the table and every inode in it. NULL is allowed. */
void inode_table_free(struct inode_table *t);

/* The generation number of every inode of this table. */
uint64_t inode_generation(const struct inode_table *t);

/*
 * Finds or makes the inode of path (absolute, normalised) and adds one
 * lookup to it. Stores its number in *ino. file is the engine's number of
 * the file at path (struct pfs_stat's file_id), or 0 for none: a path the
 * table does not have becomes another path of the inode that stands for
 * file, when one does, and an inode that stands for no file yet (and
 * whose file no other inode stands for) stands for file from then on.
 * Returns 0 or -ENOMEM (nothing changed).
 */
int inode_ref(struct inode_table *t, const char *path, uint64_t file, uint64_t *ino);

/* The inode number of path without adding a lookup, or 0 when the table
 * has none for it. */
uint64_t inode_peek(struct inode_table *t, const char *path);

/* Marks ino as one whose attributes the kernel may cache (a reply gave
 * them a non-zero timeout). The mark stays until the inode is freed, and
 * follows it across renames. Unknown numbers are ignored. */
void inode_set_cached(struct inode_table *t, uint64_t ino);

/* Records whether ino is a leaf (no directory), as the latest reply that
 * handed it to the kernel said. A rename or unlink of a leaf's path then
 * touches that inode alone instead of walking the table for inodes below
 * it. Unknown numbers are ignored. */
void inode_set_leaf(struct inode_table *t, uint64_t ino, int leaf);

/* Whether ino is a leaf, as inode_set_leaf last recorded: 1 or 0 (0 also
 * for an unknown number and one never recorded). Any thread. */
int inode_is_leaf(struct inode_table *t, uint64_t ino);

/* Records that ino stands for the engine's file file (as inode_ref does),
 * unless it stands for one already or another inode stands for file. For
 * link(2): the linked inode stands for a file from then on. Unknown
 * numbers are ignored. */
void inode_set_file(struct inode_table *t, uint64_t ino, uint64_t file);

/* The inode number of path when it is marked by inode_set_cached, else 0. */
uint64_t inode_peek_cached(struct inode_table *t, const char *path);

/* Takes n lookups back from ino; frees the inode when none are left. Unknown
 * numbers and the root are ignored. n is at most the lookups ino holds (the
 * kernel forgets no more than it was given): asserted; a build without
 * asserts frees the inode then. */
void inode_forget(struct inode_table *t, uint64_t ino, uint64_t n);

/*
 * A copy of the current path of ino in *out (caller frees): its first one
 * left, when it has several. Returns 0, -ENOENT when the number is unknown
 * or every path of it was unlinked, or -ENOMEM.
 */
int inode_path(struct inode_table *t, uint64_t ino, char **out);

/*
 * Records a rename: the path to and every path below it go, then the path
 * from and every path below it are re-keyed under to. replaced, when not
 * NULL, is where the content of the file that to named can still be read
 * (engine_rename's replaced): its inode keeps a copy when the rename took
 * its last path (inode_replaced). Returns 0, or -ENOMEM, in which case
 * from and everything below it lose their paths instead (the kernel looks
 * them up again), nothing is kept of replaced, and the table stays
 * consistent.
 */
int inode_rename(struct inode_table *t, const char *from, const char *to, const char *replaced);

/*
 * Where the content of ino, a file a rename replaced, can still be read:
 * a copy of inode_rename's replaced in *out (caller frees). A process that
 * looked the name up before the rename can still open the file for
 * reading and stat it, as on a local disk, instead of getting ESTALE, which
 * the kernel retries only once (a document saved by rename in a loop can
 * be replaced again within that retry). 0, -ENOENT (an unknown number,
 * one with a path, or none kept) or -ENOMEM.
 */
int inode_replaced(struct inode_table *t, uint64_t ino, char **out);

/* Records an unlink or rmdir: path and every path below it go. The inodes
 * stay until forgotten. */
void inode_unlink(struct inode_table *t, const char *path);
/* Whether inode_unlink left ino without a path: removed, not moved (a
 * directory whose item was archived, an rmdir, what was below them), so
 * that what is asked through it finds nothing (ENOENT, as in a removed
 * directory on a local disk) instead of being looked up again (ESTALE).
 * 0 after a rename, for a file known as one (inode_set_leaf), and for an
 * unknown number. */
int inode_removed(struct inode_table *t, uint64_t ino);

/* The number of inodes in the table, the root included. */
size_t inode_count(struct inode_table *t);

#endif
