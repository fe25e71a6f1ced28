-- packetfs store, version 20: a revision that stopped being current by a
-- rename over its name or an unlink is encoded later, not inside that
-- transaction (engine/store/store_later.c): its id waits in retire_later,
-- its content whole in its row of whole (revisions.slot stays set, enc 0),
-- read as a current one's is, until a thread of the mount retires it
-- (store_retire.c) in a transaction of its own. A row of revisions
-- deleted takes its row here with it, so that no id waits here that a new
-- revision may take.
CREATE TABLE retire_later (
  rev_id  INTEGER PRIMARY KEY
);
CREATE TRIGGER retire_later_gone AFTER DELETE ON revisions
  BEGIN DELETE FROM retire_later WHERE rev_id = old.id; END;
