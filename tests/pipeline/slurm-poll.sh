#!/usr/bin/env bash
# How the daemon reads its jobs: one squeue a poll for all of them, and scontrol for one job only
# when something happens to it (so never while jobs wait). When the controller does not answer,
# the log of each job says so once, after ten failed reads in a row, and following goes on; a
# cancel is sent again at every poll until Slurm takes it. Slurm's commands on the daemon's
# PATH are wrappers that log every call, and fail as an unreachable controller makes them fail
# while the file "down" exists.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
mkdir -p "$T/bin"
for c in squeue scontrol scancel; do
	cat >"$T/bin/$c" <<WRAP
#!/bin/sh
echo "$c \$*" >>"$T/calls.log"
if [ -e "$T/down" ]; then
	echo "$c: error: Unable to contact slurm controller (connect failure)" >&2
	exit 1
fi
exec $(command -v "$c") "\$@"
WRAP
	chmod +x "$T/bin/$c"
done
PATH=$T/bin:$PATH slurm_item 10-wait 12-wait

ctl "$M" fix-1 advance
wait_for bash -c 'test "$(cat "$1"/*-wait*.log 2>/dev/null | grep -c "^waiting for go")" = 2' _ \
	"$d/validation/logs"
for rec in 10 12; do
	log=$(ls "$d/validation/logs/"*"$rec-wait"*.log)
	id=$(sed -n 's/^# slurm: submitted job \([0-9][0-9]*\),.*/\1/p' "$log")
	[ -n "$id" ] || fail "no job id in $log"
	eval "id_$rec=\$id log_$rec=\$log"
done

# Once squeue asks for both jobs (scontrol read each when squeue first showed it running, and
# is done), squeue alone follows them while they wait.
both="--jobs=\\($id_10,$id_12\\|$id_12,$id_10\\) "
wait_for grep -q -- "^squeue .*$both" "$T/calls.log"
for id in "$id_10" "$id_12"; do
	assert_eq 1 "$(grep -c "^scontrol -o -d show job $id$" "$T/calls.log")" "scontrol reads of job $id"
done
: >"$T/calls.log"
wait_for bash -c 'test "$(grep -c "^squeue " "$1")" -ge 10' _ "$T/calls.log"
assert_eq 0 "$(grep -c "^scontrol" "$T/calls.log")" "scontrol calls while the jobs wait"
assert_eq "$(grep -c "^squeue " "$T/calls.log")" "$(grep -c -- "^squeue .*$both" "$T/calls.log")" \
	"squeue calls that ask for both jobs"

# The controller does not answer: each log says so once; a cancel does not get through.
touch "$T/down"
note="cannot read the state of job"
wait_for grep -qs "$note $id_10: Unable to contact slurm controller (connect failure)" "$log_10"
wait_for grep -qs "$note $id_12: Unable to contact slurm controller (connect failure)" "$log_12"
ctl "$M" fix-1 cancel
for id in "$id_10" "$id_12"; do
	wait_for bash -c 'test "$(grep -c "^scancel $2$" "$1")" -ge 3' _ "$T/calls.log" "$id"
	assert_eq RUNNING "$(slurm_job_state "$id")" "job $id while the controller is away"
done
assert_eq running "$(status_field "$M" fix-1 state)" "state while the controller is away"
rm "$T/down"
settled fix-1 >/dev/null
for rec in 10 12; do
	eval "id=\$id_$rec log=\$log_$rec"
	assert_eq cancelled "$(reg field "$r" 0 status recipe=$rec-wait)" "$rec-wait status"
	assert_eq "cancelled (signal 15)" "$(reg field "$r" 0 note recipe=$rec-wait)" "$rec-wait note"
	assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of job $id"
	assert_eq 1 "$(grep -c "$note" "$log")" "'$note' lines in $log"
	assert_contains "$(cat "$log")" "waiting for go" "$rec-wait log"
done
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
