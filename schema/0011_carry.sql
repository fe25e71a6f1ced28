-- packetfs store, version 11: registry lines carried in from another store by
-- `packetfs import` (SPEC §6: imported runs count only where their log hash
-- verifies and their head is the item's head).
-- A carried line is stored as it was written, so that registry.jsonl stays
-- byte for byte what was exported. One that verified (its run and log came
-- with it, the log's sha256 matches, it ran at the imported head) is an
-- 'engine' line of its restored run. One that did not is 'imported': kept and
-- shown, never counted, with the reason in why (evidence reads it with
-- "source":"imported" and why as its note; store_registry_since). SQLite
-- cannot change a CHECK constraint in place, so the table is made again, its
-- rows, ids, index and append-only triggers with it.
CREATE TABLE registry_v11 (
  id      INTEGER PRIMARY KEY,
  item_id INTEGER NOT NULL REFERENCES items(id),
  line    TEXT NOT NULL,
  source  TEXT NOT NULL CHECK (source IN ('engine', 'external', 'imported')),
  run_id  INTEGER REFERENCES runs(id),
  why     TEXT NOT NULL DEFAULT ''
);
INSERT INTO registry_v11(id, item_id, line, source, run_id)
  SELECT id, item_id, line, source, run_id FROM registry ORDER BY id;
DROP TABLE registry;
ALTER TABLE registry_v11 RENAME TO registry;
CREATE INDEX registry_item ON registry(item_id, id);
CREATE TRIGGER registry_no_update BEFORE UPDATE ON registry
  BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;
CREATE TRIGGER registry_no_delete BEFORE DELETE ON registry
  BEGIN SELECT RAISE(ABORT, 'registry is append-only'); END;
