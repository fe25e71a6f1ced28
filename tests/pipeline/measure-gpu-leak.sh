#!/usr/bin/env bash
# A measured recipe on one of two GPUs (the stand-in nvidia-smi, auto-detected) whose first head
# run leaves a compute process on its device: that run's line notes the leak and a gpu_held
# event names it; the batch keeps its GPU (the other recipe queued behind it gets the other one)
# but starts no further run while the device leaks; once the test clears the leak the batch goes
# on on the same GPU and ends validated, its note saying it waited. A second batch that leaks is
# cancelled while it waits: its line is cancelled at once, and the device is back in service
# once clean.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_measure.sh"
make_repo
copy_recipes
. "$TESTS_DIR/lib_gpu.sh"
export BENCH_ORDER=$T/order
# The first head run of a batch (the file $T/leak exists) leaves a process on its device.
printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
	'# gpus: 1' '# measure: base' '# repeat: 2' \
	"'$FIXTURES/measure/bench.sh' || exit 1" \
	'echo "run on $CUDA_VISIBLE_DEVICES" >>"$BENCH_ORDER.gpus"' \
	'if grep -q "new world" hello.c && [ -e "$BENCH_ORDER.leak" ]; then' \
	'	rm "$BENCH_ORDER.leak"; s=$FAKE_NVIDIA_SMI_STATE' \
	'	{ cat "$s"; echo "app 4242 GPU-stand-in-$CUDA_VISIBLE_DEVICES 500"; } >"$s.tmp" && mv "$s.tmp" "$s"' \
	'fi' >"$RECIPES/07-bench.sh"
printf '%s\n' '#!/bin/sh' '# summary: another GPU recipe' '# needs: none' '# gpus: 1' \
	'echo "other on $CUDA_VISIBLE_DEVICES" >>"$BENCH_ORDER.gpus"' >"$RECIPES/08-other.sh"
chmod +x "$RECIPES/07-bench.sh" "$RECIPES/08-other.sh"
touch "$T/order.leak"
PLAN_RECIPES="07-bench 08-other" std_pipeline "$T/pipeline.json"
sed -i -e 's/"gpus": [0-9]*,/"gpus": "auto",/' "$T/pipeline.json"
mount_item "$T/pipeline.json"
lines_are() { [ "$(reg count "$r" recipe=07-bench)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for lines_are 2
wait_for grep -q "other on 1" "$T/order.gpus"
assert_eq "leak check: GPU 0: 1 compute process" "$(reg field "$r" 1 note recipe=07-bench)" \
	"the leaking head run's note"
assert_eq validated "$(reg field "$r" 1 status recipe=07-bench)" "its status"
held=$(grep '"type":"gpu_held"' "$d/events") || fail "no gpu_held event: $(cat "$d/events")"
assert_contains "$held" '"recipe":"07-bench"'
assert_contains "$held" '"reason":"GPU 0: 1 compute process"'
sleep 3 # a recheck or more: the device still leaks, no run starts
assert_eq 2 "$(wc -l <"$T/order")" "runs started while GPU 0 leaks"
smi_state "$CLEAN"
wait_for verdict_is pass
assert_eq 5 "$(reg count "$r" recipe=07-bench)" "07-bench's lines (4 runs, the verdict)"
assert_eq "run on 0
run on 0
run on 0
run on 0" "$(grep '^run' "$T/order.gpus")" "the GPU of every run"
note=$(reg field "$r" -1 note recipe=07-bench)
assert_contains "$note" "wall_s 0.995 -> 1.507 s"
assert_contains "$note" "the batch waited "
assert_contains "$note" " s for its GPUs to be clean after 1 leaking run(s)"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# Leaking again; cancelled while it waits.
touch "$T/order.leak"
: >"$T/order"
ctl "$M" fix-1 "rerun 07-bench"
wait_for lines_are 7
sleep 1
ctl "$M" fix-1 cancel
wait_for lines_are 8
assert_eq cancelled "$(reg field "$r" -1 status recipe=07-bench)" "the waiting batch's line"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "cancelled after 2 of 4 run(s)"
assert_eq 2 "$(wc -l <"$T/order")" "runs started"
smi_state "$CLEAN"
wait_for grep -q '"type":"gpu_released"' "$M/events"
exit 0
