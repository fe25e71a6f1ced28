#!/usr/bin/env bash
# A stage that exits 0 while leaving processes behind, some of them in sessions of their own
# and orphaned: the run ends them when it ends (and says so in its log), and it still succeeds.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../trees.sh"
pipeline_item "$(stage_json plan plan.md tree.sh "$T/pids" exit)"

ctl "$M" fix-1 advance
read_tree_pids "$T/pids" stage
wait_state "$M" fix-1 done
wait_tree_gone
check_status "$M" fix-1
assert_eq "" "$(status_field "$M" fix-1 last_error)" "last_error"
log=$(cat "$d"/stages/*-plan.log)
assert_contains "$log" "tree of ${TREE_PIDS[0]} ready" "plan log"
printf '%s\n' "$log" | grep -Eq '^\[packetfs\] ended [4-9] process\(es\) it left running \(signal 15\)$' ||
	fail "the plan log does not say that the leftovers were ended: $log"
last_line "$d/stages/1-plan.log" | grep -Eq '^\[packetfs\] exit code 0 after [0-9.]+ s$' ||
	fail "the plan log does not end with its footer: $log"
exit 0
