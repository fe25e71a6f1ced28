/*
 * gpu.c - the GPU pool (see gpu.h).
 *
 * The pool is an array of device indices sorted ascending, without
 * duplicates, and a busy flag per device. A grant takes the lowest free
 * indices first, so the same free set always gives the same answer; it is
 * all-or-nothing: either n devices are marked busy or none is.
 *
 * GPU_AUTO asks nvidia-smi once, at creation. Anything but a clean answer
 * (the program missing from PATH, a non-zero exit, a line that is not an
 * index) means a host without GPUs: an empty pool, never an error.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "gpu.h"

#define NVIDIA_SMI "nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null"
#define MAX_DEVICES 1024

struct gpu_pool {
	int n;
	int *ids;            /* sorted ascending, unique */
	unsigned char *busy; /* busy[i] for ids[i] */
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Parses one line of nvidia-smi output: a decimal index, surrounding blanks
 * allowed. Returns the index, or -1 when the line is not one. */
static int parse_index(const char *line)
{
	long v = 0;
	int digits = 0;

	while (isspace((unsigned char)*line))
		line++;
	for (; isdigit((unsigned char)*line); line++, digits++) {
		v = v * 10 + (*line - '0');
		if (v >= MAX_DEVICES)
			return -1;
	}
	while (isspace((unsigned char)*line))
		line++;
	return digits && !*line ? (int)v : -1;
}

/*
 * Runs nvidia-smi and stores the indices it lists in *ids (caller frees)
 * and their number in *n. Returns 0 (also for "no GPUs": *n == 0) or
 * -ENOMEM.
 */
static int query_nvidia_smi(int **ids, int *n)
{
	char line[256];
	int *v = NULL, *nv, count = 0, bad = 0, status, idx;
	FILE *f;

	*ids = NULL;
	*n = 0;
	f = popen(NVIDIA_SMI, "r");
	if (!f)
		return errno == ENOMEM ? -ENOMEM : 0;
	while (fgets(line, sizeof(line), f)) {
		if (bad)
			continue;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		idx = parse_index(line);
		if (idx < 0 || count >= MAX_DEVICES) {
			bad = 1;
			continue;
		}
		nv = realloc(v, (size_t)(count + 1) * sizeof(*v));
		if (!nv) {
			pclose(f);
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[count++] = idx;
	}
	status = pclose(f);
	if (bad || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(v);
		return 0;
	}
	*ids = v;
	*n = count;
	return 0;
}

int gpu_pool_new(const struct pfs_config *cfg, struct gpu_pool **out)
{
	struct gpu_pool *pool;
	int *ids = NULL, n = 0, i, j, r;

	switch (cfg->gpu_mode) {
	case GPU_AUTO:
		r = query_nvidia_smi(&ids, &n);
		if (r < 0)
			return r;
		break;
	case GPU_SLOTS:
	case GPU_LIST:
		n = cfg->gpu_count > 0 ? cfg->gpu_count : 0;
		if (n) {
			ids = malloc((size_t)n * sizeof(*ids));
			if (!ids)
				return -ENOMEM;
		}
		for (i = 0; i < n; i++)
			ids[i] = cfg->gpu_mode == GPU_SLOTS ? i : cfg->gpu_ids[i];
		break;
	}

	if (n) {
		qsort(ids, (size_t)n, sizeof(*ids), cmp_int);
		for (i = 1, j = 1; i < n; i++)
			if (ids[i] != ids[j - 1])
				ids[j++] = ids[i];
		n = j;
	}

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		goto fail;
	pool->busy = calloc((size_t)n + 1, 1);
	if (!pool->busy)
		goto fail_pool;
	pool->n = n;
	pool->ids = ids;
	*out = pool;
	return 0;

fail_pool:
	free(pool);
fail:
	free(ids);
	return -ENOMEM;
}

void gpu_pool_free(struct gpu_pool *pool)
{
	if (!pool)
		return;
	free(pool->ids);
	free(pool->busy);
	free(pool);
}

int gpu_pool_size(const struct gpu_pool *pool)
{
	return pool->n;
}

int gpu_pool_acquire(struct gpu_pool *pool, int n, int *ids)
{
	int i, k, nfree = 0;

	if (n < 0)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (n > pool->n)
		return -ENODEV;
	for (i = 0; i < pool->n; i++)
		nfree += !pool->busy[i];
	if (nfree < n)
		return -EAGAIN;
	for (i = 0, k = 0; k < n; i++) {
		if (pool->busy[i])
			continue;
		pool->busy[i] = 1;
		ids[k++] = pool->ids[i];
	}
	return 0;
}

void gpu_pool_release(struct gpu_pool *pool, const int *ids, int n)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < pool->n; j++)
			if (pool->ids[j] == ids[i])
				pool->busy[j] = 0;
}

void gpu_format_list(const int *ids, int n, char *out, size_t size)
{
	size_t len = 0;
	int i, w;

	if (!size)
		return;
	out[0] = '\0';
	for (i = 0; i < n && len < size; i++) {
		w = snprintf(out + len, size - len, i ? ",%d" : "%d", ids[i]);
		if (w < 0 || (size_t)w >= size - len) {
			out[len] = '\0';
			return;
		}
		len += (size_t)w;
	}
}
