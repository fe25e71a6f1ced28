#!/usr/bin/env bash
# Under the slurm executor a recipe past its "# timeout:" is ended with scancel and recorded
# timed_out, and `cancel` ends a running job with scancel and records it cancelled: in both
# cases Slurm shows the job CANCELLED, the log keeps the job's output, and no process of the
# recipe is left in the item's worktree.
. "$(dirname "$0")/../lib.sh"
need_slurm
make_repo
copy_recipes
install -m 755 "$FIXTURES/slurm/10-wait.sh" "$RECIPES/"
PLAN_RECIPES="07-slow" slurm_pipeline "$T/pipeline.json" plan print validate
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1
r=$d/validation/registry.jsonl

ctl "$M" fix-1 advance
settled fix-1 >/dev/null
assert_eq 1 "$(reg count "$r" recipe=07-slow status=timed_out source=engine)" "timed_out lines"
assert_eq "timed out after 1 s (signal 15)" "$(reg field "$r" 0 note recipe=07-slow)" "07-slow note"
id=$(reg field "$r" 0 job_id recipe=07-slow)
assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of the timed-out job $id"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=07-slow)")" "starting a long job" \
	"07-slow log"
wait_for no_procs_in "$STORE/worktrees/fix-1"

# cancel while the job runs (a rerun of one recipe)
ctl "$M" fix-1 "rerun 10-wait"
wait_for bash -c 'grep -qs "waiting for go" "$1"/*10-wait*.log' _ "$d/validation/logs"
ctl "$M" fix-1 cancel
settled fix-1 >/dev/null
assert_eq 1 "$(reg count "$r" recipe=10-wait status=cancelled source=engine)" "cancelled lines"
assert_eq "cancelled (signal 15)" "$(reg field "$r" 0 note recipe=10-wait)" "10-wait note"
id=$(reg field "$r" 0 job_id recipe=10-wait)
assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of the cancelled job $id"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=10-wait)")" "waiting for go" \
	"10-wait log"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
wait_for no_procs_in "$STORE/worktrees/fix-1"
exit 0
