/*
 * gpu.h - the GPU pool: which device indices exist, which are free.
 *
 * The pool is created from the configuration: GPU_SLOTS declares N slots
 * (0..N-1), GPU_LIST names device indices, GPU_AUTO asks
 * `nvidia-smi --query-gpu=index --format=csv,noheader` (no nvidia-smi, or an
 * error, means no GPUs). Grants are all-or-nothing and disjoint; waiting and
 * fairness (FIFO) are the caller's business: the caller retries the oldest
 * waiter first whenever GPUs are released.
 *
 * Threads: not thread-safe; the engine loop thread owns the pool.
 */
#ifndef PACKETFS_GPU_H
#define PACKETFS_GPU_H

#include "config.h"

struct gpu_pool;

/* Creates the pool. Returns 0 or -ENOMEM. GPU_AUTO runs nvidia-smi
 * synchronously (once). */
int gpu_pool_new(const struct pfs_config *cfg, struct gpu_pool **out);
void gpu_pool_free(struct gpu_pool *pool);

/* Number of devices in the pool. */
int gpu_pool_size(const struct gpu_pool *pool);

/*
 * Grants n devices: returns 0 and writes their indices to ids[0..n-1];
 * -EAGAIN when fewer than n are free now; -ENODEV when n exceeds the pool
 * size (can never be granted). n == 0 always succeeds.
 */
int gpu_pool_acquire(struct gpu_pool *pool, int n, int *ids);

/* Returns devices granted by gpu_pool_acquire. */
void gpu_pool_release(struct gpu_pool *pool, const int *ids, int n);

/* "0,2" style list for CUDA_VISIBLE_DEVICES into out (size >= 8 * n + 1). */
void gpu_format_list(const int *ids, int n, char *out, size_t size);

#endif
