/*
 * test-gpu.c - the GPU pool: declared slots, listed indices, grants that are
 * all-or-nothing and disjoint, -EAGAIN / -ENODEV, release, the
 * CUDA_VISIBLE_DEVICES list, and "auto" with a stand-in nvidia-smi on PATH;
 * leak checks (compute processes mapped by uuid, memory above the baseline,
 * a device gone), held-back devices and their return, a failing or hanging
 * nvidia-smi, and pools that never ask it (declared slots), using the
 * fixture stand-in tests/fixtures/bin/nvidia-smi and a state file.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "test.h"
#include "util.h"

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

/* ---- leak checks, with the fixture stand-in ---- */

static char state_path[PATH_MAX + 32], log_path[PATH_MAX + 32];

/* PATH with the fixture stand-in first (it needs sh, awk, grep, sleep). */
static void use_fixture_smi(void)
{
	const char *root = getenv("PACKETFS_SOURCE_ROOT");
	char path_env[PATH_MAX * 2];

	ASSERT(root != NULL);
	snprintf(path_env, sizeof(path_env), "%s/tests/fixtures/bin:/usr/bin:/bin", root);
	ASSERT_EQ(setenv("PATH", path_env, 1), 0);
	snprintf(state_path, sizeof(state_path), "%s/smi-state", tmpdir);
	snprintf(log_path, sizeof(log_path), "%s/smi-log", tmpdir);
	ASSERT_EQ(setenv("FAKE_NVIDIA_SMI_STATE", state_path, 1), 0);
	ASSERT_EQ(setenv("FAKE_NVIDIA_SMI_LOG", log_path, 1), 0);
	unlink(log_path);
}

/* Replaces the stand-in's state (atomically) with text. */
static void smi_state(const char *text)
{
	ASSERT_EQ(util_write_file(state_path, text, strlen(text)), 0);
}

/* How many times the stand-in ran since use_fixture_smi. */
static int smi_calls(void)
{
	FILE *f = fopen(log_path, "r");
	int c, n = 0;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static struct gpu_pool *pool_auto(void)
{
	struct pfs_config cfg;
	struct gpu_pool *pool = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gpu_mode = GPU_AUTO;
	ASSERT_EQ(gpu_pool_new(&cfg, &pool), 0);
	ASSERT(pool != NULL);
	return pool;
}

/* use_fixture_smi with the stand-in's state made state, and a pool of its
 * devices (gpus "auto"). */
static struct gpu_pool *fixture_pool(const char *state)
{
	use_fixture_smi();
	smi_state(state);
	return pool_auto();
}

/* A leak check of the n devices ids of pool returns want, and note. */
static void expect_leaks(struct gpu_pool *pool, const int *ids, int n, int want,
			 const char *note)
{
	char got[256] = "x"; /* the check must set it, also to "" */

	ASSERT_EQ(gpu_pool_leak_check(pool, ids, n, got, sizeof(got)), want);
	ASSERT_STREQ(got, note);
}

#define TWO_GPUS "gpu 0 GPU-aaaa 100\ngpu 1 GPU-bbbb 200\n"

TEST(leak_compute_process)
{
	struct gpu_pool *pool;
	int a, b, ids[2], back[2];

	pool = fixture_pool(TWO_GPUS);
	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_checks(pool), 1);
	ASSERT_EQ(gpu_pool_held(pool, ids, 2), 0);
	/* Nothing held back: a recheck asks nobody. */
	a = smi_calls();
	ASSERT_EQ(gpu_pool_recheck(pool, back, 2), 0);
	ASSERT_EQ(smi_calls(), a);

	ASSERT_EQ(gpu_pool_acquire(pool, 1, &a), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, &b), 0);
	ASSERT_EQ(a, 0);
	ASSERT_EQ(b, 1);
	/* A process on GPU 1 is not GPU 0's leak. */
	smi_state(TWO_GPUS "app 4242 GPU-bbbb 900\n");
	expect_leaks(pool, &a, 1, 0, "");
	expect_leaks(pool, &b, 1, 1, "GPU 1: 1 compute process");
	gpu_pool_release(pool, &a, 1);
	gpu_pool_release(pool, &b, 1);

	/* GPU 1 is held back: one device can be granted, not two. */
	ASSERT_EQ(gpu_pool_held(pool, ids, 2), 1);
	ASSERT_EQ(ids[0], 1);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), -EAGAIN);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), 0);
	ASSERT_EQ(ids[0], 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), -EAGAIN);
	gpu_pool_release(pool, ids, 1);
	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 3, ids), -ENODEV);

	/* Still there: still held back. */
	ASSERT_EQ(gpu_pool_recheck(pool, back, 2), 0);
	ASSERT_EQ(gpu_pool_held(pool, NULL, 0), 1);
	/* Gone: back in service. */
	smi_state(TWO_GPUS);
	ASSERT_EQ(gpu_pool_recheck(pool, back, 2), 1);
	ASSERT_EQ(back[0], 1);
	ASSERT_EQ(gpu_pool_held(pool, NULL, 0), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(ids[0], 0);
	ASSERT_EQ(ids[1], 1);

	/* Both kinds on one device, nothing on the other; a full note. */
	smi_state("gpu 0 GPU-aaaa 3377\ngpu 1 GPU-bbbb 200\n"
		  "app 7 GPU-aaaa 1000\napp 8 GPU-aaaa 2000\n");
	expect_leaks(pool, ids, 2, 1, "GPU 0: 2 compute processes, 3.2 GiB above baseline");
	gpu_pool_release(pool, ids, 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), 0);
	ASSERT_EQ(ids[0], 1);
	gpu_pool_release(pool, ids, 1);
	gpu_pool_free(pool);
}

TEST(leak_memory_and_gone)
{
	struct gpu_pool *pool;
	int ids[2], back[2];

	pool = fixture_pool(TWO_GPUS);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	/* Up to the tolerance above the baseline is no leak. */
	smi_state("gpu 0 GPU-aaaa 356\ngpu 1 GPU-bbbb 100\n");
	expect_leaks(pool, ids, 2, 0, "");
	/* Beyond it is, on each device that is. */
	smi_state("gpu 0 GPU-aaaa 357\ngpu 1 GPU-bbbb 500\n");
	expect_leaks(pool, ids, 2, 2,
		     "GPU 0: 257 MiB above baseline; GPU 1: 300 MiB above baseline");
	gpu_pool_release(pool, ids, 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), -EAGAIN);

	/* GPU 1 gone from the answer stays held back; GPU 0 is clean. */
	smi_state("gpu 0 GPU-aaaa 100\n");
	ASSERT_EQ(gpu_pool_recheck(pool, back, 2), 1);
	ASSERT_EQ(back[0], 0);
	ASSERT_EQ(gpu_pool_held(pool, ids, 2), 1);
	ASSERT_EQ(ids[0], 1);
	/* A failing nvidia-smi returns nothing to service. */
	smi_state("fail\n");
	ASSERT_EQ(gpu_pool_recheck(pool, back, 2), 0);
	smi_state(TWO_GPUS);
	ASSERT_EQ(gpu_pool_recheck(pool, back, 2), 1);
	ASSERT_EQ(back[0], 1);

	/* A device that vanished while granted is held back, and says so. */
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), 0);
	smi_state("gpu 1 GPU-bbbb 200\n");
	expect_leaks(pool, ids, 1, 1, "GPU 0: not listed by nvidia-smi");
	gpu_pool_release(pool, ids, 1);
	gpu_pool_free(pool);
}

static long long elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long long)(t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

TEST(smi_failing_or_hanging)
{
	struct gpu_pool *pool;
	struct timespec t0;
	char note[256];
	int ids[2];

	pool = fixture_pool(TWO_GPUS);
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids), 0);

	/* It fails: the check says so, and nothing is held back. */
	smi_state("fail\n");
	expect_leaks(pool, ids, 1, -EIO, "nvidia-smi failed");
	ASSERT_EQ(gpu_pool_held(pool, NULL, 0), 0);

	/* It hangs: killed at the timeout. */
	gpu_pool_set_timeout(pool, 300);
	smi_state("hang\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(gpu_pool_leak_check(pool, ids, 1, note, sizeof(note)), -ETIMEDOUT);
	ASSERT(elapsed_ms(&t0) < 5000);
	ASSERT_STREQ(note, "nvidia-smi did not answer within 0.3 s");
	ASSERT_EQ(gpu_pool_held(pool, NULL, 0), 0);

	/* It is gone from PATH. */
	ASSERT_EQ(setenv("PATH", "/nonexistent", 1), 0);
	expect_leaks(pool, ids, 1, -ENOENT, "nvidia-smi is not on PATH");
	ASSERT_EQ(gpu_pool_acquire(pool, 1, ids + 1), 0);
	gpu_pool_free(pool);

	/* A hanging nvidia-smi at creation: no GPUs, after the timeout. */
	use_fixture_smi();
	smi_state("hang\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pool = pool_auto();
	ASSERT_EQ(gpu_pool_size(pool), 0);
	ASSERT(elapsed_ms(&t0) < GPU_SMI_TIMEOUT_MS + 3000);
	gpu_pool_free(pool);
}

TEST(slots_never_ask)
{
	struct gpu_pool *pool;
	int ids[2];

	use_fixture_smi();
	smi_state(TWO_GPUS "app 1 GPU-aaaa 10\napp 2 GPU-bbbb 10\n");
	pool = pool_slots(2);
	ASSERT_EQ(gpu_pool_checks(pool), 0);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	expect_leaks(pool, ids, 2, 0, "");
	gpu_pool_release(pool, ids, 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(smi_calls(), 0);
	gpu_pool_free(pool);
}

TEST(list_checks_known_devices)
{
	int cfg_ids[] = { 5, 1 };
	struct gpu_pool *pool;
	int ids[2], calls;

	use_fixture_smi();
	smi_state(TWO_GPUS "app 1 GPU-bbbb 10\n");
	pool = pool_list(cfg_ids, 2);
	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_checks(pool), 1);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	ASSERT_EQ(ids[0], 1);
	ASSERT_EQ(ids[1], 5);
	/* Device 5 is unknown to nvidia-smi: never checked, never asked. */
	calls = smi_calls();
	expect_leaks(pool, ids + 1, 1, 0, "");
	ASSERT_EQ(smi_calls(), calls);
	expect_leaks(pool, ids, 2, 1, "GPU 1: 1 compute process");
	gpu_pool_free(pool);

	/* No nvidia-smi: a list is still a pool, without checks. */
	ASSERT_EQ(setenv("PATH", "/nonexistent", 1), 0);
	pool = pool_list(cfg_ids, 2);
	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_checks(pool), 0);
	gpu_pool_free(pool);
}

TEST(auto_columns)
{
	struct gpu_pool *pool;
	int ids[2];

	/* Units left on, a memory the driver cannot report, blanks. */
	fake_smi(tmpdir, "printf '0, GPU-x, 10 MiB\\n 1 ,GPU-y,[N/A]\\n'\n");
	ASSERT_EQ(setenv("PATH", tmpdir, 1), 0);
	pool = pool_auto();
	ASSERT_EQ(gpu_pool_size(pool), 2);
	ASSERT_EQ(gpu_pool_acquire(pool, 2, ids), 0);
	/* Later device 0 uses far more than its baseline; device 1 has no
	 * baseline, so no memory check; a process query answering with a line
	 * that is no process finds none. */
	fake_smi(tmpdir, "case \"$1\" in --query-gpu=*) printf '0, GPU-x, 9000\\n1, GPU-y, [N/A]\\n';; "
			 "*) echo 'No running processes found';; esac\n");
	expect_leaks(pool, ids, 2, 1, "GPU 0: 8.8 GiB above baseline");
	gpu_pool_free(pool);
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
	RUN(leak_compute_process);
	RUN(leak_memory_and_gone);
	RUN(smi_failing_or_hanging);
	RUN(slots_never_ask);
	RUN(list_checks_known_devices);
	RUN(auto_columns);

	unlink(state_path);
	unlink(log_path);
	{
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/nvidia-smi", tmpdir);
		unlink(path);
	}
	rmdir(tmpdir);
	return 0;
}
