-- packetfs store, version 2: access times of documents, and the times of
-- item directories. (Read-only opens of a version 1 store see these columns
-- through temporary views instead; engine/store.c, compat_v1.)

-- The access time of each live entry. packetfs keeps no access times on
-- read (as a noatime mount): a content write sets atime_ns to the write's
-- mtime_ns, utimens sets it explicitly, and a rename keeps it.
ALTER TABLE documents ADD COLUMN atime_ns INTEGER NOT NULL DEFAULT 0;
UPDATE documents SET atime_ns = mtime_ns;

-- The times of the item's directory MNT/<item>: mtime_ns and ctime_ns move
-- to now when an entry of the item's top level is created, removed or
-- renamed in or out; utimens sets them. (Views changing do not count.)
-- They start at the time the item was last updated, which is what the
-- directory reported before.
ALTER TABLE items ADD COLUMN dir_mtime_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN dir_ctime_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN dir_atime_ns INTEGER NOT NULL DEFAULT 0;
UPDATE items SET dir_mtime_ns =
  COALESCE(CAST(strftime('%s', updated_at) AS INTEGER), 0) * 1000000000;
UPDATE items SET dir_ctime_ns = dir_mtime_ns, dir_atime_ns = dir_mtime_ns;
