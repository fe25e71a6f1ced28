#!/usr/bin/env bash
# Test counts from JUnit XML under the slurm executor: each job gets $PACKET_JUNIT in the Slurm
# shared directory (STORE/slurm by default), counted as for a local run; a daemon killed while
# a job runs is followed by one that reads the same job's file when it ends; every directory
# is removed once its run is recorded.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
copy_recipes junit
MAX_PARALLEL=3 slurm_item 21-junit-fail 22-junit-pass 25-junit-wait

ctl "$M" fix-1 advance
wait_for bash -c 'grep -qs "waiting for go" "$1"/*25-junit-wait*.log' _ "$d/validation/logs"
kill_daemon
mount_store "$M"
touch "$T/go"
assert_eq done "$(settled fix-1)" "state at the end"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "verdict"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# expect RECIPE STATUS NOTE
expect()
{
	assert_eq 1 "$(reg count "$r" recipe="$1")" "lines of $1"
	assert_eq "$2" "$(reg field "$r" 0 status recipe="$1")" "status of $1"
	assert_eq "$3" "$(reg field "$r" 0 note recipe="$1")" "note of $1"
	assert_eq slurm "$(reg field "$r" 0 executor recipe="$1")" "executor of $1"
	assert_eq 0 "$(reg field "$r" 0 exit_code recipe="$1")" "exit code of $1"
}
expect 21-junit-fail failing "1 of 3 tests failed (JUnit XML)"
expect 22-junit-pass validated "2 tests ran, 1 skipped (JUnit XML)"
expect 25-junit-wait failing "1 of 1 test failed (JUnit XML)"
for rec in 21-junit-fail 22-junit-pass 25-junit-wait; do
	p=$(sed -n 's/^junit: //p' "$d/$(reg field "$r" 0 evidence recipe=$rec)")
	assert_eq "$STORE/slurm/junit/" "${p%/*/junit.xml}/" "the directory of $rec's \$PACKET_JUNIT"
done
assert_eq "" "$(ls -A "$STORE/slurm/junit")" "what is left in $STORE/slurm/junit"
exit 0
