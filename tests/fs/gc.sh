#!/usr/bin/env bash
# test-timeout: 240
# packetfs gc reclaims space under the retention rules (SPEC §2, §7). Two 64 MiB files written
# and deleted leave the store at over 128 MiB; gc (default: deleted more than 30 days ago) keeps
# them, gc --older-than 0 gives the space back, and the database files shrink to a fraction of a
# MiB. Temporary files that are no document now (vim's .NAME.swp and 4913, sed's sedXXXXXX,
# NAME~, NAME.tmp.PID.HEX, #NAME#; made by a real vim and sed -i, and by hand) go at any age; a live document keeps its whole history, a
# document renamed away keeps its history under the old name, a hard link whose other name was
# deleted keeps its content, a deleted document whose tombstone is 40 days old goes under the
# default rule. Evidence stays: the runs, their logs, the registry and the events are the same
# rows after gc. packetfs check is clean after it; gc of a mounted store (or of its mount point)
# is refused, changing nothing; a bad --older-than is a usage error.
. "$(dirname "$0")/../lib.sh"
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is missing" >&2; exit 77; }
pipeline_item "$(plan_stage 01-build)"
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
printf '%s\n' '{"recipe": "01-build", "status": "validated", "note": "a claim"}' >>"$r"

db=$STORE/packetfs.db
# files : the bytes of the database files.
files()
{
	local f total=0
	for f in "$db" "$db-wal" "$db-shm"; do
		[ -e "$f" ] && total=$((total + $(stat -c %s "$f")))
	done
	echo "$total"
}
# evidence : the evidence rows, whole (runs, logs, registry lines, events).
evidence()
{
	sqlite3 "$db" "SELECT * FROM runs ORDER BY id; SELECT run_id, off, hex(data) FROM log_chunks \
		ORDER BY 1, 2; SELECT * FROM registry ORDER BY id; SELECT * FROM events ORDER BY id" |
		sha256sum
}
# revs PATH : how many revisions the store holds of fix-1's PATH.
revs_of()
{
	sqlite3 "$db" "SELECT COUNT(*) FROM revisions WHERE item_id = (SELECT id FROM items WHERE \
		name = 'fix-1') AND path = '$1'"
}

# A live document with three revisions, then edited with vim (its swap file, its 4913 probe and
# its write backup on the mount) and with sed -i (its sedXXXXXX temp file renamed over it).
for n in 1 2 3; do
	printf 'notes %s\n' "$n" >"$d/notes.md"
done
if command -v vim >/dev/null 2>&1; then
	(cd "$d" && timeout 60 vim -u NONE -N -i NONE -es \
		-c "set swapfile directory=. backupdir=. backupskip= backupcopy=auto nobackup" \
		-c 's/notes 3/notes 3, vim/' -c wq notes.md </dev/null) || fail "vim on notes.md failed"
	edited="notes 3, vim"
else
	printf 'notes 3, vim\n' >"$d/notes.md"
	edited="notes 3, vim"
fi
sed -i 's/vim/vim, sed/' "$d/notes.md"
assert_file_eq "$d/notes.md" "$edited, sed"$'\n'
# A document renamed away.
printf 'old name\n' >"$d/old.md"
printf 'old name, again\n' >"$d/old.md"
mv "$d/old.md" "$d/new.md"
# Two names of one file; the first is written through, then deleted.
printf 'linked\n' >"$d/a.md"
ln "$d/a.md" "$d/b.md"
printf 'linked, more\n' >>"$d/a.md"
rm "$d/a.md"
# Temporary files, each written and deleted.
for t in .plan.md.swp 4913 sedAb3xZ9 notes.md~ 'notes.md.tmp.4242.1f9a3c' '#notes.md#'; do
	printf 'temporary\n' >"$d/$t"
	rm "$d/$t"
done
# A document deleted long ago (its tombstone made 40 days old below), one deleted now.
printf 'deleted long ago\n' >"$d/ancient.md"
rm "$d/ancient.md"
printf 'deleted now\n' >"$d/recent.md"
rm "$d/recent.md"
# Two 64 MiB files, written and deleted.
head -c 67108864 /dev/urandom >"$d/big1.bin"
head -c 67108864 /dev/urandom >"$d/big2.bin"
rm "$d/big1.bin" "$d/big2.bin"

# While mounted: refused, nothing changed.
rc=0
out=$("$PFS" gc "$STORE" --older-than 0 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "gc of a mounted store exited $rc, expected 1: $out"
assert_contains "$out" "packetfs: gc: " "gc of a mounted store"
assert_contains "$out" "mounted" "gc of a mounted store"
rc=0
out=$("$PFS" gc "$M" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "gc of a mount point exited $rc, expected 1: $out"
assert_contains "$out" "the store is mounted" "gc of a mount point"
umount_store
rc=0
out=$("$PFS" gc "$STORE" --older-than -1 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "gc --older-than -1 exited $rc, expected 2: $out"
assert_contains "$out" "packetfs: gc: --older-than: not a whole number" "gc --older-than -1"

sqlite3 "$db" "UPDATE revisions SET created_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-40 days') \
	WHERE path = 'ancient.md' AND content IS NULL"
evidence_before=$(evidence)
a_revs=$(revs_of a.md)
notes_revs=$(revs_of notes.md)
# paths_gone : the paths of fix-1 with revisions and no document, sorted, on one line.
paths_gone()
{
	sqlite3 "$db" "SELECT DISTINCT r.path FROM revisions r JOIN items i ON i.id = r.item_id \
		WHERE i.name = 'fix-1' AND NOT EXISTS (SELECT 1 FROM documents d WHERE \
		d.item_id = r.item_id AND d.path = r.path) ORDER BY r.path" | tr '\n' ' '
}
note "paths without a document before gc: $(paths_gone)"
before=$(files)
[ "$before" -gt $((128 * 1024 * 1024)) ] || fail "the store holds $before bytes, expected over 128 MiB"
note "store files before gc: $before bytes"

# The default: 30 days. The temporary files and the ancient document go; the rest stays.
out=$("$PFS" gc "$STORE" 2>&1) || fail "packetfs gc failed: $out"
note "$out"
for t in .plan.md.swp 4913 sedAb3xZ9 notes.md~ 'notes.md.tmp.4242.1f9a3c' '#notes.md#' ancient.md; do
	assert_eq 0 "$(revs_of "$t")" "revisions of $t after gc"
done
for p in big1.bin big2.bin recent.md; do
	assert_eq 2 "$(revs_of "$p")" "revisions of $p (deleted now) after the default gc"
done
assert_contains "$out" "reclaimed " "gc's words"
# Whatever vim and sed named their temporary files, none is left.
assert_eq "a.md big1.bin big2.bin old.md recent.md " "$(paths_gone)" \
	"the paths without a document after the default gc"
after30=$(files)
[ "$after30" -gt $((128 * 1024 * 1024)) ] ||
	fail "the default gc reclaimed the files deleted now: $after30 bytes"

# --older-than 0: every deleted document.
out=$("$PFS" gc "$STORE" --older-than 0 2>&1) || fail "packetfs gc --older-than 0 failed: $out"
note "$out"
assert_contains "$out" "reclaimed 6 revisions of 3 paths, " "gc --older-than 0's words"
assert_contains "$out" "store files: $after30 bytes before, " "gc --older-than 0's words"
for p in big1.bin big2.bin recent.md; do
	assert_eq 0 "$(revs_of "$p")" "revisions of $p after gc --older-than 0"
done
after=$(files)
note "store files after gc --older-than 0: $after bytes"
[ "$after" -lt $((2 * 1024 * 1024)) ] || fail "the store still holds $after bytes after gc"
assert_eq "$evidence_before" "$(evidence)" "the evidence rows after gc"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after gc: $out"
assert_contains "$out" "store is consistent" "packetfs check after gc"

# What stays reads back whole.
assert_eq "$notes_revs" "$(revs_of notes.md)" "revisions of the live notes.md"
assert_eq "a.md old.md " "$(paths_gone)" "the paths without a document after gc --older-than 0"
assert_eq 3 "$(revs_of old.md)" "revisions of old.md (renamed away)"
assert_eq "$a_revs" "$(revs_of a.md)" "revisions of a.md (deleted; b.md's content is one)"
mount_store
assert_file_eq "$M/fix-1/notes.md" "$edited, sed"$'\n'
assert_file_eq "$M/fix-1/.history/notes.md@1" $'notes 1\n'
assert_file_eq "$M/fix-1/new.md" $'old name, again\n'
assert_file_eq "$M/fix-1/.history/old.md@1" $'old name\n'
assert_file_eq "$M/fix-1/b.md" $'linked\nlinked, more\n'
assert_eq 1 "$(grep -c '"note":"a claim"' "$M/fix-1/validation/registry.jsonl")" "the external line"
[ -s "$M/fix-1/stages/1-plan.log" ] || fail "the plan's log is gone"
exit 0
