#!/usr/bin/env bash
# cancel ends every process of a stage, not only its process group: a child, a grandchild, a
# grandchild that setsid()s away and one that setsid()s away and is orphaned (re-parented to
# the daemon, a child subreaper) are all gone after the cancel; the stage run and the item's
# last_error say cancelled, with the signal.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../trees.sh"
pipeline_item "$(stage_json plan plan.md tree.sh "$T/pids")" "$(print_stage)"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 running
read_tree_pids "$T/pids" stage
# The leader (first) leads the stage's session; two of its descendants lead their own.
escaped=0
for p in "${TREE_PIDS[@]}"; do
	pid_alive "$p" || fail "stage process $p is not running before cancel"
	[ "$(cut -d' ' -f6 "/proc/$p/stat")" = "$p" ] && escaped=$((escaped + 1))
done
assert_eq 3 "$escaped" "processes of the stage leading sessions"
wait_for grep -q "tree of ${TREE_PIDS[0]} ready" "$d"/stages/*-plan.log

ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
wait_tree_gone
check_status "$M" fix-1
last_error=$(status_field "$M" fix-1 last_error)
assert_contains "$last_error" "plan: cancelled (signal 15)" "last_error"
log=$(cat "$d"/stages/*-plan.log)
assert_contains "$log" "[packetfs] ended by signal 15 (cancel)" "plan log"
for f in "$d"/stages/*-print.log; do
	[ -e "$f" ] && fail "print ran after a cancelled plan"
done
exit 0
