#!/usr/bin/env bash
# truncate(1) and ftruncate as on a local disk: shrinking keeps exactly the head, growing fills
# with zero bytes (never the old bytes past the cut, even when they were just read), truncate
# to 0, os.truncate by path, ftruncate on an open descriptor then writes past the end (a hole
# of zeros), and the sizes and bytes survive a remount.
. "$(dirname "$0")/../lib.sh"
mount_item
f=$d/notes.md

printf 'abcdefghijklmnopqrstuvwxyz\n' >"$f"
assert_file_eq "$f" $'abcdefghijklmnopqrstuvwxyz\n'

truncate -s 10 "$f"
assert_eq 10 "$(stat -c %s "$f")" "size after truncate -s 10"
assert_file_eq "$f" "abcdefghij"

# Grow after the shrink: the new bytes are zeros, not the old "klmnop".
truncate -s 16 "$f"
assert_eq 16 "$(stat -c %s "$f")" "size after truncate -s 16"
assert_eq 6162636465666768696a000000000000 "$(hex_of "$f")" "bytes after growing to 16"

truncate -s -12 "$f"
assert_eq 4 "$(stat -c %s "$f")" "size after truncate -s -12"
assert_eq 61626364 "$(hex_of "$f")" "bytes after truncate -s -12"

truncate -s 0 "$f"
assert_eq 0 "$(stat -c %s "$f")" "size after truncate -s 0"
assert_file_eq "$f" ""

# A document of several pages, shrunk to mid-page and grown again across pages.
head -c 20000 /dev/urandom >"$T/big"
cp "$T/big" "$d/big.bin"
cmp "$T/big" "$d/big.bin" || fail "big.bin reads back differently"
truncate -s 5000 "$d/big.bin"
truncate -s 12000 "$d/big.bin"
head -c 5000 "$T/big" >"$T/want"
head -c 7000 /dev/zero >>"$T/want"
assert_eq 12000 "$(stat -c %s "$d/big.bin")" "size of big.bin after shrink and grow"
cmp "$T/want" "$d/big.bin" || fail "big.bin after shrink to 5000 and grow to 12000 is not head + zeros"

# ftruncate through python, on an open descriptor, and os.truncate by path.
printf '0123456789' >"$d/ft.md"
python3 - "$d/ft.md" <<'PY' || fail "ftruncate through python"
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR)
assert os.read(fd, 100) == b"0123456789"
os.ftruncate(fd, 4)
assert os.fstat(fd).st_size == 4, os.fstat(fd).st_size
assert os.pread(fd, 100, 0) == b"0123", os.pread(fd, 100, 0)
os.ftruncate(fd, 8)
assert os.fstat(fd).st_size == 8, os.fstat(fd).st_size
assert os.pread(fd, 100, 0) == b"0123\0\0\0\0", os.pread(fd, 100, 0)
# The file offset (10) is past the end now: a write there leaves a hole of zeros.
os.write(fd, b"Z")
assert os.fstat(fd).st_size == 11, os.fstat(fd).st_size
os.close(fd)
with open(p, "rb") as f:
    got = f.read()
assert got == b"0123\0\0\0\0\0\0Z", got
os.truncate(p, 2)
assert os.stat(p).st_size == 2
with open(p, "rb") as f:
    got = f.read()
assert got == b"01", got
with open(p, "r+b") as f:
    f.truncate(6)
    f.seek(0)
    got = f.read()
assert got == b"01\0\0\0\0", got
PY
assert_eq 6 "$(stat -c %s "$d/ft.md")" "size of ft.md"
assert_eq 303100000000 "$(hex_of "$d/ft.md")" "bytes of ft.md"

umount_store
mount_store
d=$M/fix-1
assert_eq 0 "$(stat -c %s "$d/notes.md")" "size of notes.md after remount"
assert_eq 12000 "$(stat -c %s "$d/big.bin")" "size of big.bin after remount"
cmp "$T/want" "$d/big.bin" || fail "big.bin differs after remount"
assert_eq 303100000000 "$(hex_of "$d/ft.md")" "bytes of ft.md after remount"
exit 0
