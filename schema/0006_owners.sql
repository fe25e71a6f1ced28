-- packetfs store, version 6: owners (SPEC §3: a team shares one mount).
-- Every document, directory and item directory has an owner and a group,
-- as on a local disk; an item directory also its permission bits (0755 for
-- every item before: its mode was fixed). (Read-only opens of an older
-- store see these columns through temporary views instead; engine/store.c,
-- compat.)
--
-- -1 stands for the store owner (uid: the user who mounts the store) or the
-- store's group (gid: the group of the store directory), whoever they are
-- at the mount: what every entry made before version 6 keeps, since the
-- mounting user owned everything then, and what the engine gives the
-- entries the mounting user makes.
ALTER TABLE documents ADD COLUMN uid INTEGER NOT NULL DEFAULT -1;
ALTER TABLE documents ADD COLUMN gid INTEGER NOT NULL DEFAULT -1;
ALTER TABLE items ADD COLUMN dir_uid INTEGER NOT NULL DEFAULT -1;
ALTER TABLE items ADD COLUMN dir_gid INTEGER NOT NULL DEFAULT -1;
ALTER TABLE items ADD COLUMN dir_mode INTEGER NOT NULL DEFAULT 493; -- 0755
-- MOUNT/learnings/ is the team's: writable by the store's group, and
-- set-group-ID, so that what a member puts there belongs to that group.
UPDATE items SET dir_mode = 1533 WHERE archived = 2; -- 02775
