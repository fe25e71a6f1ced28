#!/usr/bin/env bash
# Every engine registry line carries the sha256 of its stored log (header to footer, as read
# through the mount afterwards) and the head commit it ran at, whatever the run's end:
# validated, failing, blocked by exit 77, blocked without running (no GPU), timed out, and
# cancelled by a rerun that is cancelled. packetfs check agrees.
. "$(dirname "$0")/../lib.sh"
export GATE_DIR=$T/gates
mkdir -p "$GATE_DIR"
std_item 01-build 03-fail 04-gpu 06-prereq 07-slow

ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state at the review gate"
head=$(worktree_head fix-1)

# A rerun of 09-gated, cancelled while it waits.
ctl "$M" fix-1 "rerun 09-gated"
wait_for bash -c 'ls "$1" | grep -q -- "-09-gated-"' _ "$d/validation/logs"
ctl "$M" fix-1 cancel
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=09-gated)" = 1 ]' _ "$FIXTURES/registry.py" "$r"
settled fix-1 >/dev/null

# expect RECIPE STATUS : the line of RECIPE has STATUS, the item's head, iteration 1, and the
# sha256 of its log, which ends with the engine's footer.
expect()
{
	local log
	assert_eq "$2" "$(reg field "$r" -1 status recipe="$1")" "status of $1"
	assert_eq "$head" "$(reg field "$r" -1 head recipe="$1")" "head of $1"
	assert_eq 1 "$(reg field "$r" -1 iteration recipe="$1")" "iteration of $1"
	log=$d/$(reg field "$r" -1 evidence recipe="$1")
	[ -f "$log" ] || fail "$1: no log at $log"
	assert_eq "$(file_sha256 "$log")" "$(reg field "$r" -1 log_sha256 recipe="$1")" \
		"log_sha256 of $1"
	assert_contains "$(tail -n 1 "$log")" "# packetfs: status $2" "last line of the $1 log"
	assert_contains "$(head -n 2 "$log")" "# recipe: $1" "header of the $1 log"
}
expect 01-build validated
expect 03-fail failing
expect 04-gpu blocked
expect 06-prereq blocked
expect 07-slow timed_out
expect 09-gated cancelled
assert_eq 6 "$(reg count "$r" source=engine)" "engine lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

umount_store
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check failed: $out"
assert_eq "store is consistent" "$out" "packetfs check"
exit 0
