#!/usr/bin/env bash
# Documents behave like files on a local disk: create, append, overwrite shorter, truncate,
# writes at offsets, subdirectories, rm, fsync, touch, chmod; content survives a remount.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1

echo "first line" >"$d/notes.md"
assert_file_eq "$d/notes.md" $'first line\n'
echo "second line" >>"$d/notes.md"
assert_file_eq "$d/notes.md" $'first line\nsecond line\n'
assert_eq 23 "$(stat -c %s "$d/notes.md")" "size after append"

# Overwrite with shorter content: nothing of the old content is left.
printf 'short' >"$d/notes.md"
assert_file_eq "$d/notes.md" "short"
assert_eq 5 "$(stat -c %s "$d/notes.md")" "size after shorter overwrite"

truncate -s 3 "$d/notes.md"
assert_file_eq "$d/notes.md" "sho"
truncate -s 6 "$d/notes.md"
assert_eq 6 "$(stat -c %s "$d/notes.md")" "size after growing truncate"
assert_eq 73686f000000 "$(od -An -tx1 "$d/notes.md" | tr -d ' \n')" "bytes after growing truncate"

# Write at an offset without truncating.
printf 'XY' | dd of="$d/notes.md" bs=1 seek=1 conv=notrunc status=none
assert_eq 7358590000 "$(od -An -tx1 -N5 "$d/notes.md" | tr -d ' \n')" "bytes after dd at offset 1"
assert_eq 6 "$(stat -c %s "$d/notes.md")" "size after dd at offset"

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
rmdir "$d/notes" 2>/dev/null && fail "rmdir of a non-empty document directory succeeded"

# fsync, touch and chmod succeed and do what they say.
python3 - "$d/synced.md" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"synced\n")
os.fsync(fd)
os.close(fd)
PY
assert_file_eq "$d/synced.md" $'synced\n'
touch -d "2020-01-02 03:04:05 UTC" "$d/synced.md"
assert_eq 1577934245 "$(stat -c %Y "$d/synced.md")" "mtime after touch -d"
chmod 600 "$d/synced.md"
assert_eq 600 "$(stat -c %a "$d/synced.md")" "mode after chmod"

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
assert_file_eq "$d/synced.md" $'synced\n'
assert_eq 73585900 "$(od -An -tx1 -N4 "$d/notes.md" | tr -d ' \n')" "notes.md after remount"
cmp "$T/big" "$d/big.bin" || fail "big.bin differs after remount"
[ ! -e "$d/scratch.md" ] || fail "removed document is back after remount"
exit 0
