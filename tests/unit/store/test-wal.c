/*
 * test-wal.c - the store's WAL: checkpoints that keep it from growing with
 * everything ever written (an fsync every 50 commits always succeeding),
 * and its file brought back down to the size limit once the checkpointer
 * caught up, after a burst and after one commit larger than the limit,
 * with every value read back after a reopen; a steady writer's WAL started
 * over from its first frame, not cut to 0 bytes; the page size a new store
 * gets, and a store of 4 KiB pages kept so and bounded alike; the WAL's
 * blocks written up to the limit at the first fsync (store_sync), every
 * commit read back after the process died without closing the store, and
 * a fill the file system refuses cut back, the fsync succeeding.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store-old.h"
#include "test.h"

static char dir[] = "/tmp/pfs-wal-XXXXXX";

#define VAL_BYTES 4000

/* Commit i of a burst: the meta key PREFIX-(i % 50) set to i, written in
 * VAL_BYTES - 1 digits. */
static void commit_one(struct store *s, const char *prefix, int i)
{
	char key[32], val[VAL_BYTES];

	snprintf(key, sizeof(key), "%s-%d", prefix, i % 50);
	snprintf(val, sizeof(val), "%0*d", (int)sizeof(val) - 1, i);
	ASSERT_EQ(store_meta_set(s, key, val), 0);
}

/* Opens the store (create: makes it) with the path of its WAL file into
 * wal. */
static struct store *open_wal(char wal[64], int create)
{
	snprintf(wal, 64, "%s/packetfs.db-wal", dir);
	return test_store_open(dir, create, 0);
}

TEST(checkpoints)
{
	char wal[64], *v;
	long long max = 0, written = 0;
	struct stat st;
	struct store *s;
	int i;

	/* 160 MB in 40,000 commits as fast as they go: the WAL starts over
	 * again and again, never holding most of what was written; an fsync
	 * (store_sync) every 50 commits always succeeds. */
	s = open_wal(wal, 1);
	for (i = 0; i < 40000; i++) {
		commit_one(s, "ckpt", i);
		/* fsync's checkpoint waits for the checkpointer's pass that may
		 * run now, instead of failing with EBUSY. */
		if (i % 50 == 0)
			ASSERT_EQ(store_sync(s), 0);
		written += VAL_BYTES;
		if (stat(wal, &st) == 0 && st.st_size > max)
			max = st.st_size;
	}
	if (max >= written / 2)
		FAIL_AT("the WAL grew to %lld bytes for %lld written", max, written);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	ASSERT_EQ(store_meta_get(s, "ckpt-49", &v), 0);
	ASSERT_EQ(atoi(v), 39999);
	free(v);
	store_close(s);
}

/* WAL_LIMIT of store.c: the file of a WAL of 1000 frames of 4 KiB pages. */
#define WAL_LIMIT (32 + 1000 * (4096 + 24))

/* Polls the size of the WAL file wal down to WAL_LIMIT or less, up to
 * 30 s (the checkpointer's passes; not a measure of speed). Its last size. */
static long long wal_settle(const char *wal)
{
	struct timespec pause = {0, 20000000};
	struct stat st;
	int i;

	for (i = 0; i < 1500; i++) {
		if (stat(wal, &st) != 0)
			return 0;
		if (st.st_size <= WAL_LIMIT)
			return st.st_size;
		nanosleep(&pause, NULL);
	}
	return st.st_size;
}

TEST(wal_shrinks)
{
	char wal[64], *big, *v;
	long long size;
	size_t n = 6u << 20;
	struct store *s;
	int i;

	/* A burst of 2,000 commits of 4 KB, then nothing: the WAL file
	 * comes back down to WAL_LIMIT without another write. */
	s = open_wal(wal, 0);
	for (i = 0; i < 2000; i++)
		commit_one(s, "burst", i);
	size = wal_settle(wal);
	if (size > WAL_LIMIT)
		FAIL_AT("the WAL file stays at %lld bytes after a burst", size);
	/* One commit of 6 MiB: a WAL past the limit at once, then cut. */
	big = malloc(n + 1);
	ASSERT(big != NULL);
	memset(big, 'x', n);
	big[n] = '\0';
	ASSERT_EQ(store_meta_set(s, "big", big), 0);
	size = wal_settle(wal);
	if (size > WAL_LIMIT)
		FAIL_AT("the WAL file stays at %lld bytes after a 6 MiB commit", size);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	ASSERT_EQ(store_meta_get(s, "big", &v), 0);
	ASSERT_EQ(strlen(v), n);
	free(v);
	ASSERT_EQ(store_meta_get(s, "burst-49", &v), 0);
	ASSERT_EQ(atoi(v), 1999);
	free(v);
	free(big);
	store_close(s);
}

/* Salt-1 of the WAL file wal (its header's bytes 16-19, big-endian:
 * SQLite's file format, "WAL File Format"), which every start over from
 * the first frame changes, whichever connection made it; -1 when there is
 * no header. */
static long long wal_salt(const char *wal)
{
	unsigned char h[20];
	int fd = open(wal, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : pread(fd, h, sizeof(h), 0);

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(h))
		return -1;
	return (long long)((uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 |
			   h[19]);
}

TEST(steady_writer)
{
	char wal[64], *v;
	long long salt, last = -1, size;
	int i, starts = 0, cut = 0, grown = 0;
	struct stat st;
	struct store *s;

	/* Commits one after the other until the WAL started over 6 times: a
	 * checkpoint that caught up leaves the file as it is (a RESTART),
	 * and the next commit writes over its first frames, where a
	 * TRUNCATE cut it to 0 bytes and every frame after grew the file
	 * (an fdatasync then syncs the file's size and blocks too). A
	 * TRUNCATE is left for when no commit came for CKPT_QUIET_MS: one
	 * such pause of this thread is allowed. */
	s = open_wal(wal, 0);
	for (i = 0; starts < 6 && i < 200000; i++) {
		commit_one(s, "steady", i);
		if (stat(wal, &st) != 0)
			continue;
		size = st.st_size;
		if (size >= WAL_LIMIT)
			grown = 1;
		else if (grown && size < WAL_LIMIT / 2)
			cut++, grown = 0;
		salt = wal_salt(wal);
		if (salt >= 0 && last >= 0 && salt != last)
			starts++;
		if (salt >= 0)
			last = salt;
	}
	if (starts < 6)
		FAIL_AT("the WAL started over %d times in %d commits", starts, i);
	if (cut > 1)
		FAIL_AT("a steady writer's WAL file was cut below %d bytes %d times in %d starts",
			WAL_LIMIT / 2, cut, starts);
	ASSERT_EQ(store_sync(s), 0);
	store_close(s);
	s = test_store_open(dir, 0, 0);
	ASSERT_EQ(store_meta_get(s, "steady-49", &v), 0);
	ASSERT_EQ(atoi(v) % 50, 49);
	free(v);
	store_close(s);
}

/* The page size of the database file in store directory d (PRAGMA
 * page_size, read by a connection of its own). */
static int page_size_of(const char *d)
{
	char path[128];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int size = 0;

	snprintf(path, sizeof(path), "%s/packetfs.db", d);
	ASSERT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		size = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return size;
}

TEST(page_sizes)
{
	char d[96], wal[128], path[128], *v;
	sqlite3 *db = NULL;
	struct store *s;
	long long size;
	int i;

	/* A new store: 1 KiB pages (store.c's STORE_PAGE_SIZE). */
	snprintf(d, sizeof(d), "%s/new", dir);
	ASSERT_EQ(mkdir(d, 0700), 0);
	store_close(test_store_open(d, 1, 0));
	ASSERT_EQ(page_size_of(d), 1024);
	/* A database made with 4 KiB pages before the store was (as every
	 * store made before 1 KiB pages): it keeps them, and a burst leaves
	 * its WAL file within the same limit. */
	snprintf(d, sizeof(d), "%s/old", dir);
	ASSERT_EQ(mkdir(d, 0700), 0);
	snprintf(path, sizeof(path), "%s/packetfs.db", d);
	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "PRAGMA page_size=4096; CREATE TABLE t(x); DROP TABLE t", NULL,
			       NULL, NULL),
		  SQLITE_OK);
	sqlite3_close(db);
	s = test_store_open(d, 1, 0);
	for (i = 0; i < 2000; i++)
		commit_one(s, "old", i);
	snprintf(wal, sizeof(wal), "%s/packetfs.db-wal", d);
	size = wal_settle(wal);
	if (size > WAL_LIMIT)
		FAIL_AT("the WAL file of a 4 KiB store stays at %lld bytes after a burst", size);
	store_close(s);
	ASSERT_EQ(page_size_of(d), 4096);
	s = test_store_open(d, 0, 0);
	ASSERT_EQ(store_meta_get(s, "old-49", &v), 0);
	ASSERT_EQ(atoi(v), 1999);
	free(v);
	store_close(s);
}

/* The size of file path; -1 when there is none. */
static long long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Runs fn(d, wal) in a child process that ends with _exit(0), closing
 * nothing (the store's connections die as with kill -9), and checks that
 * it ended so. */
static void in_child(void (*fn)(const char *d, const char *wal), const char *d, const char *wal)
{
	pid_t pid = fork();
	int status = 0;

	ASSERT(pid >= 0);
	if (pid == 0) {
		fn(d, wal);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL_AT("the child's checks failed (status %#x)", status);
}

/* A commit, then the first fsync: the WAL file, which only its frames
 * had grown, is WAL_LIMIT bytes after it, and stays so through a commit
 * and a second fsync; one commit more, never synced, and the process
 * dies. */
static void fill_then_die(const char *d, const char *wal)
{
	struct store *s = test_store_open(d, 0, 0);
	long long size;

	ASSERT_EQ(store_meta_set(s, "before", "1"), 0);
	size = size_of(wal);
	if (size <= 0 || size >= WAL_LIMIT)
		FAIL_AT("the WAL file is %lld bytes after one commit", size);
	ASSERT_EQ(store_sync(s), 0);
	ASSERT_EQ(size_of(wal), WAL_LIMIT);
	ASSERT_EQ(store_meta_set(s, "after", "2"), 0);
	ASSERT_EQ(store_sync(s), 0);
	ASSERT_EQ(size_of(wal), WAL_LIMIT);
	ASSERT_EQ(store_meta_set(s, "unsynced", "3"), 0);
}

/* The first fsync with the file size limited to 64 KiB past the WAL's
 * end (RLIMIT_FSIZE: its writes past it fail with EFBIG, as on a full
 * disk): the fsync succeeds and the WAL file is cut back to its size;
 * with the limit lifted, a later fsync does not try again. */
static void fill_refused(const char *d, const char *wal)
{
	struct store *s = test_store_open(d, 0, 0);
	struct rlimit old, lim;
	long long size;

	ASSERT_EQ(store_meta_set(s, "refused", "4"), 0);
	size = size_of(wal);
	ASSERT(size > 0 && size < WAL_LIMIT - (64 << 10));
	signal(SIGXFSZ, SIG_IGN);
	ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)size + (64 << 10);
	ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ASSERT_EQ(store_sync(s), 0);
	ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
	ASSERT_EQ(size_of(wal), size);
	ASSERT_EQ(store_meta_set(s, "later", "5"), 0);
	ASSERT_EQ(store_sync(s), 0);
	if (size_of(wal) >= WAL_LIMIT)
		FAIL_AT("a later fsync wrote the WAL's blocks after the fill was refused");
}

/* Each of names holds its value (name=value pairs) in the store at d
 * after its recovery, and the database is whole. */
static void read_back(const char *d, const char *const *pairs)
{
	struct store *s = test_store_open(d, 0, 0);
	struct buf out;
	char *v;
	int i;

	for (i = 0; pairs[i]; i += 2) {
		ASSERT_EQ(store_meta_get(s, pairs[i], &v), 0);
		ASSERT_STREQ(v, pairs[i + 1]);
		free(v);
	}
	buf_init(&out);
	ASSERT_EQ(store_integrity(s, &out), 0);
	buf_free(&out);
	store_close(s);
}

TEST(wal_filled)
{
	static const char *const filled[] = {"before", "1", "after", "2", "unsynced", "3", NULL};
	static const char *const refused[] = {"refused", "4", "later", "5", NULL};
	char d[96], wal[128];

	snprintf(d, sizeof(d), "%s/filled", dir);
	snprintf(wal, sizeof(wal), "%s/packetfs.db-wal", d);
	ASSERT_EQ(mkdir(d, 0700), 0);
	store_close(test_store_open(d, 1, 0));
	in_child(fill_then_die, d, wal);
	/* The dead process's WAL, zeros after its frames, is recovered. */
	ASSERT_EQ(size_of(wal), WAL_LIMIT);
	read_back(d, filled);
	in_child(fill_refused, d, wal);
	read_back(d, refused);
}

TEST_MAIN_IN(dir, CASE(checkpoints), CASE(wal_shrinks), CASE(steady_writer), CASE(page_sizes),
	     CASE(wal_filled))
