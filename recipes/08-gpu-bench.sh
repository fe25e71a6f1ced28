#!/usr/bin/env bash
# summary: GPU benchmark, the item's base against its head (make gpu-bench, else a CUDA SAXPY)
# gpus: 1
# measure: base
# warmup: 1
# repeat: 5
# needs: none
# timeout: 900
#
# The measured variant of 05-gpu-smoke (docs/measure.md "GPU recipes"): the engine runs it in
# clean checkouts of the item's merge-base and of its head, alternating, on the one GPU it
# granted for the whole batch (CUDA_VISIBLE_DEVICES), and compares the metrics the runs print.
# It runs `make -s gpu-bench` when the project's Makefile has a gpu-bench target, whose program
# prints "METRIC NAME VALUE [UNIT] [lower|higher]" lines. Without one, when nvcc is installed, it
# builds and times a SAXPY kernel (y = a*x + y over 64 Mi floats, CUDA events, 20 launches after
# 3 untimed ones), checks every element, and reports saxpy_ms (lower is better) and
# saxpy_gb_s (higher): the same program on both sides, so its interval shows how steady the
# GPU measures, an A/A run. $NVCC names the compiler (default: nvcc on PATH, else
# /usr/local/cuda/bin/nvcc). Where pipeline.json has a probe for the GPU stack, add a line
# "# requires: PROBE" so that a machine without it is blocked at once (docs/compute-env.md).
#
# Exit status: 0 measured, 77 blocked (no nvidia-smi, no GPU granted, or neither a gpu-bench
# target nor nvcc: nothing to measure), 1 nvidia-smi fails, the kernel does not build or run,
# or a result is wrong.
set -euo pipefail

# shellcheck disable=SC2034 # used by lib/report.sh
RECIPE=08-gpu-bench
# shellcheck source=lib/report.sh
. "$(dirname "$0")/lib/report.sh"

command -v nvidia-smi >/dev/null 2>&1 || blocked "nvidia-smi is not installed"
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] || blocked "no GPU granted (CUDA_VISIBLE_DEVICES is empty)"
say "gpus:     $CUDA_VISIBLE_DEVICES"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv ||
	fail "nvidia-smi cannot query the GPUs"

if [ -f Makefile ] && make -n gpu-bench >/dev/null 2>&1; then
	say "\$ make -s gpu-bench"
	exec make -s gpu-bench
fi

nvcc=${NVCC:-}
if [ -z "$nvcc" ] && command -v nvcc >/dev/null 2>&1; then
	nvcc=$(command -v nvcc)
elif [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
fi
[ -n "$nvcc" ] && [ -x "$nvcc" ] ||
	blocked "no Makefile with a 'gpu-bench' target here and no nvcc${nvcc:+ at $nvcc}: nothing to measure"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/saxpy.cu" <<'EOF'
// SAXPY on the first visible device, timed with CUDA events; exit 0 only when every element
// of the result is exact. Prints METRIC lines (docs/measure.md).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (64 << 20)
#define WARM 3
#define TIMED 20

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

static int check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "saxpy: %s: %s\n", what, cudaGetErrorString(e));
		return 1;
	}
	return 0;
}

int main(void)
{
	size_t bytes = (size_t)N * sizeof(float);
	float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx = NULL, *dy = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	long bad = 0;
	int rc = 1;

	if (!x || !y) {
		fprintf(stderr, "saxpy: out of memory\n");
		return 1;
	}
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 1024);
		y[i] = 0.0f;
	}
	if (check(cudaMalloc(&dx, bytes), "cudaMalloc") || check(cudaMalloc(&dy, bytes), "cudaMalloc") ||
	    check(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    check(cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    check(cudaEventCreate(&start), "cudaEventCreate") ||
	    check(cudaEventCreate(&stop), "cudaEventCreate"))
		goto out;
	/* y = 1*x + y, WARM + TIMED times: y ends as (WARM + TIMED) * x, exact in float. */
	for (int k = 0; k < WARM; k++)
		saxpy<<<(N + 255) / 256, 256>>>(N, 1.0f, dx, dy);
	if (check(cudaEventRecord(start), "cudaEventRecord"))
		goto out;
	for (int k = 0; k < TIMED; k++)
		saxpy<<<(N + 255) / 256, 256>>>(N, 1.0f, dx, dy);
	if (check(cudaGetLastError(), "kernel launch") || check(cudaEventRecord(stop), "cudaEventRecord") ||
	    check(cudaEventSynchronize(stop), "kernel run") ||
	    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime") ||
	    check(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy"))
		goto out;
	for (int i = 0; i < N; i++)
		if (y[i] != (float)((WARM + TIMED) * (i % 1024)))
			bad++;
	if (bad) {
		fprintf(stderr, "saxpy: %ld of %d elements wrong\n", bad, N);
		goto out;
	}
	ms /= TIMED;
	printf("saxpy: %d elements, %d timed launches, every result exact\n", N, TIMED);
	printf("METRIC saxpy_ms %.6f ms lower\n", ms);
	/* Each launch reads x and y and writes y. */
	printf("METRIC saxpy_gb_s %.3f GB/s higher\n", 3.0 * bytes / (ms / 1000.0) / 1e9);
	rc = 0;
out:
	if (start)
		cudaEventDestroy(start);
	if (stop)
		cudaEventDestroy(stop);
	cudaFree(dx);
	cudaFree(dy);
	cudaDeviceReset();
	free(x);
	free(y);
	return rc;
}
EOF

say "\$ $nvcc -O2 -o saxpy saxpy.cu"
"$nvcc" -O2 -o "$tmp/saxpy" "$tmp/saxpy.cu" || fail "nvcc could not build the SAXPY benchmark"
say "\$ ./saxpy"
"$tmp/saxpy" || fail "the SAXPY benchmark failed on the device"
