#!/usr/bin/env bash
# The shipped measured GPU recipe recipes/08-gpu-bench.sh, with the stand-in nvidia-smi
# (tests/fixtures/bin) reporting one device and a pool of one GPU: on a project whose Makefile
# has a gpu-bench target, every run (1 warmup and 5 counted a side, base and head alternating)
# runs that target on GPU 0, and the recipe validates with the change in its metric. Run by
# hand, it is blocked (exit 77) without nvidia-smi, without a granted GPU, and without a
# gpu-bench target or nvcc.
. "$(dirname "$0")/../lib.sh"
make_repo
cat >>"$REPO/Makefile" <<'MK'

gpu-bench:
	@sh gpubench.sh
MK
# A stand-in GPU benchmark: it asks the device as a real one would, and reports its kernel time
# (10% longer once the print stage changed hello.c), and the device it ran on.
cat >"$REPO/gpubench.sh" <<'SH'
nvidia-smi --query-gpu=index,name --format=csv,noheader >/dev/null || exit 1
[ -n "$CUDA_VISIBLE_DEVICES" ] || exit 1
if grep -q "new world" hello.c; then ms=2.2; else ms=2.0; fi
echo "gpu $CUDA_VISIBLE_DEVICES" >>"$GPU_BENCH_LOG"
echo "METRIC kernel_ms $ms ms"
SH
git -C "$REPO" add -A
git -C "$REPO" commit -qm "a GPU benchmark"
RECIPES=$T/recipes
mkdir -p "$RECIPES"
cp -r "$ROOT/recipes/08-gpu-bench.sh" "$ROOT/recipes/lib" "$RECIPES/"
export PATH="$FIXTURES/bin:$PATH"
export FAKE_NVIDIA_SMI_STATE="$T/smi-state"
export GPU_BENCH_LOG=$T/gpu-bench.log
printf 'gpu 0 GPU-stand-in-0 100\n' >"$FAKE_NVIDIA_SMI_STATE"
PLAN_RECIPES="08-gpu-bench" GPUS=1 std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
verdict_is() { [ "$(status_field "$M" fix-1 verdict)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for -t 120 verdict_is pass
assert_eq 13 "$(reg count "$r" recipe=08-gpu-bench)" "registry lines (12 runs and the verdict)"
assert_eq 6 "$(reg count "$r" recipe=08-gpu-bench side=base status=validated)" "base runs"
assert_eq 6 "$(reg count "$r" recipe=08-gpu-bench side=head status=validated)" "head runs"
assert_eq "$(printf 'gpu 0\n%.0s' {1..12})" "$(cat "$GPU_BENCH_LOG")" "the GPU of every run"
assert_eq "[0]" "$(python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])][-2]["gpus"]))' "$r")" \
	"the last run's GPUs"
assert_contains "$(reg field "$r" -1 note recipe=08-gpu-bench)" "kernel_ms 2 -> 2.2 ms (x1.100, 95% CI 1.100-1.100)"
assert_contains "$(cat "$d/validation/measurements.md")" "| kernel_ms | ms | lower | 2 | 2.2 | 1.100 (+10.0%) |"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=08-gpu-bench)")
assert_contains "$log" "# side: base (warmup, discarded)"
assert_contains "$log" "gpus:     0"
assert_contains "$log" "\$ make -s gpu-bench"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# By hand: blocked where it cannot measure.
cd "$T" || fail "cd $T"
# blocked_with WHY ENV... : the recipe, run with ENV, exits 77 saying WHY.
blocked_with()
{
	local why=$1 rc=0 out
	shift
	out=$(env "$@" "$RECIPES/08-gpu-bench.sh" 2>&1) || rc=$?
	assert_eq 77 "$rc" "exit status ($why)"
	assert_contains "$out" "08-gpu-bench: BLOCKED: $why"
}
blocked_with "nvidia-smi is not installed" PATH=/usr/bin:/bin
blocked_with "no GPU granted (CUDA_VISIBLE_DEVICES is empty)" CUDA_VISIBLE_DEVICES=
blocked_with "no Makefile with a 'gpu-bench' target here and no nvcc at $T/no-nvcc: nothing to measure" \
	CUDA_VISIBLE_DEVICES=0 NVCC="$T/no-nvcc"
exit 0
