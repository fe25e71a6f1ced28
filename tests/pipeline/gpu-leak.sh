#!/usr/bin/env bash
# Leak checks, with the stand-in nvidia-smi (tests/fixtures/bin, first on PATH for the daemon;
# no GPU needed) reporting two devices. A recipe that leaves a compute process on its device
# gets a note on its registry line and the device is held back: the next GPU recipe gets the
# other device, a 2-GPU recipe waits until the test clears the leak, then the device returns to
# service and it runs on both. Memory left above the baseline holds a device back the same way.
# The daemon ends cleanly while a device is held back.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
. "$TESTS_DIR/lib_gpu.sh"

# output_is TEXT CMD... : whether CMD (run now, each time wait_for polls) prints TEXT.
output_is()
{
	[ "$("${@:2}" 2>/dev/null)" = "$1" ]
}

# recipe NAME GPUS BODY : an executable recipe in $RECIPES needing GPUS GPUs.
recipe()
{
	printf '#!/usr/bin/env bash\n# summary: %s\n# gpus: %s\n# timeout: 60\n%s\n' \
		"$1, a gpu-leak test recipe" "$2" "$3" >"$RECIPES/$1"
	chmod +x "$RECIPES/$1"
}
mark='echo "$RECIPE_NAME on $CUDA_VISIBLE_DEVICES" | tee "$(dirname "$0")/../ran-$RECIPE_NAME"'
# Leaves a compute process on its device, as far as the stand-in tells.
recipe 41-leak 1 "$mark"'
s=$FAKE_NVIDIA_SMI_STATE
{ cat "$s"; echo "app 4242 GPU-stand-in-$CUDA_VISIBLE_DEVICES 500"; } >"$s.tmp" && mv "$s.tmp" "$s"'
recipe 42-after 1 "$mark"
recipe 43-both 2 "$mark"
# Leaves 1000 MiB more in use on its device than the baseline.
recipe 44-memleak 1 "$mark"'
s=$FAKE_NVIDIA_SMI_STATE
awk -v d="$CUDA_VISIBLE_DEVICES" '"'"'$1 == "gpu" && $2 == d { $4 += 1000 } { print }'"'"' "$s" >"$s.tmp" &&
	mv "$s.tmp" "$s"'

pipeline_with "$T/pipeline.json" "$(plan_stage 41-leak 42-after 43-both 44-memleak)" "$(print_stage)" \
	"$(validate_stage)"
# One recipe at a time, auto-detected GPUs.
sed -i -e 's/"gpus": [0-9]*,/"gpus": "auto",/' \
	-e 's/"max_parallel_recipes": [0-9]*/"max_parallel_recipes": 1/' "$T/pipeline.json"
grep -q '"max_parallel_recipes": 1' "$T/pipeline.json" || fail "pipeline.json edit failed"
mount_item "$T/pipeline.json"

held_events() { grep -c '"type":"gpu_held"' "$M/events" || true; }
released_events() { grep -c '"type":"gpu_released"' "$M/events" || true; }

ctl "$M" fix-1 advance
# 41-leak ran on GPU 0 and left a process there: noted, GPU 0 held back.
wait_for output_is 1 reg count "$r" recipe=42-after
assert_eq "41-leak on 0" "$(cat "$T/ran-41-leak")" "41-leak's device"
assert_eq validated "$(reg field "$r" 0 status recipe=41-leak)" "status of 41-leak"
assert_eq "leak check: GPU 0: 1 compute process" "$(reg field "$r" 0 note recipe=41-leak)" \
	"note of 41-leak"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=41-leak)")" \
	"status validated: leak check: GPU 0: 1 compute process" "41-leak log footer"
held=$(grep '"type":"gpu_held"' "$d/events") || fail "no gpu_held event: $(cat "$d/events")"
assert_contains "$held" '"recipe":"41-leak"' "gpu_held event"
assert_contains "$held" '"gpus":[0]' "gpu_held event"
assert_contains "$held" '"reason":"GPU 0: 1 compute process"' "gpu_held event"
# The next GPU recipe got the other device.
assert_eq "42-after on 1" "$(cat "$T/ran-42-after")" "42-after's device"
assert_eq "[1]" "$(reg field "$r" 0 gpus recipe=42-after)" "registry gpus of 42-after"
assert_eq "" "$(reg field "$r" 0 note recipe=42-after)" "note of 42-after"
# 43-both waits for GPU 0, held back until the leak is gone.
[ ! -e "$T/ran-43-both" ] || fail "43-both ran while GPU 0 was held back"
assert_eq 0 "$(reg count "$r" recipe=43-both)" "registry lines of 43-both"
assert_eq 0 "$(released_events)" "gpu_released events before the leak is cleared"
assert_eq running "$(status_field "$M" fix-1 state)" "state while 43-both waits"

# The process is gone: GPU 0 returns to service, 43-both runs on both devices.
smi_state "$CLEAN"
wait_for output_is 1 released_events
assert_contains "$(grep '"type":"gpu_released"' "$M/events")" '"gpus":[0]' "gpu_released event"
wait_for test -e "$T/ran-44-memleak"
wait_state "$M" fix-1 done
assert_eq "43-both on 0,1" "$(cat "$T/ran-43-both")" "43-both's devices"
assert_eq validated "$(reg field "$r" 0 status recipe=43-both)" "status of 43-both"
assert_eq "" "$(reg field "$r" 0 note recipe=43-both)" "note of 43-both"

# 44-memleak left 1000 MiB above GPU 0's baseline: noted, held back.
assert_eq "44-memleak on 0" "$(cat "$T/ran-44-memleak")" "44-memleak's device"
assert_eq "leak check: GPU 0: 1000 MiB above baseline" "$(reg field "$r" 0 note recipe=44-memleak)" \
	"note of 44-memleak"
wait_for output_is 2 held_events
assert_contains "$(grep '"type":"gpu_held"' "$d/events" | tail -n 1)" \
	'"reason":"GPU 0: 1000 MiB above baseline"' "second gpu_held event"
smi_state "$CLEAN"
wait_for output_is 2 released_events
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# A rerun leaks again; the daemon still ends cleanly while GPU 0 is held back.
ctl "$M" fix-1 "rerun 41-leak"
wait_for output_is 2 reg count "$r" recipe=41-leak
wait_for output_is 3 held_events
assert_eq "leak check: GPU 0: 1 compute process" "$(reg field "$r" -1 note recipe=41-leak)" \
	"note of the rerun of 41-leak"
umount_store
exit 0
