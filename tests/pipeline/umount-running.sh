#!/usr/bin/env bash
# packetfs umount while a stage runs (its cwd keeps the mount busy): the daemon stops, the
# stage's processes end, the run is recorded interrupted, and the store mounts again at once
# with the item re-queued.
. "$(dirname "$0")/../lib.sh"
sleeping_item

umount_store
for p in "${pids[@]}"; do
	wait_gone "$p"
done

mount_store
log=$(cat "$M"/fix-1/stages/1-plan.log)
assert_contains "$log" "interrupted" "the first plan log"
[ -e "$M/fix-1/stages/2-plan.log" ] || fail "the re-queued plan did not run again: $(ls "$M/fix-1/stages")"
ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
"$PFS" check "$STORE" >/dev/null || fail "packetfs check after the interrupted run: $("$PFS" check "$STORE" 2>&1)"
