-- packetfs store, version 10: hard links in packets (SPEC §3: documents
-- behave like files on a local disk).
-- Every name of a file is a row of documents, as before; the names of one
-- file (its hard links, made by link(2)) share a link number, unique in the
-- item, that names the file they are. 0: a name no link(2) ever touched,
-- the file's only one. The rows of one link number always hold the same
-- content revision, size, mode, owner, times, kind and rdev (and the same
-- extended attributes), which every change through any of the names writes
-- to all of them in one transaction; the file's link count is the number
-- of its rows. A write through a name adds a revision of that name, so the
-- history of each name is what was written through it, plus the revision
-- its link(2) made.
ALTER TABLE documents ADD COLUMN link INTEGER NOT NULL DEFAULT 0;
CREATE INDEX documents_link ON documents(item_id, link) WHERE link <> 0;
