#!/usr/bin/env bash
# fallocate(2) on documents as on ext4 (SPEC §3): `fallocate -l 1M` makes a 1 MiB file of zeros,
# KEEP_SIZE leaves size and bytes alone, punch-hole and zero-range zero their range (zero-range
# also extends), os.posix_fallocate extends; past the per-document size limit it is EFBIG and
# changes nothing; the registry (append-only) is EPERM; other modes are EOPNOTSUPP; views are
# read-only. The results are stored (they survive a remount).
. "$(dirname "$0")/../lib.sh"
command -v fallocate >/dev/null || { echo "SKIP: fallocate(1) is missing" >&2; exit 77; }
EXTRA='"max_doc_size": 2097152,' std_item 01-build

fallocate -l 1M "$d/big.bin" || fail "fallocate -l 1M failed"
assert_eq 1048576 "$(stat -c %s "$d/big.bin")" "size after fallocate -l 1M"
cmp -n 1048576 /dev/zero "$d/big.bin" || fail "big.bin is not all zeros"

printf 'abcdefghijklmnopqrstuvwxyz' >"$d/notes.md"
fallocate -n -l 4096 "$d/notes.md" || fail "fallocate --keep-size failed"
assert_file_eq "$d/notes.md" "abcdefghijklmnopqrstuvwxyz"
revs_before=$(ls "$d/.history" | grep -c '^notes.md@')
fallocate -p -o 2 -l 3 "$d/notes.md" || fail "fallocate --punch-hole failed"
assert_eq 6162000000666768696a6b6c6d6e6f707172737475767778797a "$(hex_of "$d/notes.md")" \
	"bytes after punching [2, 5)"
fallocate -z -o 24 -l 4 "$d/notes.md" || fail "fallocate --zero-range failed"
assert_eq 6162000000666768696a6b6c6d6e6f70717273747576777800000000 "$(hex_of "$d/notes.md")" \
	"bytes after zeroing [24, 28) (size 28)"
# A KEEP_SIZE that changes nothing adds no revision.
revs_mid=$(ls "$d/.history" | grep -c '^notes.md@')
fallocate -n -l 100 "$d/notes.md" || fail "fallocate --keep-size failed"
assert_eq "$revs_mid" "$(ls "$d/.history" | grep -c '^notes.md@')" "revisions after a no-op fallocate"
[ "$revs_mid" -gt "$revs_before" ] || fail "punch and zero-range stored no revision"

python3 - "$d/py.md" <<'PY' || fail "os.posix_fallocate"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"head")
os.posix_fallocate(fd, 0, 4000)
assert os.fstat(fd).st_size == 4000, os.fstat(fd).st_size
os.close(fd)
with open(sys.argv[1], "rb") as f:
    got = f.read()
assert got == b"head" + b"\0" * 3996, got[:16]
PY

# Past the size limit: EFBIG, nothing changed.
assert_fails_with EFBIG fallocate -l 3M "$d/notes.md"
assert_eq 28 "$(stat -c %s "$d/notes.md")" "size after a refused fallocate"
# Modes ext4 has but documents do not (collapse, insert): EOPNOTSUPP.
assert_fails_with "Operation not supported" fallocate -c -o 0 -l 4096 "$d/big.bin"
# The registry is append-only; views are read-only.
assert_fails_with EPERM fallocate -l 4096 "$r"
assert_eq 0 "$(stat -c %s "$r")" "registry size after a refused fallocate"
assert_fails_with EACCES fallocate -l 4096 "$d/status"

umount_store
mount_store
d=$M/fix-1
assert_eq 1048576 "$(stat -c %s "$d/big.bin")" "big.bin after remount"
assert_eq 6162000000666768696a6b6c6d6e6f70717273747576777800000000 "$(hex_of "$d/notes.md")" \
	"notes.md after remount"
assert_eq 4000 "$(stat -c %s "$d/py.md")" "py.md after remount"
exit 0
