# shellcheck shell=bash
# tests/trees.sh - process trees that a stage or a recipe leaves behind, for the tests of how
# the daemon ends them (tests/pipeline/{cancel,leftover,recipe-cancel,recipe-timeout}-tree.sh).
# Sourced after tests/lib.sh:
#
#	. "$(dirname "$0")/../lib.sh"
#	. "$(dirname "$0")/../trees.sh"
#
# The fixture stage program tests/fixtures/stages/tree.sh starts the tree (a child, a
# grandchild, and grandchildren that setsid() away, one of them orphaned) and writes its five
# pids to a file; read_tree_pids reads them, wait_tree_gone waits until all are gone and reaped.

# tree_recipe SUMMARY [TIMEOUT] : writes the recipe 10-tree to $RECIPES (after copy_recipes; it
# is not among the fixture recipes, which every test copies), with that summary and "# timeout:"
# line. It runs the fixture stage program tree.sh, which leaves a process tree behind its group
# and writes the tree's pids to $T/pids.
tree_recipe()
{
	{
		printf '#!/usr/bin/env bash\n# summary: %s\n' "$1"
		[ -z "${2:-}" ] || printf '# timeout: %s\n' "$2"
		printf 'exec bash %q %q\n' "$FIXTURES/stages/tree.sh" "$T/pids"
	} >"$RECIPES/10-tree.sh"
	chmod +x "$RECIPES/10-tree.sh"
}

# read_tree_pids PIDFILE WRITER : waits until tree.sh has written PIDFILE, then sets TREE_PIDS to
# the five pids in it (the tree's leader first); WRITER ("stage", "recipe") names the run that
# wrote them in the failure message.
read_tree_pids()
{
	wait_for test -s "$1"
	mapfile -t TREE_PIDS <"$1"
	assert_eq 5 "${#TREE_PIDS[@]}" "pids written by the $2"
}

# daemon_zombies : how many zombie children the daemon $DAEMON has (it must reap the orphans of
# its runs).
daemon_zombies()
{
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v d="$DAEMON" '
		match($0, /\) [A-Za-z] [0-9]+ /) {
			split(substr($0, RSTART + 2), f, " ")
			if (f[1] == "Z" && f[2] == d)
				n++
		}
		END { print n + 0 }'
}

# no_zombies : the daemon $DAEMON has no zombie child.
no_zombies()
{
	[ "$(daemon_zombies)" = 0 ]
}

# wait_tree_gone : waits (bounded) until every process of TREE_PIDS is gone and the daemon has
# reaped them all (no zombie child left).
wait_tree_gone()
{
	local p
	for p in "${TREE_PIDS[@]}"; do
		wait_gone "$p"
	done
	wait_for no_zombies
}

# assert_recipe_tree_ended STATUS NOTE : after the engine ended the recipe 10-tree
# (tree_recipe) of fix-1: every process of its tree is gone and reaped (wait_tree_gone), none
# is left in the item's worktree, the registry $r holds one engine line of 10-tree with STATUS,
# the note NOTE, signal 15 and no exit code (assert_engine_line), and its lines are complete
# (reg check).
# shellcheck disable=SC2154 # d and r: mount_item (tests/lib.sh)
assert_recipe_tree_ended()
{
	wait_tree_gone
	wait_for no_procs_in "$STORE/worktrees/fix-1"
	assert_engine_line 10-tree "$1" "$2" 15
	reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
}
