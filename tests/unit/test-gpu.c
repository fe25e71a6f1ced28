/*
 * test-gpu.c - the GPU pool: declared slots, listed indices, grants that are
 * all-or-nothing and disjoint, -EAGAIN / -ENODEV, release, the
 * CUDA_VISIBLE_DEVICES list, and "auto" with a stand-in nvidia-smi on PATH.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu.h"
#include "test.h"

static struct gpu_pool *pool_slots(int n)
{
	struct pfs_config cfg;
	struct gpu_pool *pool = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gpu_mode = GPU_SLOTS;
	cfg.gpu_count = n;
	ASSERT_EQ(gpu_pool_new(&cfg, &pool), 0);
	ASSERT(pool != NULL);
	return pool;
}

static struct gpu_pool *pool_list(int *ids, int n)
{
	struct pfs_config cfg;
	struct gpu_pool *pool = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gpu_mode = GPU_LIST;
	cfg.gpu_ids = ids;
	cfg.gpu_count = n;
	ASSERT_EQ(gpu_pool_new(&cfg, &pool), 0);
	return pool;
}

TEST(slots)
{
	struct gpu_pool *pool = pool_slots(4);
	int ids[4] = { -1, -1, -1, -1 };

	ASSERT_EQ(gpu_pool_size(pool), 4);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(ids[0], 0);
	ASSERT_EQ(ids[1], 1);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids + 2), 0);
	ASSERT_EQ(ids[2], 2);
	ASSERT_EQ(ids[3], 3);
	gpu_pool_free(pool);
}

TEST(list_sorted_lowest_first)
{
	int cfg_ids[] = { 5, 2, 7 };
	struct gpu_pool *pool = pool_list(cfg_ids, 3);
	int ids[3] = { -1, -1, -1 };

	ASSERT_EQ(gpu_pool_size(pool), 3);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), 0);
	ASSERT_EQ(ids[0], 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids + 1), 0);
	ASSERT_EQ(ids[1], 5);
	ASSERT_EQ(ids[2], 7);
	/* The lowest free index is granted first after a release. */
	gpu_pool_release(pool, &ids[1], 1);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), 0);
	ASSERT_EQ(ids[0], 5);
	gpu_pool_free(pool);
}

TEST(list_duplicates_counted_once)
{
	int cfg_ids[] = { 3, 3, 1 };
	struct gpu_pool *pool = pool_list(cfg_ids, 3);
	int ids[3];

	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 3, ids), -ENODEV);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(ids[0], 1);
	ASSERT_EQ(ids[1], 3);
	gpu_pool_free(pool);
}

TEST(eagain_is_all_or_nothing)
{
	struct gpu_pool *pool = pool_slots(3);
	int a[3], b[3] = { -1, -1, -1 };

	ASSERT_EQ(gpu_pool_acquire(pool, 2, a), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, b), -EAGAIN);
	ASSERT_EQ(b[0], -1); /* nothing written, nothing taken */
	ASSERT_EQ(gpu_pool_acquire(pool, 1, b), 0);
	ASSERT_EQ(b[0], 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, b), -EAGAIN);
	gpu_pool_free(pool);
}

TEST(enodev_and_zero)
{
	struct gpu_pool *pool = pool_slots(2);
	struct gpu_pool *none = pool_slots(0);
	int ids[4];

	ASSERT_EQ(gpu_pool_acquire(pool, 3, ids), -ENODEV);
	ASSERT_EQ(gpu_pool_acquire(pool, -1, ids), -EINVAL);
	ASSERT_EQ(gpu_pool_acquire(pool, 0, ids), 0);
	/* -ENODEV even when everything is busy: it can never be granted. */
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 3, ids), -ENODEV);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), -EAGAIN);

	ASSERT_EQ(gpu_pool_size(none), 0);
	ASSERT_EQ(gpu_pool_acquire(none, 1, ids), -ENODEV);
	ASSERT_EQ(gpu_pool_acquire(none, 0, ids), 0);
	gpu_pool_free(pool);
	gpu_pool_free(none);
	gpu_pool_free(NULL);
}

TEST(release_and_disjoint)
{
	struct gpu_pool *pool = pool_slots(8);
	int seen[8] = { 0 };
	int a[3], b[2], c[3], d[3], i;

	ASSERT_EQ(gpu_pool_acquire(pool, 3, a), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, b), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 3, c), 0);
	for (i = 0; i < 3; i++)
		seen[a[i]]++;
	for (i = 0; i < 2; i++)
		seen[b[i]]++;
	for (i = 0; i < 3; i++)
		seen[c[i]]++;
	for (i = 0; i < 8; i++)
		ASSERT_EQ(seen[i], 1);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, d), -EAGAIN);

	/* Releasing b frees exactly b's devices. */
	gpu_pool_release(pool, b, 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 3, d), -EAGAIN);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, b), 0);
	ASSERT_EQ(b[0], 3);
	ASSERT_EQ(b[1], 4);

	/* Releasing an index the pool does not hold changes nothing. */
	d[0] = 42;
	gpu_pool_release(pool, d, 1);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, d), -EAGAIN);
	gpu_pool_release(pool, a, 3);
	ASSERT_EQ(gpu_pool_acquire(pool, 3, d), 0);
	gpu_pool_free(pool);
}

TEST(format_list)
{
	int ids[] = { 0, 2, 13 };
	char out[32];

	gpu_format_list(ids, 3, out, sizeof(out));
	ASSERT_STREQ(out, "0,2,13");
	gpu_format_list(ids, 1, out, sizeof(out));
	ASSERT_STREQ(out, "0");
	gpu_format_list(ids, 0, out, sizeof(out));
	ASSERT_STREQ(out, "");
	/* Too small: only whole indices, always NUL-terminated. */
	gpu_format_list(ids, 3, out, 5);
	ASSERT_STREQ(out, "0,2");
}

static char tmpdir[PATH_MAX];

/* Writes an executable stand-in nvidia-smi into dir with body as its script. */
static void fake_smi(const char *dir, const char *body)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/nvidia-smi", dir);
	f = fopen(path, "w");
	ASSERT(f != NULL);
	fprintf(f, "#!/bin/sh\n%s", body);
	ASSERT_EQ(fclose(f), 0);
	ASSERT_EQ(chmod(path, 0755), 0);
}

static int auto_size(const char *path_env)
{
	struct pfs_config cfg;
	struct gpu_pool *pool = NULL;
	int n;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gpu_mode = GPU_AUTO;
	ASSERT_EQ(setenv("PATH", path_env, 1), 0);
	ASSERT_EQ(gpu_pool_new(&cfg, &pool), 0);
	n = gpu_pool_size(pool);
	gpu_pool_free(pool);
	return n;
}

TEST(auto_detect)
{
	char path_env[PATH_MAX], path[PATH_MAX + 32];
	struct gpu_pool *pool = NULL;
	struct pfs_config cfg;
	int ids[2];

	/* Only the stand-in's directory: a real nvidia-smi must not answer. */
	snprintf(path_env, sizeof(path_env), "%s", tmpdir);

	fake_smi(tmpdir, "echo 0\necho 1\n");
	ASSERT_EQ(auto_size(path_env), 2);

	/* The pool holds the indices nvidia-smi listed. */
	fake_smi(tmpdir, "printf '3\\n1\\n'\n");
	memset(&cfg, 0, sizeof(cfg));
	cfg.gpu_mode = GPU_AUTO;
	ASSERT_EQ(gpu_pool_new(&cfg, &pool), 0);
	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(ids[0], 1);
	ASSERT_EQ(ids[1], 3);
	gpu_pool_free(pool);

	/* Failure or garbage means no GPUs. */
	fake_smi(tmpdir, "echo 0\nexit 9\n");
	ASSERT_EQ(auto_size(path_env), 0);
	fake_smi(tmpdir, "echo 'NVIDIA-SMI has failed because it could not communicate'\n");
	ASSERT_EQ(auto_size(path_env), 0);
	fake_smi(tmpdir, "echo 0\necho 1x\n");
	ASSERT_EQ(auto_size(path_env), 0);
	fake_smi(tmpdir, "exit 0\n");
	ASSERT_EQ(auto_size(path_env), 0);

	/* No nvidia-smi on PATH at all. */
	snprintf(path, sizeof(path), "%s/nvidia-smi", tmpdir);
	ASSERT_EQ(unlink(path), 0);
	ASSERT_EQ(auto_size(path_env), 0);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/packetfs-gpu-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(tmpdir) != NULL);

	RUN(slots);
	RUN(list_sorted_lowest_first);
	RUN(list_duplicates_counted_once);
	RUN(eagain_is_all_or_nothing);
	RUN(enodev_and_zero);
	RUN(release_and_disjoint);
	RUN(format_list);
	RUN(auto_detect);

	rmdir(tmpdir);
	return 0;
}
