#!/usr/bin/env bash
# cancel stops a running stage: the whole process group ends, the item is failed with the
# reason, and nothing of the stage is left running.
. "$(dirname "$0")/../lib.sh"
sleeping_item "$(print_stage)"
assert_eq plan "$(status_field "$M" fix-1 stage)" "running stage"
assert_eq 2 "${#pids[@]}" "pids written by the stage"
for p in "${pids[@]}"; do
	pid_alive "$p" || fail "stage process $p is not running before cancel"
done
wait_for grep -q "sleeping as ${pids[0]}" "$d"/stages/*-plan.log

ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
for p in "${pids[@]}"; do
	wait_gone "$p"
done
check_status "$M" fix-1
last_error=$(status_field "$M" fix-1 last_error)
printf '%s\n' "$last_error" | grep -qi cancel || fail "last_error does not name the cancel: $last_error"
ls "$d/stages" | grep -Eq -- '-print\.log$' && fail "print ran after a cancelled plan"

# A cancel with nothing running changes nothing.
out=$( { printf 'cancel\n' >"$d/ctl"; } 2>&1) || true
assert_eq failed "$(status_field "$M" fix-1 state)" "state after a second cancel"
exit 0
