#!/usr/bin/env bash
# The daemon killed (kill -9) while a recorded run runs and another waits queued for the only
# GPU: each packetfs record exits 1 saying that the daemon stopped; once the store is mounted
# again each run is recorded exactly once, as interrupted, the running command's processes are
# gone, the queued command never ran, the lines keep recorded_by, `packetfs check` finds the
# store sound, and the item is as it was before the recording (recorded runs leave its state
# alone).
. "$(dirname "$0")/../lib.sh"
GPUS=1 std_item 01-build
rec=$d/validation/record

# The item goes through its pipeline first and waits at publish's approve gate.
ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state before recording"
# keep_fields : what recovery must leave as it was.
keep_fields()
{
	grep -E '^(state|stage|iteration|branch|head|assessment|running|gpus|last_error):' "$d/status"
}
before=$(keep_fields)
lines=$(reg count "$r")

# A running recorded run: its command waits for a file that never comes.
(cd "$d" && exec "$PFS" record 01-build --gpus 1 -- \
	sh -c "echo \$\$ >'$T/cmd.pid'; echo running; while [ ! -e '$T/go' ]; do sleep 0.05; done; echo went") \
	>"$T/out-a" 2>"$T/err-a" </dev/null &
cli_a=$!
wait_for grep -qx running "$T/out-a"
run_a=$(sed -n 's/^run: //p' "$rec")
cmd=$(cat "$T/cmd.pid")
pid_alive "$cmd" || fail "the recorded command (pid $cmd) is not running"
# A queued one: it waits for the GPU the first holds.
(cd "$d" && exec "$PFS" record 01-build --gpus 1 -- touch "$T/queued-ran") \
	>"$T/out-b" 2>"$T/err-b" </dev/null &
cli_b=$!
wait_for bash -c 'run=$(sed -n "s/^run: //p" "$1"); [ -n "$run" ] && [ "$run" != "$2" ]' _ "$rec" "$run_a"
assert_contains "$(cat "$rec")" "status: queued" "answer of the second run"
run_b=$(sed -n 's/^run: //p' "$rec")
assert_eq waiting "$(status_field "$M" fix-1 state)" "state while recorded runs run"

kill_daemon
for cli in a b; do
	pid=cli_$cli
	rc=0
	wait "${!pid}" || rc=$?
	assert_eq 1 "$rc" "exit status of packetfs record $cli after kill -9 of the daemon ($(cat "$T/err-$cli"))"
done
assert_contains "$(cat "$T/err-a")" \
	"packetfs: record: run $run_a: the daemon of $M stopped; the run is recorded as interrupted when the store is mounted again" \
	"stderr of the running run's packetfs record"
assert_contains "$(cat "$T/err-b")" "packetfs: record: run $run_b: the daemon of $M stopped" \
	"stderr of the queued run's packetfs record"
assert_eq running "$(cat "$T/out-a")" "output of the running run"
assert_eq "" "$(cat "$T/out-b")" "output of the queued run"
# Nobody ended the command yet: the daemon died, its run's processes live on.
pid_alive "$cmd" || fail "the recorded command died with the daemon, before any recovery"

mount_store "$M"
wait_gone "$cmd"
wait_for no_procs_in "$STORE/worktrees/fix-1"
[ ! -e "$T/queued-ran" ] || fail "the queued recorded run ran"

# check_runs : each run recorded once, interrupted, as the engine's line of its command.
check_runs()
{
	assert_eq $((lines + 2)) "$(reg count "$r")" "registry lines after recovery"
	assert_eq 1 "$(reg count "$r" run="$run_a")" "registry lines of run $run_a"
	assert_eq 1 "$(reg count "$r" run="$run_b")" "registry lines of run $run_b"
	for run in "$run_a" "$run_b"; do
		assert_eq interrupted "$(reg field "$r" 0 status run="$run")" "status of run $run"
		assert_eq engine "$(reg field "$r" 0 source run="$run")" "source of run $run"
		assert_eq null "$(reg field "$r" 0 exit_code run="$run")" "exit_code of run $run"
	done
	assert_eq "the daemon stopped while this ran" "$(reg field "$r" 0 note run="$run_a")" "note of run $run_a"
	assert_eq "the daemon stopped before this started" "$(reg field "$r" 0 note run="$run_b")" \
		"note of run $run_b"
	# Still a recorded run: who asked is on its line, as on the line of a run that ends.
	assert_eq "{\"stage\": \"\", \"pid\": $cli_a, \"uid\": $(id -u), \"via\": \"none\"}" \
		"$(reg field "$r" 0 recorded_by run="$run_a")" "recorded_by of run $run_a"
	assert_eq "{\"stage\": \"\", \"pid\": $cli_b, \"uid\": $(id -u), \"via\": \"none\"}" \
		"$(reg field "$r" 0 recorded_by run="$run_b")" "recorded_by of run $run_b"
	assert_eq "sh -c 'echo \$\$ >'\\''$T/cmd.pid'\\''; echo running; while [ ! -e '\\''$T/go'\\'' ]; do sleep 0.05; done; echo went'" \
		"$(reg field "$r" 0 command run="$run_a")" "command of run $run_a"
	assert_eq "touch $T/queued-ran" "$(reg field "$r" 0 command run="$run_b")" "command of run $run_b"
	reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
}
check_runs
log=$(reg field "$r" 0 evidence run="$run_a")
assert_contains "$(cat "$d/$log")" $'running\n' "log of the interrupted run"
assert_contains "$(cat "$d/$log")" "# packetfs: status interrupted" "log of the interrupted run"
grep -q "\"type\":\"recipe_finished\".*\"run\":$run_a,\"status\":\"interrupted\"" "$d/events" ||
	fail "no recipe_finished event says run $run_a was interrupted: $(cat "$d/events")"

# The item is as it was: no run of it runs or waits, its state and stage unchanged; the latest
# run of 01-build, the interrupted one, is no evidence.
assert_eq "$before" "$(keep_fields)" "status after recovery"
assert_eq "0/1 validated" "$(status_field "$M" fix-1 evidence)" "evidence after recovery"
check_status "$M" fix-1
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after recovery: $out"

# A clean remount records nothing more.
umount_store "$M"
mount_store "$M"
check_runs
assert_eq waiting "$(status_field "$M" fix-1 state)" "state after a second mount"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after a second mount: $out"
exit 0
