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

# shellcheck disable=SC2034 # used by lib/report.sh
RECIPE=05-gpu-smoke
# shellcheck source=lib/report.sh
. "$(dirname "$0")/lib/report.sh"

say "recipe:   ${RECIPE_NAME:-$RECIPE}"
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

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/vecadd.cu" <<'EOF'
// Vector addition on every visible device; exit 0 only when all results are exact.
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 20)

__global__ void vecadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

static int check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "vecadd: %s: %s\n", what, cudaGetErrorString(e));
		return 1;
	}
	return 0;
}

static int run_on(int dev)
{
	static float a[N], b[N], c[N];
	float *da = NULL, *db = NULL, *dc = NULL;
	size_t bytes = N * sizeof(float);
	int bad = 0, rc = 1;

	for (int i = 0; i < N; i++) {
		a[i] = (float)(i % 1000);
		b[i] = (float)(2 * (i % 1000));
		c[i] = -1.0f;
	}
	if (check(cudaSetDevice(dev), "cudaSetDevice") ||
	    check(cudaMalloc(&da, bytes), "cudaMalloc") ||
	    check(cudaMalloc(&db, bytes), "cudaMalloc") ||
	    check(cudaMalloc(&dc, bytes), "cudaMalloc") ||
	    check(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    check(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice), "cudaMemcpy"))
		goto out;
	vecadd<<<(N + 255) / 256, 256>>>(da, db, dc, N);
	if (check(cudaGetLastError(), "kernel launch") ||
	    check(cudaDeviceSynchronize(), "kernel run") ||
	    check(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy"))
		goto out;
	for (int i = 0; i < N; i++) {
		if (c[i] != (float)(3 * (i % 1000))) {
			if (bad < 5)
				fprintf(stderr, "vecadd: device %d: c[%d] = %g, expected %d\n", dev, i,
					c[i], 3 * (i % 1000));
			bad++;
		}
	}
	printf("device %d: %d elements, %d wrong\n", dev, N, bad);
	rc = bad != 0;
out:
	cudaFree(da);
	cudaFree(db);
	cudaFree(dc);
	cudaDeviceReset();
	return rc;
}

int main(void)
{
	int n = 0, failed = 0;

	if (check(cudaGetDeviceCount(&n), "cudaGetDeviceCount"))
		return 1;
	if (n == 0) {
		fprintf(stderr, "vecadd: no CUDA device visible\n");
		return 1;
	}
	for (int d = 0; d < n; d++)
		failed += run_on(d);
	printf("%d devices, %d failed\n", n, failed);
	return failed != 0;
}
EOF

say "\$ $nvcc -O2 -o vecadd vecadd.cu"
"$nvcc" -O2 -o "$tmp/vecadd" "$tmp/vecadd.cu" || fail "nvcc could not build the vector-add test"
say "\$ ./vecadd"
"$tmp/vecadd" || fail "the vector addition failed on the device"
say "05-gpu-smoke: validated"
