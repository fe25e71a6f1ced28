-- packetfs store, version 8: revisions stored compactly (SPEC §3; how and
-- why: engine/store/store_rev.c). A document's current revision stays
-- whole, in the table whole (so that the large rows are deleted whole and
-- their pages reused, and the rows of revisions stay small and dense); one
-- that stopped being current is encoded once, into revisions.content:
--   enc   0 whole, in the table whole (content is X''): current, or not
--           yet retired
--         1 whole, retired (encoding would not make it smaller)
--         2 zstd, alone
--         3 zstd, against the content of revision base as its prefix
--   base  the id of the revision a delta (enc 3) is decoded against; else
--         NULL (no REFERENCES clause: a column in one cannot be dropped)
--   depth the deltas to decode to read it (0 unless enc 3)
--   seq   1, 2, ... over the content revisions of a path (0: a tombstone);
--         it picks each delta's base
-- (Read-only opens of an older store see these columns and an empty table
-- whole through temporary views instead: every revision whole, in
-- content; engine/store.c, compat.) Revisions stored before are numbered
-- here, the current ones move to whole, and the migration's C step
-- (store__rev_compact) encodes the others, in the same transaction.
ALTER TABLE revisions ADD COLUMN enc INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN base INTEGER;
ALTER TABLE revisions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE revisions SET seq = w.n
  FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY item_id, path ORDER BY rev) AS n
        FROM revisions WHERE content IS NOT NULL) AS w
  WHERE revisions.id = w.id;
CREATE TABLE whole (
  rev_id  INTEGER PRIMARY KEY,
  content BLOB NOT NULL
);
INSERT INTO whole(rev_id, content)
  SELECT r.id, r.content FROM documents d JOIN revisions r ON r.id = d.rev_id
  WHERE r.content IS NOT NULL;
UPDATE revisions SET content = X'' WHERE id IN (SELECT rev_id FROM whole);
