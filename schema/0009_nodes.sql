-- packetfs store, version 9: symbolic links, FIFOs, sockets and device
-- nodes in packets (SPEC §3: documents behave like files on a local disk).
-- Each live entry and each revision says what kind of file it is:
--   file     a document (every entry and revision before version 9)
--   symlink  a symbolic link; its content is the link's target
--   fifo, socket, char, block   a named pipe, a socket, a character or a
--            block device: no content (the kernel handles their I/O);
--            rdev holds a device's number as the kernel encodes dev_t
-- A tombstone records the kind of what it removed. (Read-only opens of an
-- older store see these columns through temporary views instead;
-- engine/store.c, compat.)
ALTER TABLE documents ADD COLUMN kind TEXT NOT NULL DEFAULT 'file';
ALTER TABLE documents ADD COLUMN rdev INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN kind TEXT NOT NULL DEFAULT 'file';
ALTER TABLE revisions ADD COLUMN rdev INTEGER NOT NULL DEFAULT 0;
