#!/usr/bin/env bash
# A shell redirection (`>`, open with O_TRUNC) over a longer document leaves nothing of the old
# content: exact bytes and size, also when the old content was just read (page cache), also as
# seen through a descriptor opened before the overwrite, and after a remount.
. "$(dirname "$0")/../lib.sh"
mount_item
f=$d/notes.md

# A long document, several pages, read once so that its pages are cached.
for i in $(seq 1 400); do
	printf 'old line %03d of the long document, padding padding padding\n' "$i"
done >"$T/long"
cp "$T/long" "$f"
cmp "$T/long" "$f" || fail "the long document reads back differently"
long_size=$(stat -c %s "$T/long")
assert_eq "$long_size" "$(stat -c %s "$f")" "size of the long document"

echo x >"$f"
assert_file_eq "$f" $'x\n'
assert_eq 2 "$(stat -c %s "$f")" "size after echo x > notes.md"
assert_eq 780a "$(od -An -tx1 "$f" | tr -d ' \n')" "bytes after echo x > notes.md"
assert_eq 0 "$(dd if="$f" bs=1 skip=2 status=none | wc -c)" "bytes past the new end"
assert_eq 2 "$(wc -c <"$f")" "bytes read through a fresh open"

# A reader that opened the document (and read all of it) before a shorter overwrite sees the
# short content and size afterwards, as on a local disk.
cp "$T/long" "$f"
python3 - "$f" <<'PY' || fail "a descriptor opened before the overwrite sees stale content"
import os, subprocess, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDONLY)
old = b""
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    old += b
assert len(old) > 20000, len(old)
subprocess.run(["bash", "-c", 'printf "short\\n" > "$1"', "_", p], check=True)
assert os.fstat(fd).st_size == 6, "fstat size %d after the overwrite" % os.fstat(fd).st_size
got = os.pread(fd, 100000, 0)
assert got == b"short\n", "pread from 0 after the overwrite: %r" % got[:80]
assert os.pread(fd, 100, 6) == b"", "bytes past the new end"
os.close(fd)
PY
assert_file_eq "$f" $'short\n'

# Shorter again, by printf without a newline, in a subdirectory.
mkdir "$d/sub"
cp "$T/long" "$d/sub/doc.md"
cat "$d/sub/doc.md" >/dev/null
printf 'y' >"$d/sub/doc.md"
assert_file_eq "$d/sub/doc.md" "y"
assert_eq 1 "$(stat -c %s "$d/sub/doc.md")" "size after printf y > sub/doc.md"

umount_store
mount_store
d=$M/fix-1
assert_file_eq "$d/notes.md" $'short\n'
assert_eq 6 "$(stat -c %s "$d/notes.md")" "size of notes.md after remount"
assert_file_eq "$d/sub/doc.md" "y"
assert_eq 1 "$(stat -c %s "$d/sub/doc.md")" "size of sub/doc.md after remount"
exit 0
