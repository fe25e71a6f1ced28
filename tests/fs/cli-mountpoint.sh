#!/usr/bin/env bash
# `packetfs log`, `check` and `export` take a mount point (also one given relatively, with a
# trailing slash, or whose daemon died) as well as the store it shows, and say the same of it;
# a directory that is neither is refused with the store's error.
. "$(dirname "$0")/../lib.sh"
mount_item
printf 'the plan\n' >"$d/plan.md"

for where in "$M" "$M/" "$(realpath --relative-to=. "$M")"; do
	out=$("$PFS" log "$where" fix-1 plan.md 2>&1) || fail "packetfs log $where failed: $out"
	assert_contains "$out" "plan.md@" "packetfs log $where"
	assert_eq "$("$PFS" log "$STORE" fix-1)" "$("$PFS" log "$where" fix-1)" "log of $where and of the store"
	out=$("$PFS" check "$where" 2>&1) || fail "packetfs check $where failed: $out"
	assert_eq "$("$PFS" check "$STORE")" "$out" "check of $where and of the store"
	rm -rf "$T/out"
	out=$("$PFS" export "$where" fix-1 "$T/out" 2>&1) || fail "packetfs export $where failed: $out"
	assert_file_eq "$T/out/plan.md" $'the plan\n'
done
out=$("$PFS" log "$M" nosuch 2>&1) && fail "packetfs log of an unknown item succeeded"
assert_contains "$out" "packetfs: log: nosuch: no such item"

# A mount whose daemon is gone still names its store.
kill -9 "$DAEMON"
wait_gone "$DAEMON"
forget_daemon "$DAEMON"
out=$("$PFS" log "$M" fix-1 plan.md 2>&1) || fail "packetfs log of a dead mount failed: $out"
assert_contains "$out" "plan.md@" "packetfs log of a dead mount"
rm -rf "$T/out"
out=$("$PFS" export "$M" fix-1 "$T/out" 2>&1) || fail "packetfs export of a dead mount failed: $out"
assert_file_eq "$T/out/plan.md" $'the plan\n'
fusermount3 -u -z "$M"

# A plain directory is no store.
mkdir "$T/plain"
out=$("$PFS" check "$T/plain" 2>&1) && fail "packetfs check of a plain directory succeeded: $out"
assert_contains "$out" "packetfs: check: "
exit 0
