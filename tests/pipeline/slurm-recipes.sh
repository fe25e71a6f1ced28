#!/usr/bin/env bash
# The slurm executor: each recipe run is one Slurm batch job. A passing, a failing and a GPU
# recipe run on the one-node cluster of tests/run.sh; their registry lines carry the executor
# and the job id, their logs hold the job's output, the GPU recipe sees the device Slurm granted
# (CUDA_VISIBLE_DEVICES), and the jobs are known to Slurm with the states the lines say.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
slurm_item 01-build 03-fail 04-gpu

ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" "state after validate"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_eq 1 "$(reg count "$r" recipe=01-build status=validated source=engine)" "01-build validated"
assert_eq 1 "$(reg count "$r" recipe=03-fail status=failing source=engine)" "03-fail failing"
assert_eq 1 "$(reg count "$r" recipe=04-gpu status=validated source=engine)" "04-gpu validated"
for rec in 01-build 03-fail 04-gpu; do
	assert_eq slurm "$(reg field "$r" 0 executor recipe=$rec)" "$rec executor"
	id=$(reg field "$r" 0 job_id recipe=$rec)
	[[ "$id" =~ ^[0-9]+$ ]] || fail "$rec: job_id '$id' is not a Slurm job id"
	want=COMPLETED
	[ "$rec" != 03-fail ] || want=FAILED
	assert_eq "$want" "$(slurm_job_state "$id")" "Slurm state of $rec's job $id"
done
assert_eq 1 "$(reg field "$r" 0 exit_code recipe=03-fail)" "03-fail exit code"
assert_eq "[0]" "$(reg field "$r" 0 gpus recipe=04-gpu)" "04-gpu gpus"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=04-gpu)")
assert_contains "$log" "CUDA_VISIBLE_DEVICES=0" "04-gpu log"
assert_contains "$log" "# slurm: submitted job" "04-gpu log"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=01-build)")
assert_contains "$log" "hello, new world" "01-build log (the job's output)"
assert_contains "$log" "# packetfs: exit code 0" "01-build log footer"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=03-fail)")
assert_contains "$log" "this recipe fails on purpose" "03-fail log"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "verdict"
"$PFS" check "$STORE" >"$T/check.out" 2>&1 || fail "packetfs check: $(cat "$T/check.out")"
exit 0
