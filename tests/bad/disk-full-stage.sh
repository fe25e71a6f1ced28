#!/usr/bin/env bash
# A full disk under the store when a stage ends and the next one should start (SPEC §5, §8):
# the item does not stay running without a process. Status shows it failed, with a last_error
# that says the disk is full, though the store cannot take that state yet; ctl commands are
# refused with ENOSPC until it can. Once space is back the state is stored, and advance and
# cancel work again.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../loopfs.sh"

loopfs_make 64
make_repo "$DISK/repo"
copy_recipes
# plan writes plan.md at once, then ends only when $T/go exists.
cat >"$T/plan-wait.sh" <<SH
#!/usr/bin/env bash
set -euo pipefail
bash "$FIXTURES/stages/plan.sh" 01-build 02-lint
while [ ! -e "$T/go" ]; do sleep 0.05; done
SH
plan_json=$(printf '{"name": "plan", "run": %s, "produces": ["plan.md"]}' \
	"$(argv_json /bin/bash "$T/plan-wait.sh")")
pipeline_with "$T/pipeline.json" "$plan_json" "$(print_stage)" "$(validate_stage)" \
	"$(review_loop 3 review.sh sound)" "$(publish_stage '"gate": "approve",')"
loopfs_store "$T/pipeline.json"
new_item fix-1
d=$M/fix-1

ctl "$M" fix-1 advance
wait_for test -s "$d/plan.md"
assert_eq running "$(status_field "$M" fix-1 state)" "state while plan runs"
loopfs_full "$M/learnings/pad.md"
touch "$T/go"
# plan ends; print cannot start: nothing runs for the item any more.
wait_for no_procs_in "$d"
# status says so at once, though the store cannot take the state yet.
WAIT_STATE_PATIENT=1 wait_state "$M" fix-1 failed
assert_eq "" "$(status_field "$M" fix-1 running)" "running while the disk is full"
check_failed()
{
	local err
	err=$(status_field "$M" fix-1 last_error)
	assert_contains "$err" "print: cannot start: No space left on device" "last_error"
	assert_contains "$err" "disk is full" "last_error"
	assert_eq print "$(status_field "$M" fix-1 stage)" "stage of the failed start"
	assert_eq failed "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' \
		"$d/status.json")" "status.json state"
}
check_failed
assert_fails_with "No space left on device" sh_write "$d/ctl" $'cancel\n'
assert_fails_with "No space left on device" sh_write "$d/ctl" $'advance\n'

loopfs_free
# The store takes the state within a second or so: its event shows it.
wait_for grep -q '"state":"failed"' "$d/events"
check_failed
# ... and so is the end of plan's run: no run row is left running, its log is sealed.
running_runs()
{
	sqlite3 "$STORE/packetfs.db" "SELECT count(*) FROM runs WHERE status = 'running'"
}
wait_for eval 'test "$(running_runs)" = 0'
assert_eq succeeded "$(sqlite3 "$STORE/packetfs.db" "SELECT status FROM runs WHERE run_no = 1")" \
	"plan's run"
assert_eq 64 "$(sqlite3 "$STORE/packetfs.db" "SELECT length(log_sha256) FROM runs WHERE run_no = 1")" \
	"plan's log sha256"
# cancel has nothing to end; advance starts print and the item goes on to done.
assert_fails_with EINVAL sh_write "$d/ctl" $'cancel\n'
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
ctl "$M" fix-1 approve
wait_state "$M" fix-1 done
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check: $out"
assert_eq ok "$(sqlite3 "$STORE/packetfs.db" 'PRAGMA integrity_check' 2>&1)" "integrity_check"
exit 0
