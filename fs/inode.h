/*
 * inode.h - the inode table of the mount: FUSE inode numbers <-> the
 * engine's normalised absolute paths.
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
 * Invariants: a path maps to at most one inode and an inode to at most one
 * path. unlink/rmdir drop the path of an inode (and of everything below it)
 * but the inode lives on, pathless, until the kernel forgets it. Inode
 * numbers are never reused during the life of a table; all inodes share
 * one generation number chosen when the table is made.
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
 * lookup to it. Stores its number in *ino. Returns 0 or -ENOMEM (nothing
 * changed).
 */
int inode_ref(struct inode_table *t, const char *path, uint64_t *ino);

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

/* The inode number of path when it is marked by inode_set_cached, else 0. */
uint64_t inode_peek_cached(struct inode_table *t, const char *path);

/* Takes n lookups back from ino; frees the inode when none are left. Unknown
 * numbers and the root are ignored. */
void inode_forget(struct inode_table *t, uint64_t ino, uint64_t n);

/*
 * A copy of the current path of ino in *out (caller frees). Returns 0,
 * -ENOENT when the number is unknown or its path was unlinked, or -ENOMEM.
 */
int inode_path(struct inode_table *t, uint64_t ino, char **out);

/*
 * Records a rename: the inode at to (if any) and everything below it lose
 * their paths, then the inode at from and everything below it are re-keyed
 * under to. Returns 0, or -ENOMEM, in which case from and everything below
 * it lose their paths instead (the kernel looks them up again) and the
 * table stays consistent.
 */
int inode_rename(struct inode_table *t, const char *from, const char *to);

/* Records an unlink or rmdir: path and everything below it lose their
 * paths. The inodes stay until forgotten. */
void inode_unlink(struct inode_table *t, const char *path);

/* The number of inodes in the table, the root included. */
size_t inode_count(struct inode_table *t);

#endif
