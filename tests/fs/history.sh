#!/usr/bin/env bash
# Every revision of a document is kept: .history/PATH@REV holds each one (read-only), unlink
# keeps the history, and `packetfs log` lists the revisions.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1

# One open and one close per save (cp), so each save is one revision.
for v in one two three; do
	echo "version $v" >"$T/plan-$v"
	cp "$T/plan-$v" "$d/plan.md"
done
assert_file_eq "$d/plan.md" $'version three\n'
listing=$(ls "$d/.history")
for r in 1 2 3; do
	echo "$listing" | grep -qx "plan.md@$r" || fail ".history lacks plan.md@$r: $listing"
done
assert_file_eq "$d/.history/plan.md@1" $'version one\n'
assert_file_eq "$d/.history/plan.md@2" $'version two\n'
assert_file_eq "$d/.history/plan.md@3" $'version three\n'
[ ! -e "$d/.history/plan.md@4" ] || fail "a fourth revision exists after three writes"

assert_fails_with EACCES sh_write "$d/.history/plan.md@1" "rewritten history"
assert_file_eq "$d/.history/plan.md@1" $'version one\n'

out=$("$PFS" log "$STORE" fix-1 plan.md 2>&1) || fail "packetfs log failed: $out"
[ "$(printf '%s\n' "$out" | grep -c .)" -ge 3 ] || fail "packetfs log lists fewer than 3 lines: $out"
out=$("$PFS" log "$STORE" no-such-item 2>&1) && fail "packetfs log of an unknown item succeeded"
assert_contains "$out" "packetfs: " "error of packetfs log for an unknown item"

# A save through a shell redirection is kept as the latest revision.
echo "version four" >"$d/plan.md"
last=$(ls "$d/.history" | sed -n 's/^plan\.md@//p' | sort -n | tail -n 1)
assert_file_eq "$d/.history/plan.md@$last" $'version four\n'

# Unlinking keeps the history.
rm "$d/plan.md"
[ ! -e "$d/plan.md" ] || fail "plan.md still there after rm"
assert_file_eq "$d/.history/plan.md@3" $'version three\n'
assert_file_eq "$d/.history/plan.md@$last" $'version four\n'

# Revisions survive a remount.
umount_store
mount_store
assert_file_eq "$M/fix-1/.history/plan.md@2" $'version two\n'
exit 0
