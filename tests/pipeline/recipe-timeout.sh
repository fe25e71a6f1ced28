#!/usr/bin/env bash
# A recipe that runs past its "# timeout:" is stopped and recorded timed_out; the verdict is
# fail and no process of it is left.
. "$(dirname "$0")/../lib.sh"
std_item 07-slow

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
assert_eq 1 "$(reg count "$r" recipe=07-slow status=timed_out source=engine)" "timed_out lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=07-slow)")" "starting a long job" \
	"07-slow log"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "status verdict"
wait_for no_procs_in "$STORE/worktrees/fix-1"
exit 0
