/*
 * test-vfs.c - the store's VFS (store_vfs.c): a commit's frames are in the
 * WAL file when it returns, read at once by another connection of
 * SQLite's own VFS (as the checkpointer's and other processes'), a small
 * commit reaching the WAL in one write(2)-like call, a commit larger than
 * the gathering buffer whole, and a store that goes on appending to a WAL
 * another connection began gathering its writes too; and store_sync's
 * fdatasync(2) of the WAL, made without the store's lock, on the WAL file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <sqlite3.h>

#include "store.h"
#include "store-old.h"
#include "test.h"

static char dir[] = "/tmp/pfs-vfs-XXXXXX";

/* The write-like system calls the calling thread made so far (proc(5):
 * /proc/thread-self/io, syscw). */
static long long thread_writes(void)
{
	char line[128];
	long long n = -1;
	FILE *f = fopen("/proc/thread-self/io", "r");

	if (!f)
		FAIL_AT("cannot read /proc/thread-self/io");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "syscw: %lld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The value of meta key as a connection of SQLite's default VFS reads it
 * (a new read transaction each call); malloc'd, or NULL for no row. */
static char *peer_value(sqlite3 *peer, const char *key)
{
	sqlite3_stmt *st;
	char *v = NULL;

	ASSERT_EQ(sqlite3_prepare_v2(peer, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL),
		  SQLITE_OK);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

static sqlite3 *peer_open(void)
{
	char path[64];
	sqlite3 *peer = NULL;

	snprintf(path, sizeof(path), "%s/packetfs.db", dir);
	ASSERT_EQ(sqlite3_open_v2(path, &peer, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return peer;
}

/* A value of n bytes: digits of i, repeated. */
static char *value_of(int i, size_t n)
{
	char *v = malloc(n + 1);
	size_t k;

	ASSERT(v != NULL);
	for (k = 0; k < n; k++)
		v[k] = (char)('0' + (i + (int)k) % 10);
	v[n] = '\0';
	return v;
}

TEST(commits_seen_at_once)
{
	struct store *s = test_store_open(dir, 1, 0);
	sqlite3 *peer = peer_open();
	long long before, writes;
	int i;

	/* Each commit is read back by the other connection before the next:
	 * its frames were written when store_meta_set returned. 4,000 bytes
	 * of 1 KiB pages: five or six frames, two writes each without the
	 * VFS. */
	before = thread_writes();
	for (i = 0; i < 200; i++) {
		char *v = value_of(i, 4000), *got;

		ASSERT_EQ(store_meta_set(s, "k", v), 0);
		got = peer_value(peer, "k");
		ASSERT(got != NULL);
		ASSERT_STREQ(got, v);
		free(got);
		free(v);
	}
	writes = thread_writes() - before;
	if (writes > 2 * 200)
		FAIL_AT("%lld write calls for 200 commits of 4,000 bytes (at most 2 each expected)",
			writes);
	sqlite3_close(peer);
	store_close(s);
}

TEST(large_commit)
{
	struct store *s = test_store_open(dir, 1, 0);
	sqlite3 *peer = peer_open();
	char *v = value_of(7, 3 << 20), *got;

	/* 3 MiB: many times the buffer, written as it fills. */
	ASSERT_EQ(store_meta_set(s, "big", v), 0);
	got = peer_value(peer, "big");
	ASSERT(got != NULL);
	ASSERT(strcmp(got, v) == 0);
	free(got);
	sqlite3_close(peer);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	ASSERT_EQ(store_meta_get(s, "big", &got), 0);
	ASSERT(strcmp(got, v) == 0);
	free(got);
	free(v);
	store_close(s);
}

TEST(wal_begun_elsewhere)
{
	struct store *a = test_store_open(dir, 1, 0), *b;
	long long before, writes;
	char *v;
	int i;

	/* a writes the WAL's header; b opens the WAL as it is and appends. */
	ASSERT_EQ(store_meta_set(a, "first", "a"), 0);
	b = test_store_open(dir, 0, 0);
	before = thread_writes();
	for (i = 0; i < 100; i++) {
		v = value_of(i, 4000);
		ASSERT_EQ(store_meta_set(b, "k2", v), 0);
		free(v);
	}
	writes = thread_writes() - before;
	if (writes > 2 * 100)
		FAIL_AT("%lld write calls for 100 commits to a WAL begun by another connection",
			writes);
	ASSERT_EQ(store_meta_get(a, "k2", &v), 0);
	ASSERT(strncmp(v, "9012", 4) == 0);
	free(v);
	store_close(b);
	store_close(a);
}

/* fdatasync(2) as this program's callers see it (the store's and SQLite's
 * calls reach this definition): the system call, except that while
 * sync_gate is set a call records its descriptor's file and waits for the
 * gate to open. */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cond = PTHREAD_COND_INITIALIZER;
static int sync_gate, sync_waiting;
static struct stat sync_file;

int fdatasync(int fd)
{
	pthread_mutex_lock(&sync_lock);
	if (sync_gate) {
		fstat(fd, &sync_file);
		sync_waiting = 1;
		pthread_cond_broadcast(&sync_cond);
		while (sync_gate)
			pthread_cond_wait(&sync_cond, &sync_lock);
		sync_waiting = 0;
	}
	pthread_mutex_unlock(&sync_lock);
	return (int)syscall(SYS_fdatasync, fd);
}

struct sync_job {
	struct store *s;
	int rc, done;
};

static void *sync_main(void *arg)
{
	struct sync_job *j = arg;

	j->rc = store_sync(j->s);
	__atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *commit_main(void *arg)
{
	struct sync_job *j = arg;

	j->rc = store_meta_set(j->s, "during", "the sync");
	__atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Waits up to 10 s for *flag; whether it was set. */
static int wait_flag(int *flag)
{
	int i;

	for (i = 0; i < 1000 && !__atomic_load_n(flag, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST);
}

TEST(sync_without_lock)
{
	struct store *s = test_store_open(dir, 1, 0);
	struct sync_job sj = { s, -1, 0 }, cj = { s, -1, 0 };
	pthread_t st, ct;
	struct stat wal;
	char path[64], *v;

	ASSERT_EQ(store_meta_set(s, "before", "x"), 0);
	/* The first sync goes through SQLite (its first also syncs the
	 * directory of the new WAL file); the next one holds the gate. */
	ASSERT_EQ(store_sync(s), 0);
	ASSERT_EQ(store_meta_set(s, "synced", "y"), 0);
	pthread_mutex_lock(&sync_lock);
	sync_gate = 1;
	pthread_mutex_unlock(&sync_lock);
	ASSERT_EQ(pthread_create(&st, NULL, sync_main, &sj), 0);
	pthread_mutex_lock(&sync_lock);
	while (!sync_waiting)
		pthread_cond_wait(&sync_cond, &sync_lock);
	pthread_mutex_unlock(&sync_lock);
	/* It syncs the WAL file. */
	snprintf(path, sizeof(path), "%s/packetfs.db-wal", dir);
	ASSERT_EQ(stat(path, &wal), 0);
	ASSERT(sync_file.st_ino == wal.st_ino && sync_file.st_dev == wal.st_dev);
	/* A commit made while it waits on the disk is not held up by it. */
	ASSERT_EQ(pthread_create(&ct, NULL, commit_main, &cj), 0);
	if (!wait_flag(&cj.done))
		FAIL_AT("a commit waited for a store_sync under way (10 s)");
	ASSERT_EQ(cj.rc, 0);
	ASSERT_EQ(__atomic_load_n(&sj.done, __ATOMIC_SEQ_CST), 0);
	pthread_mutex_lock(&sync_lock);
	sync_gate = 0;
	pthread_cond_broadcast(&sync_cond);
	pthread_mutex_unlock(&sync_lock);
	pthread_join(st, NULL);
	pthread_join(ct, NULL);
	ASSERT_EQ(sj.rc, 0);
	ASSERT_EQ(store_meta_get(s, "during", &v), 0);
	ASSERT_STREQ(v, "the sync");
	free(v);
	store_close(s);
}

TEST_MAIN_IN(dir, CASE(commits_seen_at_once), CASE(large_commit), CASE(wal_begun_elsewhere),
	     CASE(sync_without_lock))
