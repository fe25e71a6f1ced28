#!/usr/bin/env bash
# Queued work survives a kill -9 of the daemon and resumes: with "max_parallel_items": 1, one
# item runs and two wait in the queue; after the kill and a new mount the interrupted item runs
# again while the others stay queued, and each queued item starts as soon as the one before it
# is done - also when that one ends with a push only (the publish stage has no program, so no
# process exit marks the end).
. "$(dirname "$0")/../lib.sh"

PD=$T/probe
mkdir -p "$PD/active" "$PD/locks" "$PD/block"
echo "0 1" >"$PD/limits"
export RESTART_DIR=$PD RESTART_PROBE=$FIXTURES/restart/probe.sh
make_repo
plan_md='# Plan\n\nPush it.\n'
review_md='# Review\n\n## Assessment: sound\n'
EXTRA='"max_parallel_items": 1,' pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(argv_json /bin/bash "$RESTART_PROBE" stage plan.md "$plan_md"), \"produces\": [\"plan.md\"]}" \
	"{\"name\": \"review\", \"run\": $(argv_json /bin/bash "$RESTART_PROBE" stage review.md "$review_md"), \"produces\": [\"review.md\"]}" \
	'{"name": "publish", "push": {"remote": "origin"}}'
make_store "$T/pipeline.json"
mount_store
for i in a b c; do
	new_item "$i"
done

plan_started_twice()
{
	[ "$(grep -c "^start a+plan " "$PD/runs")" = 2 ]
}

states()
{
	local i
	for i in a b c; do
		printf '%s ' "$(status_field "$M" "$i" state)"
	done
}

: >"$PD/block/a+plan"
for i in a b c; do
	ctl "$M" "$i" advance
done
wait_for grep -q "^start a+plan " "$PD/runs"
assert_eq "running queued queued " "$(states)" "states before the kill"
pid=$(awk '$1 == "start" { print $3 }' "$PD/runs")

old=$DAEMON
kill -9 "$old"
wait_gone "$old"
forget_daemon "$old"
fusermount3 -u -z "$M"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after kill -9 failed: $out"
mount_store "$M"
pid_alive "$pid" && fail "the interrupted plan (pid $pid) still runs after the remount"
wait_for plan_started_twice
assert_eq "running queued queued " "$(states)" "states after the remount"
assert_contains "$(cat "$M/a/events")" '"type":"interrupted","state":"queued"' "events of a"

rm "$PD/block/a+plan"
for i in a b c; do
	wait_state "$M" "$i" "done"
done
assert_eq "done done done " "$(states)" "states at the end"
[ ! -s "$PD/violations" ] || fail "the probes saw overlaps or excess: $(cat "$PD/violations")"
out=$(python3 "$FIXTURES/restart/events.py" "$M/events" 1 2 0 2>&1) || fail "$out"
for i in a b c; do
	git -C "$ORIGIN" rev-parse -q --verify "refs/heads/packetfs/$i" >/dev/null ||
		fail "packetfs/$i was not pushed"
done
exit 0
