#!/usr/bin/env bash
# Documents behave like files on a local disk for the basic operations no tool-*.sh test covers:
# create, append with >>, writes at offsets without truncating, an empty document, documents in
# subdirectories, rm (and rmdir of a non-empty document directory refused), a document of
# several megabytes; the content survives a remount. (Overwrite shorter, truncate, fsync,
# touch, chmod, rename, copy and the rest: tests/fs/tool-*.sh.)
. "$(dirname "$0")/../lib.sh"
mount_item

echo "first line" >"$d/notes.md"
assert_file_eq "$d/notes.md" $'first line\n'
echo "second line" >>"$d/notes.md"
assert_file_eq "$d/notes.md" $'first line\nsecond line\n'
assert_eq 23 "$(stat -c %s "$d/notes.md")" "size after append"

# Write at an offset without truncating, inside the document and past its end.
printf 'XY' | dd of="$d/notes.md" bs=1 seek=1 conv=notrunc status=none
assert_file_eq "$d/notes.md" $'fXYst line\nsecond line\n'
assert_eq 23 "$(stat -c %s "$d/notes.md")" "size after dd at offset 1"
printf 'END' | dd of="$d/notes.md" bs=1 seek=25 conv=notrunc status=none
assert_eq 28 "$(stat -c %s "$d/notes.md")" "size after dd past the end"
assert_eq 0a0000454e44 "$(od -An -tx1 -j 22 "$d/notes.md" | tr -d ' \n')" \
	"bytes after dd past the end (a hole of zeros)"

# Empty file, then a file in a subdirectory.
: >"$d/empty.md"
[ -f "$d/empty.md" ] || fail "empty document missing"
assert_eq 0 "$(stat -c %s "$d/empty.md")" "size of an empty document"
mkdir "$d/notes"
echo deep >"$d/notes/a.md"
assert_file_eq "$d/notes/a.md" $'deep\n'
ls "$d/notes" | grep -qx a.md || fail "notes/a.md not listed"

# rm, then the name is gone.
echo scratch >"$d/scratch.md"
rm "$d/scratch.md"
[ ! -e "$d/scratch.md" ] || fail "scratch.md still exists after rm"
assert_fails_with ENOENT cat "$d/scratch.md"
ls -A "$d" | grep -qx scratch.md && fail "scratch.md still listed after rm"
assert_fails_with ENOTEMPTY rmdir "$d/notes"
assert_file_eq "$d/notes/a.md" $'deep\n'

# A large-ish document round trip (several FUSE write requests).
head -c 3000000 /dev/urandom >"$T/big"
cp "$T/big" "$d/big.bin"
cmp "$T/big" "$d/big.bin" || fail "big.bin differs after cp"

printf 'Fix the greeting.\n' >"$d/brief.md"
umount_store
mount_store
d=$M/fix-1
assert_file_eq "$d/brief.md" $'Fix the greeting.\n'
assert_file_eq "$d/notes/a.md" $'deep\n'
assert_eq 0 "$(stat -c %s "$d/empty.md")" "size of the empty document after remount"
assert_eq 28 "$(stat -c %s "$d/notes.md")" "size of notes.md after remount"
printf 'fXYst line\nsecond line\n\0\0END' >"$T/want"
cmp "$T/want" "$d/notes.md" || fail "notes.md differs after remount"
cmp "$T/big" "$d/big.bin" || fail "big.bin differs after remount"
[ ! -e "$d/scratch.md" ] || fail "removed document is back after remount"
exit 0
