/*
 * store_vfs.c - the store's SQLite VFS (store_int.h: store__vfs): the
 * platform's default VFS ("unix"), with the writes of a WAL file gathered,
 * and a second descriptor of each WAL file for store_sync.
 *
 * Why. SQLite writes each frame of a commit to the WAL with two pwrite(2)
 * calls, its 24-byte header and then its page (sqlite3WalFrames, every
 * version since 3.7.0). A commit of a 4 KiB document is nine frames of
 * 1 KiB pages, so eighteen calls: 27 µs on ext4 on the bench VM, against
 * 2 µs for the same bytes in one call. A commit is what every close that
 * wrote, every registry line and every rename costs.
 *
 * How. A WAL file is wrapped (struct wal_file); every other file SQLite
 * opens is the default VFS's own, untouched. The wrapper keeps writes that
 * continue one another in a buffer and writes the buffer with one
 * pwrite(2) (the default VFS's xWrite):
 *  - once a write reaches the end of a commit frame, the last of a commit:
 *    a frame header's second word (big-endian) is the database size after
 *    the commit, 0 for any other frame (https://www.sqlite.org/fileformat.html,
 *    "WAL Frame Format"; found by the format, at the frames' offsets, not
 *    by how SQLite splits its calls). So a commit's frames are in the file before
 *    sqlite3WalFrames goes on to publish them in the wal-index, where the
 *    checkpointer's connection and other processes find them, and a failure
 *    (a full disk) is the xWrite's error, as without the buffer: SQLite
 *    rolls the transaction back;
 *  - before a write that does not continue the buffer, and when it holds
 *    BUF_MAX bytes (a transaction spilling pages, a large document);
 *  - before any other call that reads or changes the file (a read, xSync,
 *    xTruncate, xFileSize, xClose, a file control): SQLite then sees the
 *    file as if every write had been made.
 * Frames written before their commit frame (a transaction larger than the
 * page cache) are not visible to any reader before that commit publishes
 * them, so they may wait. The durability contract (store.h) is unchanged:
 * a commit returns after its frames were written to the file, where they
 * survive the death of the process, and store_sync's xSync on the WAL
 * writes what is buffered before it syncs.
 *
 * Guard: gathering starts only once the file's header (its first 32 bytes,
 * written by SQLite at the start of each round of the WAL) says WAL format
 * 3007000 with pages of a size the frames are then checked against; a WAL
 * of another format is written through, call by call.
 *
 * The second descriptor: each WAL file is opened again by its name, to
 * read, when SQLite opens it; store__vfs_wal_fd hands store_sync a copy,
 * which it fdatasyncs after dropping the store's lock (store.c says why
 * that is sound). It costs each connection one descriptor; the
 * checkpointer's and read-only connections never use theirs.
 *
 * The WAL's blocks written before the frames (store__vfs_wal_fill): a
 * WAL file SQLite starts grows by each commit until the checkpointer
 * starts it over (store.c), and an fdatasync(2) of a file that grew also
 * syncs its new size and blocks, through the journal of a journaled ext4;
 * of one whose blocks are written, only the bytes written over. So the
 * first store_sync of a WAL writes zeros from its end to the size it is
 * started over at, once. A zero frame header is no frame (its page number
 * 0, its salts and checksum wrong), so SQLite's recovery ends the log at
 * the first zero as at the file's end; the zeros lie beyond every frame.
 *
 * Threads: SQLite calls a file's methods from one connection at a time (a
 * store serialises its connection under its lock, and the checkpointer's
 * connection is its thread's own), so a wrapper has no lock of its own.
 */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

#define STORE_VFS_NAME "packetfs"
#define WAL_HDR 32       /* the WAL file's header */
#define FRAME_HDR 24     /* a frame's header */
#define WAL_FORMAT 3007000
/* At most the bytes of one write to the default VFS: the unix VFS writes
 * less than 128 KiB a call (seekAndWriteFd masks the count with 0x1ffff). */
#define BUF_MAX (64 * 1024)
/* The zeros store__vfs_wal_fill writes a call. */
#define FILL_CHUNK (64 * 1024)

struct wal_file {
	sqlite3_file base;   /* pMethods: &wal_methods */
	sqlite3_file *real;  /* the default VFS's file, in the same allocation */
	unsigned char *buf;  /* bytes for [off, off + len) not written yet */
	size_t len, cap;
	sqlite3_int64 off;
	int page;            /* the page size the header gave: gathering on; 0: off */
	sqlite3_int64 commit_end; /* where the last commit frame seen ends, until a
				   * write reaches it; 0: none */
	int sync_fd;         /* the same file opened to read (fdatasync(2) of such a descriptor
			      * syncs the file on Linux), for store__vfs_wal_fd; -1: none */
	int synced;          /* 1 once an xSync succeeded (SQLite's first syncs the directory) */
};

static sqlite3_vfs *base_vfs;
static sqlite3_vfs store_vfs;
static pthread_once_t vfs_once = PTHREAD_ONCE_INIT;
static int vfs_rc = SQLITE_ERROR;

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Writes what the buffer holds. SQLITE_OK or the default VFS's error (the
 * buffer is dropped either way: SQLite rolls back what it wrote). */
static int wal_flush(struct wal_file *w)
{
	int rc = SQLITE_OK;

	if (w->len) {
		rc = w->real->pMethods->xWrite(w->real, w->buf, (int)w->len, w->off);
		w->len = 0;
	}
	return rc;
}

static int wal_close(sqlite3_file *f)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc = wal_flush(w), rc2 = w->real->pMethods->xClose(w->real);

	free(w->buf);
	w->buf = NULL;
	if (w->sync_fd >= 0)
		close(w->sync_fd);
	w->sync_fd = -1;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wal_read(sqlite3_file *f, void *out, int amt, sqlite3_int64 off)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc = wal_flush(w);

	return rc != SQLITE_OK ? rc : w->real->pMethods->xRead(w->real, out, amt, off);
}

/* Reads the format and page size from a WAL header being written (bytes
 * 4-7 and 8-11): gathering goes on only for the format this file knows. */
static void wal_header(struct wal_file *w, const unsigned char *h)
{
	uint32_t page = be32(h + 8);

	w->page = be32(h + 4) == WAL_FORMAT && page >= 512 && page <= 65536 &&
			  (page & (page - 1)) == 0
		  ? (int)page
		  : 0;
}

/* Notes in w->commit_end the end of the last commit frame whose header the
 * amt bytes at off hold whole: a frame is a 24-byte header and a page, from
 * byte WAL_HDR on, and a header's second word (big-endian) is the database
 * size after the commit, 0 for any other frame. Found by the format, not by
 * how SQLite splits its calls. */
static void wal_scan(struct wal_file *w, const unsigned char *p, int amt, sqlite3_int64 off)
{
	sqlite3_int64 fsz = FRAME_HDR + w->page, h = WAL_HDR;

	if (off > WAL_HDR)
		h += (off - WAL_HDR + fsz - 1) / fsz * fsz;
	for (; h + FRAME_HDR <= off + amt; h += fsz)
		if (be32(p + (h - off) + 4) != 0)
			w->commit_end = h + fsz;
}

static int wal_write(sqlite3_file *f, const void *data, int amt, sqlite3_int64 off)
{
	struct wal_file *w = (struct wal_file *)f;
	const unsigned char *p = data;
	int rc;

	if (off == 0 && amt >= WAL_HDR)
		wal_header(w, p);
	if (!w->page || amt <= 0) {
		rc = wal_flush(w);
		return rc != SQLITE_OK ? rc : w->real->pMethods->xWrite(w->real, data, amt, off);
	}
	wal_scan(w, p, amt, off);
	if (w->len && (off != w->off + (sqlite3_int64)w->len || w->len + (size_t)amt > BUF_MAX)) {
		rc = wal_flush(w);
		if (rc != SQLITE_OK)
			return rc;
	}
	if ((size_t)amt > BUF_MAX) {
		rc = w->real->pMethods->xWrite(w->real, data, amt, off);
	} else {
		if (w->cap < w->len + (size_t)amt) {
			size_t cap = w->cap ? w->cap : 8192;
			unsigned char *nb;

			while (cap < w->len + (size_t)amt)
				cap *= 2;
			nb = realloc(w->buf, cap);
			if (!nb) {
				rc = wal_flush(w);
				return rc != SQLITE_OK ? rc
						       : w->real->pMethods->xWrite(w->real, data, amt, off);
			}
			w->buf = nb;
			w->cap = cap;
		}
		if (!w->len)
			w->off = off;
		memcpy(w->buf + w->len, p, (size_t)amt);
		w->len += (size_t)amt;
		assert(w->len <= BUF_MAX);
		rc = SQLITE_OK;
	}
	/* A commit frame complete: the commit's frames go to the file now. */
	if (rc == SQLITE_OK && w->commit_end && off + amt >= w->commit_end) {
		w->commit_end = 0;
		rc = wal_flush(w);
	}
	return rc;
}

/* The methods that only need the buffer written first. */
static int wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc = wal_flush(w);

	return rc != SQLITE_OK ? rc : w->real->pMethods->xTruncate(w->real, size);
}

static int wal_sync(sqlite3_file *f, int flags)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc = wal_flush(w);

	if (rc == SQLITE_OK)
		rc = w->real->pMethods->xSync(w->real, flags);
	if (rc == SQLITE_OK)
		w->synced = 1;
	return rc;
}

static int wal_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc = wal_flush(w);

	return rc != SQLITE_OK ? rc : w->real->pMethods->xFileSize(w->real, size);
}

/* Locks are the database file's (SQLite takes none on a WAL file): passed on. */
static int wal_lock(sqlite3_file *f, int level)
{
	struct wal_file *w = (struct wal_file *)f;

	return w->real->pMethods->xLock(w->real, level);
}

static int wal_unlock(sqlite3_file *f, int level)
{
	struct wal_file *w = (struct wal_file *)f;

	return w->real->pMethods->xUnlock(w->real, level);
}

static int wal_check_reserved(sqlite3_file *f, int *out)
{
	struct wal_file *w = (struct wal_file *)f;

	return w->real->pMethods->xCheckReservedLock(w->real, out);
}

static int wal_file_control(sqlite3_file *f, int op, void *arg)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc = wal_flush(w);

	return rc != SQLITE_OK ? rc : w->real->pMethods->xFileControl(w->real, op, arg);
}

static int wal_sector_size(sqlite3_file *f)
{
	struct wal_file *w = (struct wal_file *)f;

	return w->real->pMethods->xSectorSize(w->real);
}

static int wal_device(sqlite3_file *f)
{
	struct wal_file *w = (struct wal_file *)f;

	return w->real->pMethods->xDeviceCharacteristics(w->real);
}

/* Version 1 of the methods: SQLite maps no WAL file and keeps no shared
 * memory in one (those are the database file's). */
static const sqlite3_io_methods wal_methods = {
	1, wal_close, wal_read, wal_write, wal_truncate, wal_sync, wal_file_size,
	wal_lock, wal_unlock, wal_check_reserved, wal_file_control, wal_sector_size,
	wal_device, NULL, NULL, NULL, NULL, NULL, NULL,
};

int store__vfs_wal_fd(sqlite3_file *f)
{
	struct wal_file *w = (struct wal_file *)f;

	if (f->pMethods != &wal_methods || w->sync_fd < 0 || !w->synced ||
	    wal_flush(w) != SQLITE_OK)
		return -1;
	return fcntl(w->sync_fd, F_DUPFD_CLOEXEC, 0);
}

int store__vfs_wal_fill(sqlite3_file *f, sqlite3_int64 size)
{
	static const unsigned char zeros[FILL_CHUNK];
	struct wal_file *w = (struct wal_file *)f;
	sqlite3_int64 end = 0, at;
	int rc, n;

	if (f->pMethods != &wal_methods)
		return SQLITE_OK;
	rc = wal_flush(w);
	if (rc == SQLITE_OK)
		rc = w->real->pMethods->xFileSize(w->real, &end);
	if (rc != SQLITE_OK || end >= size)
		return rc;
	for (at = end; rc == SQLITE_OK && at < size; at += n) {
		n = size - at < FILL_CHUNK ? (int)(size - at) : FILL_CHUNK;
		rc = w->real->pMethods->xWrite(w->real, zeros, n, at);
	}
	if (rc == SQLITE_OK)
		rc = w->real->pMethods->xSync(w->real, SQLITE_SYNC_NORMAL);
	if (rc == SQLITE_OK)
		w->synced = 1;
	else
		w->real->pMethods->xTruncate(w->real, end);
	return rc;
}

static int vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
		    int *out_flags)
{
	struct wal_file *w = (struct wal_file *)f;
	int rc;

	(void)vfs;
	if (!(flags & SQLITE_OPEN_WAL))
		return base_vfs->xOpen(base_vfs, name, f, flags, out_flags);
	memset(w, 0, sizeof(*w));
	w->sync_fd = -1;
	w->real = (sqlite3_file *)(w + 1);
	rc = base_vfs->xOpen(base_vfs, name, w->real, flags, out_flags);
	if (rc != SQLITE_OK) {
		if (w->real->pMethods)
			w->real->pMethods->xClose(w->real);
		w->base.pMethods = NULL;
		return rc;
	}
	w->base.pMethods = &wal_methods;
	/* The file SQLite has just opened, by its name: -1 (no descriptor,
	 * store_sync then syncs through SQLite) when it does not open. */
	if (name)
		w->sync_fd = open(name, O_RDONLY | O_CLOEXEC);
	/* A WAL SQLite goes on appending to keeps the header it has. */
	{
		unsigned char h[WAL_HDR];
		sqlite3_int64 size = 0;

		if (w->real->pMethods->xFileSize(w->real, &size) == SQLITE_OK && size >= WAL_HDR &&
		    w->real->pMethods->xRead(w->real, h, WAL_HDR, 0) == SQLITE_OK)
			wal_header(w, h);
	}
	return SQLITE_OK;
}

/* The rest is the default VFS's, called with its own object. */
static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	return base_vfs->xDelete(base_vfs, name, sync_dir);
}

static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return base_vfs->xAccess(base_vfs, name, flags, out);
}

static int vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return base_vfs->xFullPathname(base_vfs, name, n, out);
}

static void *vfs_dlopen(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return base_vfs->xDlOpen(base_vfs, name);
}

static void vfs_dlerror(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	base_vfs->xDlError(base_vfs, n, out);
}

static void (*vfs_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return base_vfs->xDlSym(base_vfs, h, sym);
}

static void vfs_dlclose(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	base_vfs->xDlClose(base_vfs, h);
}

static int vfs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return base_vfs->xRandomness(base_vfs, n, out);
}

static int vfs_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return base_vfs->xSleep(base_vfs, us);
}

static int vfs_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return base_vfs->xCurrentTime(base_vfs, out);
}

static int vfs_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return base_vfs->xGetLastError(base_vfs, n, out);
}

static int vfs_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return base_vfs->xCurrentTimeInt64(base_vfs, out);
}

static void vfs_init(void)
{
	base_vfs = sqlite3_vfs_find(NULL);
	if (!base_vfs || base_vfs->iVersion < 2 || !base_vfs->xCurrentTimeInt64)
		return;
	store_vfs.iVersion = 2;
	store_vfs.szOsFile = (int)sizeof(struct wal_file) + base_vfs->szOsFile;
	store_vfs.mxPathname = base_vfs->mxPathname;
	store_vfs.zName = STORE_VFS_NAME;
	store_vfs.xOpen = vfs_open;
	store_vfs.xDelete = vfs_delete;
	store_vfs.xAccess = vfs_access;
	store_vfs.xFullPathname = vfs_full_pathname;
	store_vfs.xDlOpen = vfs_dlopen;
	store_vfs.xDlError = vfs_dlerror;
	store_vfs.xDlSym = vfs_dlsym;
	store_vfs.xDlClose = vfs_dlclose;
	store_vfs.xRandomness = vfs_randomness;
	store_vfs.xSleep = vfs_sleep;
	store_vfs.xCurrentTime = vfs_current_time;
	store_vfs.xGetLastError = vfs_last_error;
	store_vfs.xCurrentTimeInt64 = vfs_current_time64;
	vfs_rc = sqlite3_vfs_register(&store_vfs, 0);
}

const char *store__vfs(void)
{
	pthread_once(&vfs_once, vfs_init);
	return vfs_rc == SQLITE_OK ? STORE_VFS_NAME : NULL;
}
