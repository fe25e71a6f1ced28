/*
 * store-old.h - what the store tests share (store-old.c): opening a
 * store (with a new item), a new run, a revision's content checked, and
 * making the store of an older packetfs out of a current one.
 */
#ifndef PACKETFS_STORE_OLD_H
#define PACKETFS_STORE_OLD_H

#include <stddef.h>
#include <stdint.h>

struct item;
struct run;
struct store;

/* Opens the store in dir (store_open: create, readonly); fails the test
 * when it cannot. The caller closes it with store_close. */
struct store *test_store_open(const char *dir, int create, int readonly);

/* Opens the store in dir (test_store_open, not created) and reads the
 * item name into *it (item_clear it). Fails the test when it cannot. */
struct store *test_store_item(const char *dir, int readonly, const char *name, struct item *it);

/* Opens (creates) the store in dir and makes the item name in it (branch
 * packetfs/NAME on main, the default owner, mode 0755), its id in *id.
 * Fails the test when it cannot. The caller closes it (store_close). */
struct store *test_store_new_item(const char *dir, const char *name, int64_t *id);

/* Sets r to a new run of the item item_id, of kind ("stage", "recipe")
 * and name (copied), RUN_RUNNING, all else zero; run_clear frees it. */
void test_run_new(struct run *r, int64_t item_id, const char *kind, const char *name);

/* The integer in the first column of the first row sql gives, with path
 * bound to its parameter ?1 (through the store's statements, under its
 * lock). Fails the test when there is no row. */
int64_t test_query(struct store *s, const char *sql, const char *path);
/* Retires every revision that waits to be retired (store_later_run), so
 * that what follows sees each one encoded. */
void test_later_drain(struct store *s);

/* Fails the test unless revision rev of the document path of the item
 * item_id (store_rev_read; rev 0: the document itself, store_doc_read)
 * reads as the wlen bytes of want, with a NUL after them. */
void test_expect_rev(struct store *s, int64_t item_id, const char *path, int rev,
		     const void *want, size_t wlen);

/* Undoes the content part of schema/0008_compact.sql on the closed store
 * in dir: every revision stored whole again in revisions.content (decoded
 * through the store); store_old_downgrade drops the table and columns the
 * migration added. Fails the test on any error. */
void store_old_undo_compact(const char *dir);

/* Takes the closed store in dir back to schema version (1 or more): each
 * migration between it and the store's own version undone, newest first (the contents of
 * schema/0008_compact.sql by store_old_undo_compact, first), then runs extra (SQL, or NULL) on it, as a store
 * an older packetfs left. Fails the test on any error. */
void store_old_downgrade(const char *dir, int version, const char *extra);

#endif
