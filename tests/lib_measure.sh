# shellcheck shell=bash disable=SC2154 # T, RECIPES, FIXTURES, M, STORE, d, r: tests/lib.sh
# tests/lib_measure.sh - the measured recipe of the measure tests (tests/pipeline/measure*.sh,
# slurm-measure*.sh): the benchmark recipe 07-bench over the fixture tests/fixtures/measure/
# bench.sh, the order its runs took, the item's verdict, and (with tests/slurm.sh) a batch
# whose head run, a Slurm job, outlives its daemon. Source after tests/lib.sh (and slurm.sh):
#
#	. "$TESTS_DIR/lib_measure.sh"
#	bench_recipe '# measure: base' '# repeat: 2'

# bench_recipe HEADER... : the recipe $RECIPES/07-bench.sh ("the benchmark, base against head",
# needing nothing) with the header lines HEADER (e.g. '# measure: base' '# repeat: 2'), that
# runs the fixture bench.sh; exports BENCH_ORDER=$T/order, the file where bench.sh writes each
# run's side and commit (and $T/order.sleep, when present, the seconds a head run sleeps).
bench_recipe()
{
	printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
		"$@" "exec '$FIXTURES/measure/bench.sh'" >"$RECIPES/07-bench.sh"
	chmod +x "$RECIPES/07-bench.sh"
	export BENCH_ORDER=$T/order
}

# verdict_is VERDICT : whether the item fix-1 on $M has the verdict VERDICT (for wait_for).
verdict_is()
{
	[ "$(status_field "$M" fix-1 verdict)" = "$1" ]
}

# assert_order PAIRS BASE HEAD : $T/order holds PAIRS times the line "base BASE" then the line
# "head HEAD": the runs alternated, each at its side's commit.
assert_order()
{
	local want="" i
	for ((i = 0; i < $1; i++)); do
		want+="base $2"$'\n'"head $3"$'\n'
	done
	assert_eq "${want%$'\n'}" "$(cat "$T/order")" "the runs' sides and commits, in order"
}

# slurm_head_run : an item fix-1 on the slurm executor (slurm_item) whose plan names 07-bench,
# measured two runs a side, advanced until its first head run runs as a Slurm job and holds
# (bench.sh sleeps 600 s while $T/order.sleep exists); sets id to that job's id.
slurm_head_run()
{
	need_slurm
	copy_recipes slurm
	bench_recipe '# measure: base' '# repeat: 2'
	echo 600 >"$T/order.sleep"
	slurm_item 07-bench
	ctl "$M" fix-1 advance
	wait_for grep -q '^head ' "$T/order"
	id=$(squeue --noheader --format=%i --name="packetfs-fix-1-07-bench" --states=RUNNING)
	[[ "$id" =~ ^[0-9]+$ ]] || fail "no single running job of the head run: '$id'"
}

# slurm_head_run_again ID : once the daemon of slurm_head_run has ended (ID: its head run's
# job), lets that run go on and mounts the store again; then checks that the run was recorded
# once, as interrupted, with its side and its job ID, which Slurm shows cancelled (its log says
# so), and that the batch ran again to a pass, each run a job of its own, its checkouts gone.
slurm_head_run_again()
{
	rm "$T/order.sleep"
	mount_store "$M"
	wait_for verdict_is pass
	assert_eq 1 "$(reg count "$r" recipe=07-bench status=interrupted)" "interrupted lines"
	assert_eq head "$(reg field "$r" 0 side recipe=07-bench status=interrupted)" "the interrupted run's side"
	assert_eq "$1" "$(reg field "$r" 0 job_id recipe=07-bench status=interrupted)" "its job"
	assert_eq CANCELLED "$(slurm_job_state "$1")" "Slurm state of its job"
	assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=07-bench status=interrupted)")" \
		"# packetfs: Slurm job $1 of this measured run cancelled"
	assert_eq validated "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line after the rerun"
	assert_eq 3 "$(reg count "$r" recipe=07-bench status=validated side=base)" "base lines: one before, two after"
	assert_eq 2 "$(reg count "$r" recipe=07-bench status=validated side=head)" "head lines after the rerun"
	assert_eq 6 "$(python3 -c '
import json, sys
print(len({json.loads(l)["job_id"] for l in open(sys.argv[1]) if "side" in json.loads(l)}))' "$r")" \
		"distinct jobs of the runs"
	[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
	reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
}
