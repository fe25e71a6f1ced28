#!/usr/bin/env bash
# "gpus": "auto" finds two devices through the stand-in nvidia-smi (tests/fixtures/bin, first on
# PATH for the daemon; no GPU needed): two 1-GPU recipes run at the same time on disjoint
# CUDA_VISIBLE_DEVICES sets, a recipe needing 3 GPUs is blocked without running, and the leak
# checks that find nothing leave no note.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes

export PATH="$FIXTURES/bin:$PATH"
export FAKE_NVIDIA_SMI_STATE="$T/smi-state" FAKE_NVIDIA_SMI_LOG="$T/smi-log"
printf 'gpu 0 GPU-stand-in-0 100\ngpu 1 GPU-stand-in-1 120\n' >"$FAKE_NVIDIA_SMI_STATE"

# output_is TEXT CMD... : whether CMD (run now, each time wait_for polls) prints TEXT.
output_is()
{
	[ "$("${@:2}" 2>/dev/null)" = "$1" ]
}

# recipe NAME GPUS BODY : an executable recipe in $RECIPES needing GPUS GPUs.
recipe()
{
	printf '#!/usr/bin/env bash\n# summary: %s\n# gpus: %s\n# timeout: 60\n# needs: none\n%s\n' \
		"$1, a gpu-auto test recipe" "$2" "$3" >"$RECIPES/$1"
	chmod +x "$RECIPES/$1"
}
# Each of the pair leaves a marker holding its devices, then waits (bounded) for the other's:
# it validates only when both ran at the same time.
pair='dir=$(dirname "$0")/..
echo "$CUDA_VISIBLE_DEVICES" >"$dir/pair-$RECIPE_NAME.tmp" && mv "$dir/pair-$RECIPE_NAME.tmp" "$dir/pair-$RECIPE_NAME"
for _ in $(seq 600); do
	[ -e "$dir/pair-$OTHER" ] && { echo "ran with $OTHER on $CUDA_VISIBLE_DEVICES"; exit 0; }
	sleep 0.05
done
echo "$OTHER never ran alongside"
exit 1'
recipe 31-pair-a 1 "OTHER=32-pair-b; $pair"
recipe 32-pair-b 1 "OTHER=31-pair-a; $pair"
recipe 33-three 3 'touch "$(dirname "$0")/../ran-33-three"'

pipeline_with "$T/pipeline.json" "$(plan_stage 31-pair-a 32-pair-b 33-three)" "$(print_stage)" \
	"$(validate_stage)"
sed -i 's/"gpus": [0-9]*,/"gpus": "auto",/' "$T/pipeline.json"
grep -q '"gpus": "auto"' "$T/pipeline.json" || fail "pipeline.json does not ask for auto"
mount_item "$T/pipeline.json"

ctl "$M" fix-1 advance
wait_for output_is 3 reg count "$r"
wait_state "$M" fix-1 done

# The pair: both validated, together, on one device each, never the same.
assert_eq 1 "$(reg count "$r" recipe=31-pair-a status=validated source=engine)" "validated 31-pair-a"
assert_eq 1 "$(reg count "$r" recipe=32-pair-b status=validated source=engine)" "validated 32-pair-b"
a=$(cat "$T/pair-31-pair-a") b=$(cat "$T/pair-32-pair-b")
assert_eq "0 1" "$(printf '%s\n%s\n' "$a" "$b" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"CUDA_VISIBLE_DEVICES of the pair ($a, $b)"
assert_eq "[$a]" "$(reg field "$r" 0 gpus recipe=31-pair-a)" "registry gpus of 31-pair-a"
assert_eq "[$b]" "$(reg field "$r" 0 gpus recipe=32-pair-b)" "registry gpus of 32-pair-b"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=31-pair-a)")" "ran with 32-pair-b" \
	"31-pair-a log"
# Nothing was left behind: no leak note.
assert_eq "" "$(reg field "$r" 0 note recipe=31-pair-a)" "note of 31-pair-a"
assert_eq "" "$(reg field "$r" 0 note recipe=32-pair-b)" "note of 32-pair-b"
# The leak checks did look: at the devices and at the compute processes.
grep -q -- '--query-gpu=index,uuid,memory.used' "$FAKE_NVIDIA_SMI_LOG" ||
	fail "the pool never asked nvidia-smi for its devices: $(cat "$FAKE_NVIDIA_SMI_LOG")"
grep -q -- '--query-compute-apps=' "$FAKE_NVIDIA_SMI_LOG" ||
	fail "no leak check asked nvidia-smi for compute processes: $(cat "$FAKE_NVIDIA_SMI_LOG")"

# More GPUs than exist: blocked, never run, with the reason.
[ ! -e "$T/ran-33-three" ] || fail "the 3-GPU recipe ran on a pool of 2"
assert_eq 1 "$(reg count "$r" recipe=33-three status=blocked source=engine)" "blocked 33-three"
assert_contains "$(reg field "$r" 0 note recipe=33-three)" "needs 3 GPU(s), the pool has 2" \
	"note of 33-three"
assert_eq "[]" "$(reg field "$r" 0 gpus recipe=33-three)" "registry gpus of 33-three"
grep -q '"type":"gpu_held"' "$M/events" && fail "a device was held back: $(cat "$M/events")"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
check_status "$M" fix-1
exit 0
