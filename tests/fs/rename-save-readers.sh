#!/usr/bin/env bash
# test-timeout: 120
# Readers of a document saved again and again by temp file and rename (sed -i, Python's atomic
# writes, an agent's Write tool) each read exactly one saved version, as on a local disk: never
# pages of two versions. An open racing a rename over the document used to resolve the replaced
# inode to the new document while other handles of that inode still read the old one, and the
# kernel's page cache of that inode then mixed both. No open fails either: one that found the
# name just before a save opens the replaced file, read-only (fs/rename-replaced-open); it used to
# fail with ESTALE when the writer saved twice within the kernel's one retry. Also run under
# ThreadSanitizer (fs/tsan-concurrent).
. "$(dirname "$0")/../lib.sh"
mount_item
python3 "$FIXTURES/rename_readers.py" "$d/notes.md" "${PFS_RENAME_READERS_SECONDS:-15}" ||
	fail "a reader saw a mix of saved versions, an open failed, or a save failed (above)"
exit 0
