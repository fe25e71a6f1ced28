#!/usr/bin/env bash
# cancel while a recipe runs that left a process tree its process group cannot reach (a child,
# a grandchild, a grandchild that setsid()s away, one that setsid()s away and is orphaned):
# every one of those processes ends, the registry line says cancelled with the signal, and the
# item is failed with the reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../trees.sh"
copy_recipes
tree_recipe "leaves a process tree behind its group and waits"
std_item 10-tree

ctl "$M" fix-1 advance
read_tree_pids "$T/pids" recipe
for p in "${TREE_PIDS[@]}"; do
	pid_alive "$p" || fail "recipe process $p is not running before cancel"
done

ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
assert_recipe_tree_ended cancelled "cancelled (signal 15)"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=10-tree)")
assert_contains "$log" "# packetfs: status cancelled: cancelled (signal 15)" "10-tree log"
check_status "$M" fix-1
assert_contains "$(status_field "$M" fix-1 last_error)" "cancelled (signal 15)" "last_error"
exit 0
