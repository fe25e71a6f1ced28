#!/usr/bin/env bash
# A daemon that stops while Slurm jobs run does not start them again: after a kill -9, and after
# a plain umount, the next daemon follows the same job (same job id, one job in Slurm), copies
# the rest of its output into the same log and records it once; the recipe the stage had not
# submitted yet (max_parallel_recipes 1) is submitted after the restart.
. "$(dirname "$0")/../lib.sh"
need_slurm
make_repo
copy_recipes
install -m 755 "$FIXTURES/slurm/10-wait.sh" "$RECIPES/"
PLAN_RECIPES="10-wait 01-build" slurm_pipeline "$T/pipeline.json" plan print validate
sed -i 's/"max_parallel_recipes": 2/"max_parallel_recipes": 1/' "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1
r=$d/validation/registry.jsonl

# job_of LOG : the Slurm job id the log names.
job_of()
{
	sed -n 's/^# slurm: submitted job \([0-9][0-9]*\),.*/\1/p' "$1" | head -n 1
}

# Round 1: kill -9 while 10-wait's job runs and 01-build waits in the daemon's queue.
ctl "$M" fix-1 advance
wait_for bash -c 'grep -qs "waiting for go" "$1"/*10-wait*.log' _ "$d/validation/logs"
log=$(ls "$d/validation/logs/"*10-wait*.log)
log=${log#"$d/"}
id=$(job_of "$d/$log")
[ -n "$id" ] || fail "no job id in $log"
old=$DAEMON
kill -9 "$old"
wait_gone "$old"
forget_daemon "$old"
fusermount3 -u -z "$M"
assert_eq RUNNING "$(slurm_job_state "$id")" "job $id after the daemon died"
mount_store "$M"
assert_eq running "$(status_field "$M" fix-1 state)" "state after the restart"
touch "$T/go"
assert_eq done "$(settled fix-1)" "state at the end"
assert_eq 1 "$(reg count "$r" recipe=10-wait)" "10-wait lines"
assert_eq validated "$(reg field "$r" 0 status recipe=10-wait)" "10-wait status"
assert_eq "$id" "$(reg field "$r" 0 job_id recipe=10-wait)" "10-wait job id"
assert_eq "$log" "$(reg field "$r" 0 evidence recipe=10-wait)" "10-wait evidence"
assert_eq 1 "$(squeue -h -t all -n packetfs-fix-1-10-wait -o %Z | grep -cx "$STORE/worktrees/fix-1")" \
	"Slurm jobs of 10-wait"
text=$(cat "$d/$log")
assert_eq 1 "$(grep -c "waiting for go" <<<"$text")" "'waiting for go' lines in the log"
assert_eq 1 "$(grep -c "went on" <<<"$text")" "'went on' lines in the log"
assert_contains "$text" "following job $id again" "10-wait log"
assert_eq 1 "$(reg count "$r" recipe=01-build status=validated)" "01-build, submitted after the restart"
grep -q '"type":"recipe_reattached"' "$d/events" || fail "no recipe_reattached event"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# Round 2: a plain umount during a rerun; the item returns to done after the remount.
rm "$T/go"
ctl "$M" fix-1 "rerun 10-wait"
wait_for bash -c 'test "$(ls "$1"/*10-wait*.log | wc -l)" = 2' _ "$d/validation/logs"
log=$(ls "$d/validation/logs/"*10-wait*.log | tail -n 1)
wait_for grep -qs "waiting for go" "$log"
id=$(job_of "$log")
umount_store
assert_eq RUNNING "$(slurm_job_state "$id")" "job $id after umount"
mount_store "$M"
touch "$T/go"
assert_eq done "$(settled fix-1)" "state after the rerun"
assert_eq 2 "$(reg count "$r" recipe=10-wait status=validated)" "10-wait validated lines"
assert_eq "$id" "$(reg field "$r" -1 job_id recipe=10-wait)" "rerun job id"
assert_eq 0 "$(reg count "$r" status=interrupted)" "interrupted lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
"$PFS" check "$STORE" >"$T/check.out" 2>&1 || fail "packetfs check: $(cat "$T/check.out")"
exit 0
