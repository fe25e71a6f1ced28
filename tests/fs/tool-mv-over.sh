#!/usr/bin/env bash
# mv renames documents as on a local disk: over an existing document (the target has the
# source's content and size, the source is gone, the listing holds the target once, a reader
# that had the old target open keeps reading the old content), onto a new name, into a
# subdirectory and back; RENAME_NOREPLACE onto an existing name is EEXIST and a rename across
# items is EXDEV, both leaving everything as it was; all of it survives a remount.
. "$(dirname "$0")/../lib.sh"
mount_item
new_item fix-2
d=$M/fix-1

# Over an existing, longer target whose content was just read.
printf 'old target content, longer than the source\n' >"$d/b.md"
printf 'new\n' >"$d/a.md"
assert_file_eq "$d/b.md" $'old target content, longer than the source\n'
mv -f "$d/a.md" "$d/b.md"
assert_doc "$d/b.md" $'new\n'
[ ! -e "$d/a.md" ] || fail "a.md still exists after mv over b.md"
assert_fails_with ENOENT cat "$d/a.md"
assert_eq "b.md " "$(doc_names "$d")" "documents after mv a.md over b.md"

# Over a target that a reader holds open: the reader keeps the old content.
printf 'replaced\n' >"$d/c.md"
printf 'held open\n' >"$d/held.md"
python3 - "$d/c.md" "$d/held.md" <<'PY' || fail "mv over an open document"
import os, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
fd = os.open(dst, os.O_RDONLY)
assert os.pread(fd, 100, 0) == b"held open\n"
subprocess.run(["mv", "-f", src, dst], check=True)
with open(dst, "rb") as f:
    assert f.read() == b"replaced\n", "target after mv"
got = os.pread(fd, 100, 0)
assert got == b"held open\n", "the open descriptor of the replaced file reads %r" % got
os.close(fd)
PY
assert_doc "$d/held.md" $'replaced\n'
assert_eq "b.md held.md " "$(doc_names "$d")" "documents after mv c.md over held.md"

# Onto a new name.
mv "$d/b.md" "$d/moved.md"
assert_doc "$d/moved.md" $'new\n'
[ ! -e "$d/b.md" ] || fail "b.md still exists after mv to moved.md"
assert_eq "held.md moved.md " "$(doc_names "$d")" "documents after mv b.md moved.md"

# Into a subdirectory, over a document there, and back.
mkdir "$d/drafts"
printf 'draft to be replaced\n' >"$d/drafts/moved.md"
mv -f "$d/moved.md" "$d/drafts/moved.md"
assert_doc "$d/drafts/moved.md" $'new\n'
assert_eq "moved.md " "$(ls -A "$d/drafts" | tr '\n' ' ')" "listing of drafts/"
assert_eq "drafts held.md " "$(doc_names "$d")" "documents after mv into drafts/"
mv "$d/drafts/moved.md" "$d/moved.md"
assert_doc "$d/moved.md" $'new\n'
assert_eq "" "$(ls -A "$d/drafts")" "listing of drafts/ after mv back"

# mv --no-clobber through renameat2(RENAME_NOREPLACE): EEXIST, both unchanged.
assert_fails_with EEXIST python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 1) != 0:
    sys.exit(os.strerror(ctypes.get_errno()))
' "$d/moved.md" "$d/held.md"
assert_doc "$d/held.md" $'replaced\n'
assert_doc "$d/moved.md" $'new\n'

# Across items: EXDEV, and both sides unchanged.
assert_fails_with EXDEV python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' \
	"$d/moved.md" "$M/fix-2/moved.md"
assert_doc "$d/moved.md" $'new\n'
[ ! -e "$M/fix-2/moved.md" ] || fail "moved.md appeared in fix-2"
# mv(1) falls back to copy and unlink on EXDEV.
mv "$d/moved.md" "$M/fix-2/moved.md"
assert_doc "$M/fix-2/moved.md" $'new\n'
[ ! -e "$d/moved.md" ] || fail "moved.md still in fix-1 after mv to fix-2"

umount_store
mount_store
d=$M/fix-1
assert_doc "$d/held.md" $'replaced\n'
assert_doc "$M/fix-2/moved.md" $'new\n'
assert_eq "drafts held.md " "$(doc_names "$d")" "documents of fix-1 after remount"
assert_eq "moved.md " "$(doc_names "$M/fix-2")" "documents of fix-2 after remount"
exit 0
