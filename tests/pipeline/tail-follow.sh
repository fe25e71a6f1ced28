#!/usr/bin/env bash
# tail -f on a running recipe's log shows every line as the recipe prints it, before the recipe
# prints the next one: the recipe prints line N only once the test has seen line N-1 through tail.
# tail -f on validation/registry.jsonl, started before the run while the file is empty, shows
# the run's line when the engine adds it (the kernel holds the registry's attributes: the
# engine's report must drop them), and a line appended through the mount after it.
. "$(dirname "$0")/../lib.sh"
export GATE_DIR=$T/gates # inherited by the daemon, and so by its recipes
mkdir -p "$GATE_DIR"
pipeline_item "$(plan_stage 09-gated)" "$(validate_stage)"

reg=$d/validation/registry.jsonl
stat "$reg" >/dev/null
bg tail -n +1 -f "$reg" >"$T/tail-registry.txt"
ctl "$M" fix-1 advance
log_exists()
{
	ls "$d/validation/logs" 2>/dev/null | grep -q -- '-09-gated-'
}
wait_for log_exists
log=$d/validation/logs/$(ls "$d/validation/logs" | grep -- '-09-gated-')
bg tail -n +1 -f "$log" >"$T/tail.txt"

for i in 1 2 3; do
	touch "$GATE_DIR/go-$i"
	# The recipe now waits for go-(i+1): tail must show line i while it still runs.
	wait_for grep -qx "gated line $i" "$T/tail.txt"
	[ "$i" = 3 ] || [ "$(status_field "$M" fix-1 state)" = running ] ||
		fail "the recipe ended before line $i was seen"
done
wait_state "$M" fix-1 done
# tail saw the log whole: its footer too, byte for byte what cat reads.
wait_for grep -q '^# packetfs: status validated' "$T/tail.txt"
cmp "$T/tail.txt" "$log" || fail "tail -f output differs from the log"

wait_for grep -q '"recipe":"09-gated"' "$T/tail-registry.txt"
printf '{"recipe":"99-manual","status":"validated","command":"true","note":"n","exit_code":0}\n' \
	>>"$reg"
wait_for grep -q '"recipe":"99-manual"' "$T/tail-registry.txt"
cmp "$T/tail-registry.txt" "$reg" || fail "tail -f output differs from the registry"
exit 0
