-- packetfs store, version 19: the content of a long current revision goes on
-- in pieces (engine/store/store_whole.c). A row of whole_pieces holds the
-- bytes of slot's content from start up to the next piece's start (the last
-- one: up to its revision's size), padded with zeros to its room as a row of
-- whole is; the row of whole holds the bytes before the first piece. An
-- append then writes into the last piece, whose overflow chain SQLite walks,
-- not the whole document's (a `>>` onto an 8 MiB document walked 8,192
-- pages a line). A rowid table: incremental blob I/O needs one. No row of a
-- store before this version has a piece; a row of whole deleted takes its
-- pieces with it.
CREATE TABLE whole_pieces (
  id      INTEGER PRIMARY KEY,
  slot    INTEGER NOT NULL,
  start   INTEGER NOT NULL,
  content BLOB NOT NULL,
  UNIQUE (slot, start)
);
CREATE TRIGGER whole_pieces_gone AFTER DELETE ON whole
  BEGIN DELETE FROM whole_pieces WHERE slot = old.slot; END;
-- The step of migration 0008 (store__rev_compact), which reads this table,
-- now runs after this one (store.c, compact_step).
