#!/usr/bin/env bash
# summary: GPU smoke test: nvidia-smi sees the granted GPUs, a CUDA vector add gives exact results
# gpus: 1
# timeout: 300
#
# Runs on the GPUs the engine granted (CUDA_VISIBLE_DEVICES). Queries them
# with nvidia-smi; when nvcc is installed, also compiles and runs a vector
# addition on each visible device in a temporary directory and checks
# every element of the result. All device memory is freed before exit, so
# the engine's leak check finds the GPU as it was.
#
# Exit status: 0 the GPUs answer (and compute correctly), 77 no nvidia-smi
# or no GPU granted, 1 nvidia-smi fails, the kernel does not build or run,
# or a result is wrong.
set -euo pipefail

say() { printf '%s\n' "$*"; }
fail() { say "05-gpu-smoke: FAILING: $*"; exit 1; }
blocked() { say "05-gpu-smoke: BLOCKED: $*"; exit 77; }

say "recipe:   ${RECIPE_NAME:-05-gpu-smoke}"
command -v nvidia-smi >/dev/null 2>&1 || blocked "nvidia-smi is not installed"
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] || blocked "no GPU granted (CUDA_VISIBLE_DEVICES is empty)"
say "gpus:     $CUDA_VISIBLE_DEVICES"

say "\$ nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv -i $CUDA_VISIBLE_DEVICES"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv -i "$CUDA_VISIBLE_DEVICES" ||
	fail "nvidia-smi cannot query GPU(s) $CUDA_VISIBLE_DEVICES"

nvcc=""
if command -v nvcc >/dev/null 2>&1; then
	nvcc=$(command -v nvcc)
elif [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
fi
if [ -z "$nvcc" ]; then
	say "05-gpu-smoke: nvcc is not installed: the kernel test is skipped"
	say "05-gpu-smoke: validated (nvidia-smi query only)"
	exit 0
fi
