#!/usr/bin/env bash
# A daemon that stops while Slurm jobs run does not start them again: after a kill -9, and after
# a plain umount, the next daemon follows the same job (same job id, one job in Slurm), copies
# the rest of its output into the same log and records it once; the recipe the stage had not
# submitted yet (max_parallel_recipes 1) is submitted after the restart. A daemon killed while
# sbatch runs is followed by one that finds the job by its output file; a job Slurm requeues
# has its new output in the same log after a line that says so.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
MAX_PARALLEL=1 slurm_item 10-wait 01-build

# rerun_10_wait N : `rerun 10-wait`, the Nth run of it; waits until its job prints its first
# line, then sets log (the run's log) and id (its Slurm job).
rerun_10_wait()
{
	ctl "$M" fix-1 "rerun 10-wait"
	wait_for bash -c 'test "$(ls "$1"/*10-wait*.log | wc -l)" = "$2"' _ "$d/validation/logs" "$1"
	log=$(ls "$d/validation/logs/"*10-wait*.log | tail -n 1)
	wait_for grep -qs "waiting for go" "$log"
	id=$(job_of "$log")
}

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
kill_daemon
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
assert_eq "waiting for go|went on" \
	"$(sed -n '/^waiting for go$/,/^went on$/p' <<<"$text" | paste -sd'|')" \
	"the job's output in the log, with no line of the daemon's amid it"
assert_contains "$(cat "$d"/stages/*-validate.log)" "10-wait: following Slurm job $id again" \
	"validate stage log"
assert_eq 1 "$(reg count "$r" recipe=01-build status=validated)" "01-build, submitted after the restart"
grep -q '"type":"recipe_reattached"' "$d/events" || fail "no recipe_reattached event"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# Round 2: a plain umount during a rerun; the item returns to done after the remount.
rm "$T/go"
rerun_10_wait 2
umount_store
assert_eq RUNNING "$(slurm_job_state "$id")" "job $id after umount"
mount_store "$M"
touch "$T/go"
assert_eq done "$(settled fix-1)" "state after the rerun"
assert_eq 2 "$(reg count "$r" recipe=10-wait status=validated)" "10-wait validated lines"
assert_eq "$id" "$(reg field "$r" -1 job_id recipe=10-wait)" "rerun job id"
assert_eq 0 "$(reg count "$r" status=interrupted)" "interrupted lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# Round 3: kill -9 while sbatch still runs (a slow sbatch on the daemon's PATH): the next
# daemon finds the job sbatch made by its output file and follows it; nothing is submitted
# twice.
rm "$T/go"
mkdir -p "$T/bin"
printf '#!/bin/sh\ntouch "%s/sbatch-started"\nsleep 3\nexec %s "$@"\n' "$T" "$(command -v sbatch)" \
	>"$T/bin/sbatch"
chmod +x "$T/bin/sbatch"
umount_store
PATH=$T/bin:$PATH mount_store "$M"
ctl "$M" fix-1 "rerun 10-wait"
wait_for test -e "$T/sbatch-started"
kill_daemon
sleep 4 # the orphaned sbatch submits the job meanwhile
mount_store "$M"
wait_for bash -c 'test "$(ls "$1"/*10-wait*.log | wc -l)" = 3' _ "$d/validation/logs"
touch "$T/go"
assert_eq done "$(settled fix-1)" "state after the third run"
assert_eq 3 "$(reg count "$r" recipe=10-wait status=validated)" "10-wait validated lines"
assert_eq 0 "$(reg count "$r" status=interrupted)" "interrupted lines"
assert_eq 3 "$(squeue -h -t all -n packetfs-fix-1-10-wait -o %Z | grep -cx "$STORE/worktrees/fix-1")" \
	"Slurm jobs of 10-wait after three runs"

# Round 4: Slurm requeues the running job: its output starts again, and the log says so.
rm "$T/go"
rerun_10_wait 4
requeued_at=$(date +%s)
scontrol requeue "$id" || fail "scontrol requeue $id failed"
wait_for grep -qs "job $id was requeued" "$log"
# A requeued job waits two minutes before it may start again; let it start now, once the second
# of the requeue is over: slurmd refuses a launch whose credential is not newer than the
# revocation of the first attempt's, in whole seconds ("Job credential revoked").
wait_for bash -c 'scontrol -o show job "$1" | grep -q " JobState=PENDING "' _ "$id"
later_than()
{
	[ "$(date +%s)" -gt "$1" ]
}
wait_for later_than $((requeued_at + 1))
wait_for scontrol update JobId="$id" StartTime=now
wait_for bash -c 'test "$(grep -c "waiting for go" "$1")" = 2' _ "$log"
touch "$T/go"
assert_eq done "$(settled fix-1)" "state after the requeued run"
assert_eq validated "$(reg field "$r" -1 status recipe=10-wait)" "requeued run's status"
assert_eq 1 "$(grep -c "went on" "$log")" "'went on' lines in the requeued run's log"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
"$PFS" check "$STORE" >"$T/check.out" 2>&1 || fail "packetfs check: $(cat "$T/check.out")"
exit 0
