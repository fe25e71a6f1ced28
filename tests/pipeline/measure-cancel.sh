#!/usr/bin/env bash
# cancel during a measured batch (one GPU of a pool of one, held for the whole batch): the run
# going on ends cancelled, no further run starts, the recipe's line is cancelled naming the run,
# the GPU goes back to the pool (a rerun gets it), the checkouts are removed and nothing of the
# batch is left running.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
	'# gpus: 1' '# measure: base' '# repeat: 5' "exec '$FIXTURES/measure/bench.sh'" \
	>"$RECIPES/07-bench.sh"
chmod +x "$RECIPES/07-bench.sh"
export BENCH_ORDER=$T/order
echo 60 >"$T/order.sleep"
PLAN_RECIPES="07-bench" GPUS=1 std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
lines_are() { [ "$(reg count "$r" recipe=07-bench)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for grep -q '^head ' "$T/order"
[ -n "$(procs_in "$STORE/measure")" ] || fail "no process runs in the head's checkout"
assert_eq 1 "$(reg count "$r" recipe=07-bench)" "lines before the cancel (the first base run)"
assert_eq "[0]" "$(python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])][0]["gpus"]))' "$r")" \
	"the base run's GPUs"
ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
wait_for lines_are 3
assert_eq head "$(reg field "$r" 1 side recipe=07-bench)" "the run that was going on"
assert_eq cancelled "$(reg field "$r" 1 status recipe=07-bench)" "its status"
assert_eq cancelled "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "run 2 of 10 (head side) cancelled"
assert_eq 2 "$(wc -l <"$T/order")" "runs started"
wait_for no_procs_in "$STORE/measure"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# The GPU is back: a rerun gets it and runs to the end.
rm "$T/order.sleep"
ctl "$M" fix-1 "rerun 07-bench"
wait_for lines_are 14
assert_eq validated "$(reg field "$r" -1 status recipe=07-bench)" "the rerun's line"
assert_eq "[0]" "$(python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])][-2]["gpus"]))' "$r")" \
	"the rerun's last run's GPUs"
assert_eq "[0]" "$(reg field "$r" -1 gpus recipe=07-bench | tr -d ' ')" "the rerun's line's GPUs"
sleep 0.2
assert_eq 12 "$(wc -l <"$T/order")" "runs started in all"
exit 0
