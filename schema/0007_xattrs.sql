-- packetfs store, version 7: extended attributes (SPEC §3: user.* xattrs,
-- kept in the store and across remounts). One row per attribute of a
-- document, a document directory (path as in documents) or an item
-- directory (path ''). The user namespace only: the name is stored whole,
-- "user." included. A row follows its entry through renames and goes with
-- it when the entry is removed (engine/store/store_doc.c).
CREATE TABLE xattrs (
  item_id INTEGER NOT NULL REFERENCES items(id),
  path    TEXT NOT NULL,
  name    TEXT NOT NULL,
  value   BLOB NOT NULL,
  PRIMARY KEY (item_id, path, name)
) WITHOUT ROWID;
