#!/usr/bin/env bash
# A recipe that leaves a process tree its process group cannot reach (a child, a grandchild, a
# grandchild that setsid()s away, one that setsid()s away and is orphaned) and runs past its
# "# timeout:" is recorded timed_out with the signal, and none of its processes is left.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
# Written here rather than among the fixture recipes, which every test copies.
cat >"$RECIPES/10-tree.sh" <<EOF2
#!/usr/bin/env bash
# summary: leaves a process tree behind its group, then runs past its timeout
# timeout: 3
exec bash $(printf '%q' "$FIXTURES/stages/tree.sh") $(printf '%q' "$T/pids")
EOF2
chmod +x "$RECIPES/10-tree.sh"
PLAN_RECIPES="10-tree" std_pipeline "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1
r=$d/validation/registry.jsonl

# zombies_of : how many zombie children the daemon has (it must reap the orphans of its runs).
zombies_of()
{
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v d="$DAEMON" '
		match($0, /\) [A-Za-z] [0-9]+ /) {
			split(substr($0, RSTART + 2), f, " ")
			if (f[1] == "Z" && f[2] == d)
				n++
		}
		END { print n + 0 }'
}
no_zombies() { [ "$(zombies_of)" = 0 ]; }

ctl "$M" fix-1 advance
wait_for test -s "$T/pids"
mapfile -t pids <"$T/pids"
assert_eq 5 "${#pids[@]}" "pids written by the recipe"
wait_state "$M" fix-1 blocked
for p in "${pids[@]}"; do
	wait_gone "$p"
done
wait_for no_zombies
wait_for no_procs_in "$STORE/worktrees/fix-1"

assert_eq 1 "$(reg count "$r" recipe=10-tree status=timed_out source=engine)" "timed_out lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_eq 15 "$(reg field "$r" 0 signal recipe=10-tree)" "registry signal"
assert_eq null "$(reg field "$r" 0 exit_code recipe=10-tree)" "registry exit_code"
assert_eq "timed out after 3 s (signal 15)" "$(reg field "$r" 0 note recipe=10-tree)" "registry note"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=10-tree)")
assert_contains "$log" "tree of ${pids[0]} ready" "10-tree log"
assert_contains "$log" "# packetfs: ended by signal 15" "10-tree log footer"
assert_contains "$log" "# packetfs: status timed_out: timed out after 3 s (signal 15)" "10-tree log"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_contains "$(cat "$d/validation/evidence.md")" "timed out after 3 s (signal 15)" "evidence.md"
exit 0
