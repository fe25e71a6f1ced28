#!/usr/bin/env bash
# cancel while a recipe runs that left a process tree its process group cannot reach (a child,
# a grandchild, a grandchild that setsid()s away, one that setsid()s away and is orphaned):
# every one of those processes ends, the registry line says cancelled with the signal, and the
# item is failed with the reason.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
# Written here rather than among the fixture recipes, which every test copies.
cat >"$RECIPES/10-tree.sh" <<EOF2
#!/usr/bin/env bash
# summary: leaves a process tree behind its group and waits
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
for p in "${pids[@]}"; do
	pid_alive "$p" || fail "recipe process $p is not running before cancel"
done

ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
for p in "${pids[@]}"; do
	wait_gone "$p"
done
wait_for no_zombies
wait_for no_procs_in "$STORE/worktrees/fix-1"

assert_eq 1 "$(reg count "$r" recipe=10-tree status=cancelled source=engine)" "cancelled lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_eq 15 "$(reg field "$r" 0 signal recipe=10-tree)" "registry signal"
assert_eq null "$(reg field "$r" 0 exit_code recipe=10-tree)" "registry exit_code"
assert_eq "cancelled (signal 15)" "$(reg field "$r" 0 note recipe=10-tree)" "registry note"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=10-tree)")
assert_contains "$log" "# packetfs: status cancelled: cancelled (signal 15)" "10-tree log"
check_status "$M" fix-1
assert_contains "$(status_field "$M" fix-1 last_error)" "cancelled (signal 15)" "last_error"
exit 0
