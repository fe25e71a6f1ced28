#!/usr/bin/env bash
# `packetfs follow` shows a stage's output while the stage runs, waits on inotify without
# spending CPU time, and ends when the item stops (here, a cancel), with its state.
. "$(dirname "$0")/../lib.sh"
sleeping_item
"$PFS" follow "$d" >"$T/out" 2>"$T/err" &
fpid=$!
wait_for grep -q "sleeping as ${pids[0]}" "$T/out"
assert_eq "==> stages/1-plan.log <==" "$(head -n 1 "$T/out")" "follow's first line"
pid_alive "$fpid" || fail "follow ended while the stage runs: $(cat "$T/out" "$T/err")"
# cpu_ticks PID : user and system clock ticks PID has used.
cpu_ticks()
{
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}
t0=$(cpu_ticks "$fpid")
sleep 1
t1=$(cpu_ticks "$fpid")
[ $((t1 - t0)) -le 2 ] || fail "follow spent $((t1 - t0)) ticks in a second of waiting"
ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
wait_gone "$fpid"
wait "$fpid" || fail "follow failed: $(cat "$T/err")"
assert_eq "==> state: failed <==" "$(tail -n 1 "$T/out")" "follow's last line"
exit 0
