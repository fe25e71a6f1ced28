/*
 * gpu.c - the GPU pool (see gpu.h).
 *
 * The pool is an array of devices sorted ascending by index, without
 * duplicates. Each has a busy flag (granted), a held flag (a leak check
 * found it dirty) and what nvidia-smi said of it at creation: whether it
 * knew the device, its uuid and its memory.used then (the baseline). A
 * grant takes the lowest free indices first, so the same free set always
 * gives the same answer; it is all-or-nothing: either n devices are marked
 * busy or none is. A held device is never granted; only gpu_pool_recheck
 * clears the flag.
 *
 * nvidia-smi runs through capture_run (capture.h): found on PATH, no shell,
 * in its own process group, up to a deadline past which the whole group is
 * killed, since a sick driver can hang it.
 *
 * GPU_AUTO: anything but a clean answer (the program missing from PATH, a
 * non-zero exit, a line that does not start with an index) means a host
 * without GPUs: an empty pool, never an error. The uuid and memory columns
 * may be missing; a memory.used that is not a number ("[N/A]") means no
 * baseline, so no memory check for that device. Compute processes are
 * mapped to devices by the uuid both queries report.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "gpu.h"

#define MAX_DEVICES 1024
#define UUID_MAX 96
#define SMI_OUTPUT_MAX 65536 /* bytes of nvidia-smi output kept */
#define MAX_FIELDS 4

/* The queries: a device a line ("0, GPU-1c2…, 3"), a process a line. */
static const char *const gpu_query[] = {
	"--query-gpu=index,uuid,memory.used", "--format=csv,noheader,nounits", NULL,
};
static const char *const app_query[] = {
	"--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader,nounits", NULL,
};

struct gpu_dev {
	int index;
	unsigned char busy;  /* granted */
	unsigned char held;  /* held back by a leak check */
	unsigned char known; /* nvidia-smi listed it at creation: it is checked */
	char uuid[UUID_MAX]; /* "" when nvidia-smi did not say */
	long baseline_mib;   /* memory.used at creation; -1 unknown */
};

struct gpu_pool {
	int n;
	struct gpu_dev *dev; /* n devices, ascending index, unique */
	int timeout_ms;      /* of one nvidia-smi call */
};

/* One device as --query-gpu lists it. */
struct smi_gpu {
	int index;
	char uuid[UUID_MAX];
	long mem_mib; /* -1 unknown */
};

/* What one look at a device found. */
struct finding {
	int apps;      /* compute processes on it */
	long over_mib; /* memory.used above the baseline (0 when unknown) */
	int gone;      /* missing from nvidia-smi's answer */
};

/*
 * Runs nvidia-smi with args (NULL-terminated, after the program name) for
 * at most timeout_ms. On success returns 0 and *out holds its standard
 * output, NUL-terminated (at most SMI_OUTPUT_MAX bytes kept; the caller
 * frees). -ENOENT when it is not on PATH, -ETIMEDOUT past the deadline (its
 * process group is killed), -EIO when it exits non-zero or by a signal,
 * -ENOMEM, or another negative errno of pipe or spawn (capture_run).
 */
static int run_smi(const char *const *args, int timeout_ms, char **out)
{
	char *argv[8];
	size_t len, i;
	int rc;

	argv[0] = (char *)"nvidia-smi";
	for (i = 0; args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	rc = capture_run(argv, timeout_ms, SMI_OUTPUT_MAX, out, &len);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* Takes the next line off *text (in place; NULL at the end). */
static char *next_line(char **text)
{
	char *line = *text, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = '\0';
		*text = nl + 1;
	} else {
		*text = NULL;
	}
	return line;
}

/* s without leading and trailing blanks (in place). */
static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* Splits line at commas into at most max trimmed fields (in place; what
 * lies past the max-th comma is dropped). Returns their number, >= 1. */
static int split_csv(char *line, char **fields, int max)
{
	char *comma;
	int n = 0;

	for (;;) {
		comma = strchr(line, ',');
		if (comma)
			*comma = '\0';
		fields[n++] = trim(line);
		if (!comma || n == max)
			return n;
		line = comma + 1;
	}
}

/* A decimal number below limit: its value, or -1 when s is not one. */
static long parse_num(const char *s, long limit)
{
	long v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (*s - '0');
		if (v >= limit)
			return -1;
	}
	return *s ? -1 : v;
}

/* memory.used in MiB ("3", or "3 MiB" without nounits); -1 for anything
 * else ("[N/A]", "[Not Supported]", ""). */
static long parse_mib(char *s)
{
	size_t n = strlen(s);

	if (n > 3 && strcmp(s + n - 3, "MiB") == 0) {
		s[n - 3] = '\0';
		s = trim(s);
	}
	return parse_num(s, 1L << 30);
}

/*
 * Parses the answer to gpu_query into *rows (caller frees) and *n. Every
 * non-blank line must start with an index; the uuid and memory.used
 * columns may be missing. Returns 0, -EIO (a line that is not a device,
 * or too many), or -ENOMEM.
 */
static int parse_gpu_rows(char *text, struct smi_gpu **rows, int *n)
{
	struct smi_gpu *v = NULL, *nv;
	char *line, *f[MAX_FIELDS];
	int count = 0, nf;
	long idx;

	*rows = NULL;
	*n = 0;
	while ((line = next_line(&text))) {
		if (!*trim(line))
			continue;
		nf = split_csv(line, f, MAX_FIELDS);
		idx = parse_num(f[0], MAX_DEVICES);
		if (idx < 0 || count >= MAX_DEVICES) {
			free(v);
			return -EIO;
		}
		nv = realloc(v, (size_t)(count + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[count].index = (int)idx;
		snprintf(v[count].uuid, sizeof(v[count].uuid), "%s", nf > 1 ? f[1] : "");
		v[count].mem_mib = nf > 2 ? parse_mib(f[2]) : -1;
		count++;
	}
	*rows = v;
	*n = count;
	return 0;
}

/* Asks nvidia-smi for its devices (see parse_gpu_rows). 0 or a negative
 * errno (see run_smi, parse_gpu_rows). */
static int query_gpus(int timeout_ms, struct smi_gpu **rows, int *n)
{
	char *text;
	int rc;

	*rows = NULL;
	*n = 0;
	rc = run_smi(gpu_query, timeout_ms, &text);
	if (rc)
		return rc;
	rc = parse_gpu_rows(text, rows, n);
	free(text);
	return rc;
}

/* The position of device index in the pool, or -1. */
static int find_dev(const struct gpu_pool *pool, int index)
{
	int lo = 0, hi = pool->n - 1, mid;

	while (lo <= hi) {
		mid = lo + (hi - lo) / 2;
		if (pool->dev[mid].index == index)
			return mid;
		if (pool->dev[mid].index < index)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * One look at the pool's devices: f[i] (zeroed by the caller) gets what
 * nvidia-smi says of dev[i], for every device it knew at creation.
 * Returns 0 or a negative errno (run_smi, parse_gpu_rows).
 */
static int look(const struct gpu_pool *pool, struct finding *f)
{
	struct smi_gpu *rows;
	char *text, *line, *fl[MAX_FIELDS], *t;
	int nrows, i, r, rc;

	rc = query_gpus(pool->timeout_ms, &rows, &nrows);
	if (rc)
		return rc;
	rc = run_smi(app_query, pool->timeout_ms, &text);
	if (rc) {
		free(rows);
		return rc;
	}
	for (i = 0; i < pool->n; i++) {
		const struct gpu_dev *d = &pool->dev[i];

		if (!d->known)
			continue;
		for (r = 0; r < nrows && rows[r].index != d->index; r++)
			;
		if (r == nrows)
			f[i].gone = 1;
		else if (d->baseline_mib >= 0 && rows[r].mem_mib >= 0)
			f[i].over_mib = rows[r].mem_mib - d->baseline_mib;
	}
	/* A process a line: pid, gpu_uuid. Lines without a pid (a driver's
	 * "No running processes found") are not processes. */
	t = text;
	while ((line = next_line(&t))) {
		if (split_csv(line, fl, MAX_FIELDS) < 2 || parse_num(fl[0], 1L << 30) < 0 || !fl[1][0])
			continue;
		for (r = 0; r < nrows && strcmp(rows[r].uuid, fl[1]) != 0; r++)
			;
		if (r == nrows)
			continue;
		i = find_dev(pool, rows[r].index);
		if (i >= 0)
			f[i].apps++;
	}
	free(text);
	free(rows);
	return 0;
}

static int leaking(const struct finding *f)
{
	return f->apps > 0 || f->over_mib > GPU_LEAK_TOLERANCE_MIB || f->gone;
}

/* Appends "GPU i: what" for finding f to out (len bytes used of size). */
static void describe(int index, const struct finding *f, char *out, size_t size, size_t *len)
{
	const char *sep = "";
	int w;

#define ADD(...)                                                                     \
	do {                                                                         \
		if (*len < size) {                                                   \
			w = snprintf(out + *len, size - *len, __VA_ARGS__);          \
			*len += w > 0 ? (size_t)w : 0;                               \
			if (*len >= size)                                            \
				*len = size - 1;                                     \
		}                                                                    \
	} while (0)

	ADD("%sGPU %d: ", *len ? "; " : "", index);
	if (f->apps) {
		ADD("%d compute process%s", f->apps, f->apps == 1 ? "" : "es");
		sep = ", ";
	}
	if (f->over_mib > GPU_LEAK_TOLERANCE_MIB) {
		if (f->over_mib < 1024)
			ADD("%s%ld MiB above baseline", sep, f->over_mib);
		else
			ADD("%s%.1f GiB above baseline", sep, (double)f->over_mib / 1024.0);
		sep = ", ";
	}
	if (f->gone)
		ADD("%snot listed by nvidia-smi", sep);
#undef ADD
}

static int cmp_dev(const void *a, const void *b)
{
	int x = ((const struct gpu_dev *)a)->index, y = ((const struct gpu_dev *)b)->index;

	return (x > y) - (x < y);
}

int gpu_pool_new(const struct pfs_config *cfg, struct gpu_pool **out)
{
	struct smi_gpu *rows = NULL;
	struct gpu_pool *pool;
	int nrows = 0, smi_ok = 0, n = 0, i, j, r;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->timeout_ms = GPU_SMI_TIMEOUT_MS;
	if (cfg->gpu_mode != GPU_SLOTS) {
		r = query_gpus(pool->timeout_ms, &rows, &nrows);
		if (r == -ENOMEM)
			goto fail;
		smi_ok = r == 0;
	}
	if (cfg->gpu_mode == GPU_AUTO)
		n = nrows;
	else
		n = cfg->gpu_count > 0 ? cfg->gpu_count : 0;
	pool->dev = calloc((size_t)n + 1, sizeof(*pool->dev));
	if (!pool->dev)
		goto fail;
	for (i = 0; i < n; i++) {
		pool->dev[i].index = cfg->gpu_mode == GPU_AUTO  ? rows[i].index
				     : cfg->gpu_mode == GPU_SLOTS ? i
								  : cfg->gpu_ids[i];
		pool->dev[i].baseline_mib = -1;
	}
	if (n) {
		qsort(pool->dev, (size_t)n, sizeof(*pool->dev), cmp_dev);
		for (i = 1, j = 1; i < n; i++)
			if (pool->dev[i].index != pool->dev[j - 1].index)
				pool->dev[j++] = pool->dev[i];
		n = j;
	}
	pool->n = n;
	/* What nvidia-smi knows of the devices: uuid and baseline. */
	for (i = 0; smi_ok && i < n; i++) {
		for (r = 0; r < nrows && rows[r].index != pool->dev[i].index; r++)
			;
		if (r == nrows)
			continue;
		pool->dev[i].known = 1;
		memcpy(pool->dev[i].uuid, rows[r].uuid, sizeof(pool->dev[i].uuid));
		pool->dev[i].baseline_mib = rows[r].mem_mib;
	}
	free(rows);
	*out = pool;
	return 0;

fail:
	free(rows);
	free(pool);
	return -ENOMEM;
}

void gpu_pool_free(struct gpu_pool *pool)
{
	if (!pool)
		return;
	free(pool->dev);
	free(pool);
}

void gpu_pool_set_timeout(struct gpu_pool *pool, int timeout_ms)
{
	if (timeout_ms > 0)
		pool->timeout_ms = timeout_ms;
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
		nfree += !pool->dev[i].busy && !pool->dev[i].held;
	if (nfree < n)
		return -EAGAIN;
	for (i = 0, k = 0; k < n; i++) {
		if (pool->dev[i].busy || pool->dev[i].held)
			continue;
		pool->dev[i].busy = 1;
		ids[k++] = pool->dev[i].index;
	}
	return 0;
}

void gpu_pool_release(struct gpu_pool *pool, const int *ids, int n)
{
	int i, d;

	for (i = 0; i < n; i++) {
		d = find_dev(pool, ids[i]);
		if (d >= 0)
			pool->dev[d].busy = 0;
	}
}

int gpu_pool_checks(const struct gpu_pool *pool)
{
	int i;

	for (i = 0; i < pool->n; i++)
		if (pool->dev[i].known)
			return 1;
	return 0;
}

int gpu_pool_leak_check(struct gpu_pool *pool, const int *ids, int n, char *note, size_t size)
{
	struct finding *f;
	size_t len = 0;
	int k, d, any = 0, held = 0, rc;

	if (size)
		note[0] = '\0';
	for (k = 0; k < n; k++) {
		d = find_dev(pool, ids[k]);
		any |= d >= 0 && pool->dev[d].known;
	}
	if (!any)
		return 0;
	f = calloc((size_t)pool->n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rc = look(pool, f);
	if (rc) {
		free(f);
		if (rc == -ENOENT)
			snprintf(note, size, "nvidia-smi is not on PATH");
		else if (rc == -ETIMEDOUT)
			snprintf(note, size, "nvidia-smi did not answer within %.1f s",
				 pool->timeout_ms / 1000.0);
		else if (rc == -EIO)
			snprintf(note, size, "nvidia-smi failed");
		else
			snprintf(note, size, "nvidia-smi: %s", strerror(-rc));
		return rc;
	}
	for (k = 0; k < n; k++) {
		d = find_dev(pool, ids[k]);
		if (d < 0 || !pool->dev[d].known || pool->dev[d].held || !leaking(&f[d]))
			continue;
		pool->dev[d].held = 1;
		held++;
		if (size)
			describe(pool->dev[d].index, &f[d], note, size, &len);
	}
	free(f);
	return held;
}

int gpu_pool_recheck(struct gpu_pool *pool, int *back, int max)
{
	struct finding *f;
	int i, count = 0;

	if (gpu_pool_held(pool, NULL, 0) == 0)
		return 0;
	f = calloc((size_t)pool->n, sizeof(*f));
	if (!f)
		return 0;
	if (look(pool, f) == 0) {
		for (i = 0; i < pool->n; i++) {
			if (!pool->dev[i].held || pool->dev[i].busy || leaking(&f[i]))
				continue;
			pool->dev[i].held = 0;
			if (count < max)
				back[count] = pool->dev[i].index;
			count++;
		}
	}
	free(f);
	return count;
}

int gpu_pool_recheck_granted(struct gpu_pool *pool, const int *ids, int n)
{
	struct finding *f;
	int k, d, still = 0, rc;

	for (k = 0; k < n; k++) {
		d = find_dev(pool, ids[k]);
		still += d >= 0 && pool->dev[d].held;
	}
	if (!still)
		return 0;
	f = calloc((size_t)pool->n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rc = look(pool, f);
	for (k = 0; rc == 0 && k < n; k++) {
		d = find_dev(pool, ids[k]);
		if (d >= 0 && pool->dev[d].held && !leaking(&f[d])) {
			pool->dev[d].held = 0;
			still--;
		}
	}
	free(f);
	return rc ? rc : still;
}

int gpu_pool_held(const struct gpu_pool *pool, int *ids, int max)
{
	int i, count = 0;

	for (i = 0; i < pool->n; i++) {
		if (!pool->dev[i].held)
			continue;
		if (count < max)
			ids[count] = pool->dev[i].index;
		count++;
	}
	return count;
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
