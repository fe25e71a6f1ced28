#!/usr/bin/env bash
# A recipe that leaves a process tree its process group cannot reach (a child, a grandchild, a
# grandchild that setsid()s away, one that setsid()s away and is orphaned) and runs past its
# "# timeout:" is recorded timed_out with the signal, and none of its processes is left.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../trees.sh"
copy_recipes
tree_recipe "leaves a process tree behind its group, then runs past its timeout" 3
std_item 10-tree

ctl "$M" fix-1 advance
read_tree_pids "$T/pids" recipe
wait_state "$M" fix-1 blocked
assert_recipe_tree_ended timed_out "timed out after 3 s (signal 15)"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=10-tree)")
assert_contains "$log" "tree of ${TREE_PIDS[0]} ready" "10-tree log"
assert_contains "$log" "# packetfs: ended by signal 15" "10-tree log footer"
assert_contains "$log" "# packetfs: status timed_out: timed out after 3 s (signal 15)" "10-tree log"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_contains "$(cat "$d/validation/evidence.md")" "timed out after 3 s (signal 15)" "evidence.md"
exit 0
