-- packetfs store, version 16: appends stored as their suffix (SPEC §3).
-- No table changes. A revision whose content is the previous revision's plus
-- more bytes may now be stored with revisions.enc = 4 (store_rev.c: the
-- added bytes, compressed against the last 4 KiB of its base). The version
-- moves so that an older packetfs, which cannot read such a revision,
-- refuses the store by its version instead of failing reads of its history
-- with EIO.
SELECT 1;
