#!/usr/bin/env bash
# Under the slurm executor a recipe past its "# timeout:" is ended with scancel and recorded
# timed_out, and `cancel` ends a running job with scancel and records it cancelled: in both
# cases Slurm shows the job CANCELLED, the log keeps the job's output, and no process of the
# recipe is left in the item's worktree. A job cancelled while Slurm still queues it is
# "cancelled before it started", without an exit code.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
slurm_item 07-slow

ctl "$M" fix-1 advance
settled fix-1 >/dev/null
assert_job_cancelled 07-slow timed_out "timed out after 3 s (signal 15)" "starting a long job"
wait_for no_procs_in "$STORE/worktrees/fix-1"

# cancel while the job runs (a rerun of one recipe)
ctl "$M" fix-1 "rerun 10-wait"
wait_for bash -c 'grep -qs "waiting for go" "$1"/*10-wait*.log' _ "$d/validation/logs"
ctl "$M" fix-1 cancel
settled fix-1 >/dev/null
assert_job_cancelled 10-wait cancelled "cancelled (signal 15)" "waiting for go"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
wait_for no_procs_in "$STORE/worktrees/fix-1"

# cancel while the job waits in Slurm's queue (it may not begin for an hour)
set_executor extra_args '["--begin=now+3600"]'
ctl "$M" fix-1 "rerun 01-build"
wait_for bash -c 'grep -qs "# slurm: submitted job" "$1"/*01-build*.log' _ "$d/validation/logs"
id=$(sed -n 's/^# slurm: submitted job \([0-9][0-9]*\),.*/\1/p' "$d/validation/logs/"*01-build*.log)
assert_eq PENDING "$(slurm_job_state "$id")" "Slurm state of job $id"
ctl "$M" fix-1 cancel
settled fix-1 >/dev/null
assert_eq cancelled "$(reg field "$r" -1 status recipe=01-build)" "01-build status"
assert_eq "cancelled before it started" "$(reg field "$r" -1 note recipe=01-build)" "01-build note"
assert_eq null "$(reg field "$r" -1 exit_code recipe=01-build)" "01-build exit code"
assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of the cancelled job $id"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
