#!/usr/bin/env bash
# With "gpus": N (declared slots) a GPU recipe runs with CUDA_VISIBLE_DEVICES set to the GPU
# it was granted, and its registry line names it.
. "$(dirname "$0")/../lib.sh"
GPUS=1 std_item 04-gpu 02-lint

ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
[ -e "$T/gpu-recipe-ran" ] || fail "the GPU recipe did not run"
assert_eq 1 "$(reg count "$r" recipe=04-gpu status=validated source=engine)" "validated 04-gpu"
assert_eq "[0]" "$(reg field "$r" 0 gpus recipe=04-gpu)" "gpus of 04-gpu"
assert_eq "[]" "$(reg field "$r" 0 gpus recipe=02-lint)" "gpus of 02-lint"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=04-gpu)")" "CUDA_VISIBLE_DEVICES=0" \
	"04-gpu log"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
