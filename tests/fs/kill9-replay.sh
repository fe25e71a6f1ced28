#!/usr/bin/env bash
# kill -9 of the daemon while the engine's changes are being replayed through the mount (a
# stage printing without pause keeps the notifier busy) always ends the daemon: no process of
# it is left (a request to its own mount in flight must not keep it from dying), its replayer
# goes with it, and the store mounts again at once. Ten rounds.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_item "{\"name\": \"plan\", \"run\": $(stage_run talk.sh)}"

# replayer_of PID : the replayer child of daemon PID (empty when none).
replayer_of()
{
	local p
	for p in $(cat "/proc/$1/task/"*/children 2>/dev/null); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = packetfs-replay ] && echo "$p"
	done
	return 0
}

# newer_log_than LOG / not_running : conditions for wait_for, looked at anew on each try (the
# requeued stage starts a new plan log after each restart).
newer_log_than()
{
	[ "$(newest_stage_log fix-1)" != "$1" ]
}

not_running()
{
	[ "$(status_field "$M" fix-1 state)" != running ]
}

ctl "$M" fix-1 "run plan"
for round in $(seq 1 10); do
	wait_for test -n "$(newest_stage_log fix-1)"
	log=$(newest_stage_log fix-1)
	wait_for grep -q '^line 200$' "$M/fix-1/stages/$log"
	rp=$(replayer_of "$DAEMON")
	[ -n "$rp" ] || fail "round $round: no replayer process under daemon $DAEMON"
	old=$DAEMON
	kill -9 "$old"
	wait_gone "$old"
	wait_gone "$rp"
	forget_daemon "$old"
	fusermount3 -u -z "$M"
	mount_store "$M"
	# The interrupted run is recorded; the item is queued again and runs a new plan.
	wait_for grep -q 'interrupted' "$M/fix-1/stages/$log"
	wait_for newer_log_than "$log"
done
ctl "$M" fix-1 cancel
wait_for not_running
umount_store
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after the rounds: $out"
exit 0
