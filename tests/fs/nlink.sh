#!/usr/bin/env bash
# Link counts as on a local disk: a document has 1; a directory 2 plus one for each directory
# in it (its ".."), an item directory counting its fixed stages/, validation/ and .history/;
# mkdir, rmdir and rename move the counts of the directories they touch; a document open after
# its unlink has 0 (fstat), and its content stays readable through the open descriptor.
. "$(dirname "$0")/../lib.sh"
mount_item
nl()
{
	stat -c %h "$1"
}
printf 'x\n' >"$d/doc.md"
assert_eq 1 "$(nl "$d/doc.md")" "a document's link count"
assert_eq 5 "$(nl "$d")" "a new item directory (., its entry, stages/, validation/, .history/)"
mkdir -p "$d/a/b" "$d/a/c" "$d/e"
assert_eq 7 "$(nl "$d")" "the item directory with two directories in it"
assert_eq 4 "$(nl "$d/a")" "a directory with two directories in it"
assert_eq 2 "$(nl "$d/a/b")" "an empty directory"
mv "$d/a/c" "$d/e/c" || fail "mv a/c e/c"
assert_eq 3 "$(nl "$d/a")" "a/ after a directory moved out"
assert_eq 3 "$(nl "$d/e")" "e/ after a directory moved in"
rmdir "$d/a/b" || fail "rmdir a/b"
assert_eq 2 "$(nl "$d/a")" "a/ after rmdir of its directory"
# After a remount too (the counts come from the store).
umount_store
mount_store
assert_eq 7 "$(nl "$d")" "the item directory after a remount"
assert_eq 3 "$(nl "$d/e")" "e/ after a remount"
out=$(python3 - "$d/gone.md" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"still here\n")
before = os.fstat(fd).st_nlink
os.unlink(sys.argv[1])
after = os.fstat(fd).st_nlink
os.lseek(fd, 0, 0)
print(before, after, os.read(fd, 100).decode().strip())
os.close(fd)
PY
) || fail "unlink while open: $out"
assert_eq "1 0 still here" "$out" "link counts before and after unlink of an open document, and its content"
[ ! -e "$d/gone.md" ] || fail "gone.md still has a name"
exit 0
