#!/usr/bin/env bash
# A notifier never holds up the pipeline (SPEC §5): one that hangs (ignoring SIGTERM) runs while
# the item goes through both its stages, and is killed at its timeout (SIGTERM, then SIGKILL),
# leaving no process; one that exits 1 is logged with the first lines of its stderr. The daemon
# log says what became of each.
. "$(dirname "$0")/../lib.sh"
make_repo
hang=$(argv_json "$FIXTURES/notify/hang.sh" "$T/hang.pid")
failing=$(argv_json "$FIXTURES/notify/fail.sh")
EXTRA="\"cancel_grace_s\": 1, \"notify\": [
  {\"on\": [\"item_created\"], \"run\": $hang, \"timeout_s\": 20},
  {\"on\": [\"done\"], \"run\": $failing}]," \
	pipeline_with "$T/pipeline.json" "$(plan_stage)" "$(stage_json second - plan.sh)"
make_store "$T/pipeline.json"
MOUNT_OPTS=log=$T/pfs.log mount_store
L=$T/pfs.log

new_item fix-1
wait_for test -s "$T/hang.pid"
hpid=$(cat "$T/hang.pid")
pid_alive "$hpid" || fail "the hanging notifier is not running"
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
[ -e "$M/fix-1/stages/2-second.log" ] || fail "the second stage did not run"
# The pipeline went on while the notifier hung.
pid_alive "$hpid" ||
	fail "the hanging notifier ended before the item was done (timeout_s too short for this machine)"
wait_for grep -q "notify: fix-1: state done: $FIXTURES/notify/fail.sh exited with status 1; ran" \
	"$L"
assert_contains "$(grep "fail.sh exited" "$L")" \
	"s: notifier failing on purpose for fix-1 | second line of its complaint" "its stderr in the log"

# The timeout ends it and every process of its group.
wait_gone "$hpid"
timed_out="timed out (timeout_s 20): ended by SIGTERM, then SIGKILL; ran"
wait_for grep -qF "notify: fix-1: item_created: $FIXTURES/notify/hang.sh $timed_out" "$L"
[ -z "$(pgrep -f "$FIXTURES/notify/hang.sh" || true)" ] || fail "hang.sh is still running"
[ -z "$(pgrep -f "$T/hang.pid" || true)" ] || fail "a process of hang.sh is still running"

# Events go on being notified after a timeout.
mkdir "$M/fix-2" || fail "cannot create fix-2"
wait_for bash -c '[ "$(cat "$1")" != "$2" ]' _ "$T/hang.pid" "$hpid"
pid_alive "$(cat "$T/hang.pid")" || fail "the notifier did not run for fix-2"
exit 0
