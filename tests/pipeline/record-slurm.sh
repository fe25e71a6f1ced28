#!/usr/bin/env bash
# A recorded run under the slurm executor is one Slurm batch job, as a recipe run is: packetfs
# record prints the command's output (what the job wrote, none of the log's header), exits with
# the command's status, and the registry line says executor slurm, the job id, source engine,
# recorded_by and the environment where the job ran. SIGINT to packetfs record cancels the job
# (scancel): Slurm shows it CANCELLED, its line is cancelled, no process of it is left.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
slurm_item 01-build
me=$(id -u)

# A command that exits 3, run in a Slurm job.
rc=0
(cd "$d" && exec "$PFS" record 01-build -- sh -c 'echo "out of job $SLURM_JOB_ID"; echo "second line"; exit 3') \
	>"$T/out" 2>"$T/err" </dev/null &
cli=$!
wait "$cli" || rc=$?
assert_eq 3 "$rc" "exit status of a recorded Slurm run that exits 3 ($(cat "$T/err"))"
assert_eq "" "$(cat "$T/err")" "stderr of packetfs record"
assert_eq 1 "$(reg count "$r")" "registry lines"
assert_eq failing "$(reg field "$r" -1 status)" "status"
assert_eq 3 "$(reg field "$r" -1 exit_code)" "exit_code"
assert_eq slurm "$(reg field "$r" -1 executor)" "executor"
assert_eq engine "$(reg field "$r" -1 source)" "source"
assert_eq "sh -c 'echo \"out of job \$SLURM_JOB_ID\"; echo \"second line\"; exit 3'" \
	"$(reg field "$r" -1 command)" "command"
id=$(reg field "$r" -1 job_id)
[[ "$id" =~ ^[0-9]+$ ]] || fail "job_id '$id' is not a Slurm job id"
assert_file_eq "$T/out" "out of job $id"$'\nsecond line\n'
assert_eq FAILED "$(slurm_job_state "$id")" "Slurm state of job $id"
python3 - "$(reg field "$r" -1 recorded_by)" "$cli" "$me" <<'PY' || fail "recorded_by: $(reg field "$r" -1 recorded_by)"
import json, sys
b = json.loads(sys.argv[1])
assert isinstance(b, dict), b
assert b.get("pid") == int(sys.argv[2]), ("pid", b)
assert b.get("uid") == int(sys.argv[3]), ("uid", b)
assert "stage" in b and isinstance(b["stage"], str), ("stage", b)
PY
python3 - "$(reg field "$r" -1 env)" "$(uname -r)" <<'PY' || fail "env: $(reg field "$r" -1 env)"
import json, sys
env = json.loads(sys.argv[1])
assert isinstance(env, dict), env
assert isinstance(env.get("os"), str) and env["os"], ("os", env)
assert isinstance(env.get("kernel"), str) and sys.argv[2] in env["kernel"], ("kernel", env)
PY
log=$(cat "$d/$(reg field "$r" -1 evidence)")
assert_contains "$log" "# slurm: submitted job $id" "the run's log"
assert_contains "$log" "# recorded_by: stage -, pid $cli, uid $me" "the run's log"
assert_contains "$(cat "$d/validation/record")" "exit_code: 3" "answer of the run"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# A command that exits 0 validates. Its output is exactly what it wrote, also when the
# daemon's line naming the node comes after it: the job is submitted held, the daemon is
# stopped while Slurm runs it to its end, so that the daemon copies the output before it sees
# the job started. That line is then the footer's, not the command's.
set_executor extra_args '["--hold"]'
prev=$(sed -n 's/^run: //p' "$d/validation/record")
(cd "$d" && exec "$PFS" record 01-build -- sh -c 'echo fine; printf "no newline"') >"$T/out" 2>"$T/err" </dev/null &
cli=$!
wait_for bash -c 'run=$(sed -n "s/^run: //p" "$1"); [ -n "$run" ] && [ "$run" != "$2" ]' _ "$d/validation/record" "$prev"
log=$d/$(sed -n 's/^log: //p' "$d/validation/record")
wait_for grep -q '^# slurm: submitted job' "$log"
id=$(sed -n 's/^# slurm: submitted job \([0-9][0-9]*\),.*/\1/p' "$log")
assert_eq PENDING "$(slurm_job_state "$id")" "Slurm state of the held job $id"
kill -STOP "$DAEMON"
scontrol release "$id" || { kill -CONT "$DAEMON"; fail "scontrol release $id"; }
wait_for bash -c '[ "$(scontrol -o show job "$1" | sed -n "s/.*JobState=\([A-Z_]*\).*/\1/p")" = COMPLETED ]' _ "$id"
kill -CONT "$DAEMON"
rc=0
wait "$cli" || rc=$?
set_executor extra_args null
assert_eq 0 "$rc" "exit status of a recorded Slurm run that exits 0 ($(cat "$T/err"))"
assert_file_eq "$T/out" $'fine\nno newline'
assert_eq validated "$(reg field "$r" -1 status)" "status of the run that exits 0"
assert_eq "$id" "$(reg field "$r" -1 job_id)" "job_id of the run that exits 0"
assert_contains "$(cat "$log")" $'\nfine\nno newline\n# packetfs: slurm: job '"$id ran on " \
	"the log of the run that exits 0 (the node line after the output)"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# SIGINT while the job runs: scancel, a cancelled line.
(cd "$d" && exec "$PFS" record 01-build -- sh -c 'echo started; sleep 120; echo never') \
	>"$T/out" 2>"$T/err" </dev/null &
cli=$!
wait_for grep -qx started "$T/out"
run=$(sed -n 's/^run: //p' "$d/validation/record")
log=$d/$(sed -n 's/^log: //p' "$d/validation/record")
id=$(sed -n 's/^# slurm: submitted job \([0-9][0-9]*\),.*/\1/p' "$log")
[[ "$id" =~ ^[0-9]+$ ]] || fail "no Slurm job id in the log of run $run: $(cat "$log")"
assert_eq RUNNING "$(slurm_job_state "$id")" "Slurm state of job $id before SIGINT"
kill -INT "$cli"
rc=0
wait "$cli" || rc=$?
assert_eq 143 "$rc" "exit status after SIGINT ($(cat "$T/err"))"
assert_contains "$(cat "$T/err")" "packetfs: record: 01-build: cancelling run $run" "stderr after SIGINT"
# Slurm may add its own line to the job's output ("*** JOB N ON node CANCELLED AT ... ***").
assert_eq started "$(head -n 1 "$T/out")" "first line of output after SIGINT"
assert_not_contains "$(cat "$T/out")" never "output after SIGINT"
assert_eq 1 "$(reg count "$r" run="$run")" "registry lines of run $run"
assert_eq cancelled "$(reg field "$r" -1 status)" "status after SIGINT"
assert_eq "$id" "$(reg field "$r" -1 job_id)" "job_id after SIGINT"
assert_eq slurm "$(reg field "$r" -1 executor)" "executor after SIGINT"
assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of job $id after SIGINT"
wait_for bash -c '[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]' _ "$id"
wait_for no_procs_in "$STORE/worktrees/fix-1"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
