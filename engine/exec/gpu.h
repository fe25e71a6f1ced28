/*
 * gpu.h - the GPU pool: which device indices exist, which are free, which
 * are held back after a leak.
 *
 * The pool is created from the configuration: GPU_SLOTS declares N slots
 * (0..N-1) and nothing is ever asked of a driver; GPU_AUTO asks
 * `nvidia-smi --query-gpu=index,uuid,memory.used --format=csv,noheader,nounits`
 * (no nvidia-smi, an error or an answer that is not one device a line means
 * no GPUs); GPU_LIST names device indices, and nvidia-smi, when it answers,
 * tells which of them it knows. Grants are all-or-nothing and disjoint;
 * waiting and fairness (FIFO) are the caller's business: the caller retries
 * the oldest waiter first whenever GPUs are released or come back.
 *
 * Leak checks. For each device nvidia-smi knew at creation the pool keeps
 * its memory.used then, the baseline. After a recipe, gpu_pool_leak_check
 * looks at its devices: a compute process still on one (nvidia-smi
 * --query-compute-apps, mapped to the device by its uuid), or memory.used
 * more than GPU_LEAK_TOLERANCE_MIB above the baseline, or the device gone
 * from nvidia-smi's answer, is a leak, and the device is held back: never granted until gpu_pool_recheck finds it clean.
 * Declared slots, and listed devices nvidia-smi does not know, are never
 * checked. Every nvidia-smi call is bounded (gpu_pool_set_timeout).
 *
 * Threads: not thread-safe; the engine loop thread owns the pool. The
 * functions that ask nvidia-smi block the caller for at most the timeout.
 */
#ifndef PACKETFS_GPU_H
#define PACKETFS_GPU_H

#include "format.h"

struct gpu_pool;

/* How far memory.used may rise above a device's baseline before a leak
 * check calls it a leak, in MiB: room for a driver's own bookkeeping and
 * for other tenants' small fluctuations. */
#define GPU_LEAK_TOLERANCE_MIB 256

/* How long one nvidia-smi call may take, in milliseconds, by default;
 * past it the call's process group is killed and the call has failed. */
#define GPU_SMI_TIMEOUT_MS 5000

/* Creates the pool into *out (free with gpu_pool_free). Returns 0 or
 * -ENOMEM. GPU_AUTO and GPU_LIST run nvidia-smi synchronously, once, for at
 * most GPU_SMI_TIMEOUT_MS; its failure is never an error (see above). */
int gpu_pool_new(const struct pfs_config *cfg, struct gpu_pool **out);

/* Frees the pool; NULL is fine. */
void gpu_pool_free(struct gpu_pool *pool);

/* Sets how long each later nvidia-smi call may take (ms, > 0). */
void gpu_pool_set_timeout(struct gpu_pool *pool, int timeout_ms);

/* Number of devices in the pool, held-back ones included. */
int gpu_pool_size(const struct gpu_pool *pool);

/*
 * Grants n devices, the lowest free indices first: returns 0 and writes
 * their indices to ids[0..n-1]; -EAGAIN when fewer than n are free now
 * (busy or held back; nothing is taken); -ENODEV when n exceeds the pool
 * size (can never be granted); -EINVAL when n < 0. n == 0 always succeeds.
 */
int gpu_pool_acquire(struct gpu_pool *pool, int n, int *ids);

/* Returns devices granted by gpu_pool_acquire (indices the pool does not
 * hold are ignored). A held-back device stays held back. */
void gpu_pool_release(struct gpu_pool *pool, const int *ids, int n);

/* Whether leak checks can find anything on this pool: some device is
 * known to nvidia-smi. 0 for declared slots. */
int gpu_pool_checks(const struct gpu_pool *pool);

/*
 * The leak check of devices ids[0..n-1] after a recipe ran on them (call
 * it before gpu_pool_release). Each device found leaking is held back, and
 * note (size bytes, always NUL-terminated) gets what was found, e.g.
 * "GPU 1: 2 compute processes, 3.2 GiB above baseline; GPU 3: 1 compute
 * process"; "" when nothing leaks or nothing can be checked. Returns the
 * number of devices held back (>= 0), or, when nvidia-smi does not answer
 * (-ENOENT: not on PATH; -EIO: it failed or its answer is not one device
 * a line; -ETIMEDOUT: past the timeout) with note saying so and nothing held back. -ENOMEM when out of memory.
 */
int gpu_pool_leak_check(struct gpu_pool *pool, const int *ids, int n, char *note, size_t size);

/*
 * Looks again at every held-back device; those found clean return to
 * service. Returns how many did (their indices in back[0..max-1], in
 * ascending order), 0 when none is held back (then nvidia-smi is not run)
 * or all still leak or nvidia-smi does not answer.
 */
int gpu_pool_recheck(struct gpu_pool *pool, int *back, int max);

/*
 * Looks again at devices ids[0..n-1], granted to the caller, that a leak
 * check held back (a measured batch keeps its devices between runs and
 * waits for them to be clean): those found clean are no longer held back,
 * and stay granted. Returns how many of them are still held back (0: all
 * clean), or, when nvidia-smi does not answer, a negative errno as
 * gpu_pool_leak_check's, with nothing changed.
 */
int gpu_pool_recheck_granted(struct gpu_pool *pool, const int *ids, int n);

/* The held-back devices: returns their number and writes the first max
 * indices (ascending) to ids. */
int gpu_pool_held(const struct gpu_pool *pool, int *ids, int max);

/* "0,2" style list for CUDA_VISIBLE_DEVICES into out (size >= 8 * n + 1). */
void gpu_format_list(const int *ids, int n, char *out, size_t size);

#endif
