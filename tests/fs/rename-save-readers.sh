#!/usr/bin/env bash
# test-timeout: 120
# Readers of a document saved again and again by temp file and rename (sed -i, Python's atomic
# writes, an agent's Write tool) each read exactly one saved version, as on a local disk: never
# pages of two versions. An open racing a rename over the document used to resolve the replaced
# inode to the new document while other handles of that inode still read the old one, and the
# kernel's page cache of that inode then mixed both. Also run under ThreadSanitizer
# (fs/tsan-concurrent). Open errors are printed: ESTALE can remain where the writer renames
# twice within one open and no handle holds the replaced file (the kernel retries once).
. "$(dirname "$0")/../lib.sh"
mount_item
python3 "$FIXTURES/rename_readers.py" "$d/notes.md" "${PFS_RENAME_READERS_SECONDS:-15}" ||
	fail "a reader saw a mix of saved versions, or a save failed (above)"
exit 0
