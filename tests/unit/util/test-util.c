/*
 * test-util.c - buffers, time stamps, SHA-256 (against known vectors),
 * string vectors with shell quoting, whole-file I/O, and the helpers of
 * the engine's assert()s (util_mutex_held, util_owner).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

TEST(buf)
{
	struct buf b;
	char *s;
	int i;

	buf_init(&b);
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(buf_printf(&b, "%d,", i), 0);
	ASSERT_EQ(b.len, 3890);
	ASSERT(strncmp(b.data, "0,1,2,", 6) == 0);
	ASSERT_EQ(b.data[b.len], '\0');
	s = buf_steal(&b);
	ASSERT(b.data == NULL && b.len == 0);
	free(s);
	s = buf_steal(&b);
	ASSERT_STREQ(s, "");
	free(s);
}

TEST(time)
{
	char t[32];

	util_rfc3339(1795968131LL * 1000000000, t);
	ASSERT_STREQ(t, "2026-11-29T16:02:11Z");
	util_stamp_file(1795968131LL * 1000000000, t);
	ASSERT_STREQ(t, "2026-11-29T16-02-11Z");
}

TEST(sha256)
{
	char hex[65];
	struct util_sha *s;

	util_sha256_hex("", 0, hex);
	ASSERT_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	util_sha256_hex("abc", 3, hex);
	ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	s = util_sha_new();
	ASSERT(s != NULL);
	util_sha_update(s, "a", 1);
	util_sha_update(s, "bc", 2);
	util_sha_final(s, hex);
	ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(strv)
{
	char **v = NULL, **d, *j;

	ASSERT_EQ(strv_len(v), 0);
	ASSERT_EQ(strv_push(&v, "echo"), 0);
	ASSERT_EQ(strv_push(&v, "it's"), 0);
	ASSERT_EQ(strv_push(&v, "a b"), 0);
	ASSERT_EQ(strv_len(v), 3);
	j = strv_join(v, " ", 1);
	ASSERT_STREQ(j, "echo 'it'\\''s' 'a b'");
	free(j);
	j = strv_join(v, ",", 0);
	ASSERT_STREQ(j, "echo,it's,a b");
	free(j);
	d = strv_dup(v);
	ASSERT_STREQ(d[2], "a b");
	ASSERT(d[3] == NULL);
	strv_free(d);
	strv_free(v);
	ASSERT(strv_dup(NULL) == NULL);
}

TEST(files)
{
	char dir[] = "/tmp/pfs-util-XXXXXX", path[256], *data = NULL;
	size_t len = 0;

	ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	ASSERT_EQ(util_mkdirs(path, 0755), 0);
	ASSERT_EQ(util_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a/b/c/f", dir);
	ASSERT_EQ(util_write_file(path, "hello\n", 6), 0);
	ASSERT_EQ(util_read_file(path, 100, &data, &len), 0);
	ASSERT_EQ(len, 6);
	ASSERT_STREQ(data, "hello\n");
	free(data);
	ASSERT_EQ(util_read_file(path, 3, &data, &len), -EFBIG);
	snprintf(path, sizeof(path), "%s/missing", dir);
	ASSERT_EQ(util_read_file(path, 100, &data, &len), -ENOENT);
	ASSERT_EQ(test_rmtree(dir), 0);
}

static pthread_mutex_t other_m = PTHREAD_MUTEX_INITIALIZER;
static struct util_owner other_o;

/* Another thread's view: of a mutex the main thread holds, of an owner. */
static void *other_thread(void *arg)
{
	int *seen = arg;

	seen[0] = util_mutex_held(&other_m);
	seen[1] = util_owner_is_self(&other_o);
	seen[2] = util_owner_here(&other_o);
	return NULL;
}

TEST(invariants)
{
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	struct timespec now;
	pthread_t t;
	int seen[3];

	ASSERT_EQ(util_mutex_held(&other_m), 0);
	pthread_mutex_lock(&other_m);
	ASSERT_EQ(util_mutex_held(&other_m), 1);
	/* A wait gives the mutex up and takes it again. */
	clock_gettime(CLOCK_REALTIME, &now);
	ASSERT_EQ(pthread_cond_timedwait(&cond, &other_m, &now), ETIMEDOUT);
	ASSERT_EQ(util_mutex_held(&other_m), 1);

	/* Nobody owns other_o: every thread is here, none is its owner. */
	ASSERT_EQ(util_owner_is_self(&other_o), 0);
	ASSERT_EQ(util_owner_here(&other_o), 1);
	util_owner_enter(&other_o);
	ASSERT_EQ(util_owner_is_self(&other_o), 1);
	ASSERT_EQ(util_owner_here(&other_o), 1);
	ASSERT_EQ(pthread_create(&t, NULL, other_thread, seen), 0);
	pthread_join(t, NULL);
#ifdef __GLIBC__
	ASSERT_EQ(seen[0], 0); /* held, but by another thread */
#endif
	ASSERT_EQ(seen[1], 0);
	ASSERT_EQ(seen[2], 0);
	pthread_mutex_unlock(&other_m);
	ASSERT_EQ(util_mutex_held(&other_m), 0);
	util_owner_leave(&other_o);
	ASSERT_EQ(util_owner_is_self(&other_o), 0);
	ASSERT_EQ(pthread_create(&t, NULL, other_thread, seen), 0);
	pthread_join(t, NULL);
	ASSERT_EQ(seen[0], 0);
	ASSERT_EQ(seen[2], 1); /* the owner ended: whoever holds it may use it */
	pthread_cond_destroy(&cond);
}

/* The child of a fork has a thread id of its own: what it holds is its. */
TEST(mutex_held_after_fork)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	int status;
	pid_t pid;

	pthread_mutex_lock(&m);
	ASSERT_EQ(util_mutex_held(&m), 1); /* the parent's id is known now */
	pthread_mutex_unlock(&m);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		pthread_mutex_lock(&m);
		_exit(util_mutex_held(&m) == 1 ? 0 : 1);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* util_grow doubles from first only when full, keeps the elements, and
 * refuses a size that would overflow without touching the array. */
TEST(grow)
{
	int *v = NULL;
	size_t n, cap = 0;

	for (n = 0; n < 20; n++) {
		ASSERT_EQ(util_grow(&v, &cap, n, sizeof(*v), 4), 0);
		ASSERT(n < cap);
		v[n] = (int)n;
	}
	ASSERT_EQ(cap, 32);
	for (n = 0; n < 20; n++)
		ASSERT_EQ(v[n], (int)n);
	ASSERT_EQ(util_grow(&v, &cap, 20, sizeof(*v), 4), 0);
	ASSERT_EQ(cap, 32);
	/* 64 elements of this size wrap around to 64 bytes. */
	ASSERT_EQ(util_grow(&v, &cap, 32, SIZE_MAX / 64 + 2, 4), -ENOMEM);
	ASSERT_EQ(cap, 32);
	ASSERT_EQ(v[19], 19);
	free(v);
}

int main(void)
{
	RUN(buf);
	RUN(time);
	RUN(sha256);
	RUN(strv);
	RUN(files);
	RUN(invariants);
	RUN(mutex_held_after_fork);
	RUN(grow);
	return 0;
}
