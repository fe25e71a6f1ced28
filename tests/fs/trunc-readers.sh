#!/usr/bin/env bash
# test-timeout: 120
# Readers of a document that a shell rewrites with `cat NEXT > DOC` in a loop read what a
# local disk shows them: a whole version, an empty file, a prefix of the new version, or pages of
# an older version followed by a newer one's (tests/fixtures/trunc_readers.py), never zero bytes.
# The kernel sets the size to 0 only once the O_TRUNC open has returned; a page-cache read sent
# before that and answered short after the truncation was kept as zero-filled pages below the
# old size whenever an attribute reply made before the truncation was taken meanwhile, and every
# reader that found those pages read zeros (2-3 times in 90 s before packet_doc.c's
# "Truncation"). PFS_TRUNC_READERS_SECONDS runs it longer (default 10).
. "$(dirname "$0")/../lib.sh"
mount_item
mkdir "$T/versions"
python3 "$FIXTURES/trunc_readers.py" "$d/notes.md" "$T/versions" \
	"${PFS_TRUNC_READERS_SECONDS:-10}" || {
	rc=$?
	[ "$rc" = 1 ] && fail "a reader read bytes no version holds (above)"
	fail "the rewrites or the readers failed (exit $rc, above)"
}
exit 0
