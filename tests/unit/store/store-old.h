/*
 * store-old.h - what the store tests share (store-old.c): opening a
 * store, and making the store of an older packetfs out of a current one.
 */
#ifndef PACKETFS_STORE_OLD_H
#define PACKETFS_STORE_OLD_H

struct item;
struct store;

/* Opens the store in dir (store_open: create, readonly); fails the test
 * when it cannot. The caller closes it with store_close. */
struct store *test_store_open(const char *dir, int create, int readonly);

/* Opens the store in dir (test_store_open, not created) and reads the
 * item name into *it (item_clear it). Fails the test when it cannot. */
struct store *test_store_item(const char *dir, int readonly, const char *name, struct item *it);

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
