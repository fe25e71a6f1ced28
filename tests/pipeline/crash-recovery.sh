#!/usr/bin/env bash
# A daemon killed while a stage runs: on the next mount the stage's process group is ended, the
# run is recorded as interrupted, visibly, and the item is re-queued (the default) so the stage
# runs again.
. "$(dirname "$0")/../lib.sh"
sleeping_item
rm "$T/pids"

kill_daemon
mount_store "$M"

for p in "${pids[@]}"; do
	wait_gone "$p"
done
# Re-queued: the stage runs again, as a new run with a log of its own.
wait_for test -s "$T/pids"
wait_state "$M" fix-1 running
assert_eq 2 "$(ls "$d/stages" | grep -Ecx '[0-9]+-plan\.log')" "plan logs after recovery"
grep -qi interrupted "$d/events" "$d"/stages/*-plan.log ||
	fail "the interrupted run is not recorded in the events or its log"
ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
exit 0
