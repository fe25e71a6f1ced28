#!/usr/bin/env bash
# Copying a tree into a packet and out again with cp -a, rsync -a and tar keeps content,
# names and mtimes.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1

src=$T/src
mkdir -p "$src/notes/deeper"
printf 'one\n' >"$src/notes/one.md"
printf 'two\n' >"$src/notes/deeper/two.md"
head -c 100000 /dev/urandom >"$src/notes/blob.bin"
touch -d "2021-06-01 12:00:00 UTC" "$src/notes/one.md"

cp -a "$src/notes" "$d/cp-notes"
diff -r "$src/notes" "$d/cp-notes" || fail "cp -a copy differs"
assert_eq "$(stat -c %Y "$src/notes/one.md")" "$(stat -c %Y "$d/cp-notes/one.md")" "mtime after cp -a"

rsync -a "$src/notes/" "$d/rsync-notes/" || fail "rsync into the packet failed"
diff -r "$src/notes" "$d/rsync-notes" || fail "rsync copy differs"
assert_eq "$(stat -c %Y "$src/notes/one.md")" "$(stat -c %Y "$d/rsync-notes/one.md")" \
	"mtime after rsync -a"
# rsync again after a change: its temp-file-then-rename update path.
printf 'one, changed\n' >"$src/notes/one.md"
rsync -a "$src/notes/" "$d/rsync-notes/" || fail "second rsync failed"
assert_file_eq "$d/rsync-notes/one.md" $'one, changed\n'
ls -A "$d/rsync-notes" | grep -q '^\.one\.md\.' && fail "rsync left a temp file behind"

mkdir "$T/out"
rsync -a "$d/rsync-notes/" "$T/out/" || fail "rsync out of the packet failed"
diff -r "$src/notes" "$T/out" || fail "rsync out differs"
tar -C "$d" -cf "$T/packet.tar" cp-notes || fail "tar of the packet failed"
tar -tf "$T/packet.tar" | grep -q 'cp-notes/deeper/two.md' || fail "tar lacks deeper/two.md"
exit 0
