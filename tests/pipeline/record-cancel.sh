#!/usr/bin/env bash
# SIGINT (Ctrl-C) to packetfs record cancels its run: a running one gets SIGTERM in its process
# group, the CLI keeps streaming until the run ended and exits 128+15 with status cancelled in
# the registry; a run still queued (waiting for the only GPU) ends cancelled without running and
# the CLI exits 130. SIGTERM does the same.
. "$(dirname "$0")/../lib.sh"
GPUS=1 std_item 01-build

# A running run.
(cd "$d" && exec "$PFS" record 01-build -- sh -c 'echo started; sleep 60; echo never') \
	>"$T/out" 2>"$T/err" &
cli=$!
wait_for grep -qx started "$T/out"
kill -INT "$cli"
rc=0
wait "$cli" || rc=$?
assert_eq 143 "$rc" "exit status after SIGINT ($(cat "$T/err"))"
assert_file_eq "$T/out" $'started\n'
assert_contains "$(cat "$T/err")" "packetfs: record: 01-build: cancelling run" "stderr after SIGINT"
assert_eq cancelled "$(reg field "$r" -1 status)" "registry status after SIGINT"
assert_eq 15 "$(reg field "$r" -1 signal)" "registry signal after SIGINT"
assert_eq engine "$(reg field "$r" -1 source)" "registry source"
assert_contains "$(cat "$d/validation/record")" "status: cancelled" "answer after SIGINT"

# A queued run: the only GPU is held by another recorded run.
(cd "$d" && exec "$PFS" record 01-build --gpus 1 -- sh -c "while [ ! -e '$T/go' ]; do sleep 0.05; done") \
	>"$T/out1" 2>"$T/err1" &
holder=$!
wait_for grep -qx 'status: running' "$d/validation/record"
lines=$(reg count "$r")
(cd "$d" && exec "$PFS" record 01-build --gpus 1 -- sh -c 'echo ran; touch ran') \
	>"$T/out2" 2>"$T/err2" &
cli=$!
wait_for grep -qx 'status: queued' "$d/validation/record"
kill -INT "$cli"
rc=0
wait "$cli" || rc=$?
assert_eq 130 "$rc" "exit status after SIGINT while queued ($(cat "$T/err2"))"
assert_file_eq "$T/out2" ""
assert_eq $((lines + 1)) "$(reg count "$r")" "registry lines after the queued run was cancelled"
assert_eq cancelled "$(reg field "$r" -1 status)" "status of the queued run"
assert_eq null "$(reg field "$r" -1 exit_code)" "exit_code of the queued run"
[ ! -e "$STORE/worktrees/fix-1/ran" ] || fail "the cancelled queued run ran"

# SIGTERM to the CLI of the run holding the GPU.
kill -TERM "$holder"
rc=0
wait "$holder" || rc=$?
assert_eq 143 "$rc" "exit status after SIGTERM ($(cat "$T/err1"))"
assert_eq cancelled "$(reg field "$r" -1 status)" "registry status after SIGTERM"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
