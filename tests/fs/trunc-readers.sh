#!/usr/bin/env bash
# test-timeout: 180
# Readers of a document that a writer empties and rewrites in a loop read what a local disk
# shows them: a whole version, an empty file, a prefix of the new version, or pages of an older
# version followed by a newer one's, maybe after zero bytes up to a page boundary (a page read
# while the file was shorter: tests/fixtures/trunc_readers.py), never zeros to the end. The
# writer empties it three ways in turn: `cat NEXT > DOC` (an O_TRUNC open), `truncate -s` by path
# to a page boundary and to 0 then `>>`, and ftruncate(2) on its own descriptor.
# The kernel sets the new size only once the O_TRUNC open or the truncate has returned; a
# page-cache read sent before that and answered short after the truncation was kept as
# zero-filled pages below the old size, and every reader that found those pages read zeros
# (O_TRUNC: 2-3 times in 90 s before packet_doc.c's "Truncation"; truncate(2): about 10 reads
# in 10 s, ftruncate(2) about 100, before packet__od_cut). PFS_TRUNC_READERS_SECONDS runs each
# way longer (default 10).
. "$(dirname "$0")/../lib.sh"
python3 "$FIXTURES/trunc_readers.py" --check-kinds ||
	fail "the fixture misclassifies a read (above)"
mount_item
for how in otrunc truncate ftruncate; do
	mkdir "$T/versions-$how"
	python3 "$FIXTURES/trunc_readers.py" "$d/notes-$how.md" "$T/versions-$how" \
		"${PFS_TRUNC_READERS_SECONDS:-10}" "$how" || {
		rc=$?
		[ "$rc" = 1 ] && fail "$how: a reader read bytes no version holds (above)"
		fail "$how: the rewrites or the readers failed (exit $rc, above)"
	}
done
exit 0
