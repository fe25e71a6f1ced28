-- packetfs store, version 15: the whole content of a current revision is
-- rewritten in place (engine/store/store_rev.c, whole_put). A row of whole
-- is a slot of its own, which a document keeps from one revision to the
-- next, named by the current revision (revisions.slot; NULL for every
-- other revision, and for empty content, which needs no row), no longer
-- keyed by the revision: SQLite rewrites a row whose key and size stay the
-- same page by page, writing only the pages whose bytes changed, so that
-- an append to a document writes the page or two it changed instead of a
-- new copy of the document and the pages the old copy freed. content is
-- padded with zeros to the row's room; revisions.size says how much of it
-- is the revision's. (Read-only opens of an older store see these columns
-- through temporary views instead; engine/store.c, compat.) The step of
-- migration 0008 (store__rev_compact) runs after this one.
ALTER TABLE revisions ADD COLUMN slot INTEGER;
CREATE TABLE whole_v15 (
  slot    INTEGER PRIMARY KEY,
  content BLOB NOT NULL
);
INSERT INTO whole_v15(slot, content) SELECT rev_id, content FROM whole;
UPDATE revisions SET slot = id WHERE id IN (SELECT rev_id FROM whole);
DROP TABLE whole;
ALTER TABLE whole_v15 RENAME TO whole;
