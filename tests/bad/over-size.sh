#!/usr/bin/env bash
# A pipeline with a small max_doc_size: writes beyond it fail with EFBIG and what is stored
# stays intact; exactly the limit is fine.
. "$(dirname "$0")/../lib.sh"
EXTRA='"max_doc_size": 1024,' std_item 01-build 02-lint

head -c 1024 /dev/zero | tr '\0' a >"$T/exact"
cp "$T/exact" "$d/exact.md" || fail "a document of exactly the limit was refused"
cmp "$T/exact" "$d/exact.md" || fail "exact.md differs"

echo keep >"$d/notes.md"
assert_fails_with EFBIG bash -c 'head -c 2000 /dev/zero >> "$1"' _ "$d/notes.md"
size=$(stat -c %s "$d/notes.md")
[ "$size" -le 1024 ] || fail "notes.md grew past the limit: $size bytes"
assert_eq keep "$(head -n 1 "$d/notes.md")" "first line of notes.md"
assert_fails_with EFBIG truncate -s 1025 "$d/exact.md"
cmp "$T/exact" "$d/exact.md" || fail "exact.md changed after a refused truncate"
assert_fails_with EFBIG bash -c 'printf x | dd of="$1" bs=1 seek=1024 conv=notrunc status=none' _ \
	"$d/exact.md"
cmp "$T/exact" "$d/exact.md" || fail "exact.md changed after a refused write past the limit"
head -c 5000 /dev/urandom >"$T/big"
assert_fails_with EFBIG cp "$T/big" "$d/big.md"
size=$(stat -c %s "$d/big.md" 2>/dev/null || echo 0)
[ "$size" -le 1024 ] || fail "big.md stored past the limit: $size bytes"

umount_store
mount_store
cmp "$T/exact" "$M/fix-1/exact.md" || fail "exact.md differs after remount"
assert_eq keep "$(head -n 1 "$M/fix-1/notes.md")" "notes.md after remount"
exit 0
