-- packetfs store, version 7: revisions stored compactly (SPEC §3; how and
-- why: engine/store/store_rev.c). A document's current revision stays
-- whole; one that stopped being current is encoded once:
--   enc   0 whole, as written (current, or not yet retired)
--         1 whole, retired (encoding would not make it smaller)
--         2 zstd, alone
--         3 zstd, against the content of revision base as its prefix
--   base  the id of the revision a delta (enc 3) is decoded against; else
--         NULL (no REFERENCES clause: a column in one cannot be dropped)
--   depth the deltas to decode to read it (0 unless enc 3)
--   seq   1, 2, ... over the content revisions of a path (0: a tombstone);
--         it picks each delta's base
-- (Read-only opens of an older store see these columns through a temporary
-- view instead: every revision whole; engine/store.c, compat.) Revisions
-- stored before are numbered here and encoded by the migration's C step
-- (store__rev_compact), in the same transaction.
ALTER TABLE revisions ADD COLUMN enc INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN base INTEGER;
ALTER TABLE revisions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE revisions SET seq = w.n
  FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY item_id, path ORDER BY rev) AS n
        FROM revisions WHERE content IS NOT NULL) AS w
  WHERE revisions.id = w.id;
