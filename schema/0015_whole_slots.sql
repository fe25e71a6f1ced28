-- packetfs store, version 15: the whole content of a current revision is
-- rewritten in place (engine/store/store_rev.c, whole_put). A row of whole
-- is keyed by a slot of its own, which a document keeps from one revision
-- to the next, no longer by the revision (rev_id, now a unique column):
-- SQLite rewrites a row whose key and size stay the same page by page,
-- writing only the pages whose bytes changed, so that an append to a
-- document writes the page or two it changed instead of a new copy of the
-- document (and the pages the old copy freed). content is padded with
-- zeros to the row's room; revisions.size says how much of it is the
-- revision's. (The queries of an older store read rev_id and content
-- alone, unpadded: nothing for a read-only open to stand in for.)
CREATE TABLE whole_v15 (
  slot    INTEGER PRIMARY KEY,
  rev_id  INTEGER NOT NULL UNIQUE,
  content BLOB NOT NULL
);
INSERT INTO whole_v15(rev_id, content) SELECT rev_id, content FROM whole ORDER BY rev_id;
DROP TABLE whole;
ALTER TABLE whole_v15 RENAME TO whole;
