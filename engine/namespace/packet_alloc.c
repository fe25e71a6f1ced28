/*
 * packet_alloc.c - the size and space of open files: truncate(2),
 * ftruncate(2) and fallocate(2) (SPEC §3: documents behave like files on a
 * local disk). engine.h documents engine_truncate, engine_file_truncate
 * and engine_file_fallocate.
 *
 * A truncate sets a document's size (zero-filling growth) and is
 * committed at the handle's flush, or at once by path; the registry takes
 * only its own size (EPERM), ctl and validation/record ignore it, and
 * pipeline.json and an editor's temp file cut their pending copy.
 *
 * Design. A document has no blocks to reserve: its content is one buffer
 * (struct open_doc) committed as a revision, so each mode is what it
 * leaves a reader, as ext4 does it: mode 0 extends the size with zeros;
 * FALLOC_FL_KEEP_SIZE alone changes nothing; FALLOC_FL_PUNCH_HOLE (with
 * KEEP_SIZE, as the kernel demands) and FALLOC_FL_ZERO_RANGE zero the
 * range inside the size, ZERO_RANGE without KEEP_SIZE also extending it.
 * Any other mode is EOPNOTSUPP. The per-document size limit applies to
 * off + len in every mode (EFBIG), as the file system's maximum file size
 * does on ext4. A call that leaves the bytes and the size as they were
 * changes nothing (no revision), like an open that writes nothing.
 * .packetfs/pipeline.json and an editor's temp file there work the same on
 * their pending copy; the registry is append-only (EPERM but for a
 * KEEP_SIZE that changes nothing); ctl and validation/record take commands,
 * not bytes (EOPNOTSUPP); views are read-only (EACCES).
 *
 * Threads: any FUSE thread; an open document's lock is held while its
 * content changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <string.h>

#include "packet_int.h"

/* The modes engine_file_fallocate takes. */
#define ALLOC_MODES (FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)

/*
 * Applies fallocate mode to the content b for [off, off + len), off + len
 * at most max (checked by the caller); *changed is set to 1 when a byte or
 * the length changed. 0 or -ENOMEM (b is then as it was).
 */
static int alloc_buf(struct buf *b, int mode, uint64_t off, uint64_t len, int *changed)
{
	uint64_t end = off + len, zero_end;
	size_t old = b->len;

	*changed = 0;
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		zero_end = end < b->len ? end : b->len;
		for (uint64_t i = off; i < zero_end; i++) {
			if (b->data[i]) {
				memset(b->data + i, 0, (size_t)(zero_end - i));
				*changed = 1;
				break;
			}
		}
	}
	if ((mode & FALLOC_FL_KEEP_SIZE) || end <= old)
		return 0;
	/* Growth is zero-filled: buf_append of zeros, a block at a time. */
	while (b->len < end) {
		static const char zeros[4096];
		size_t n = end - b->len < sizeof(zeros) ? (size_t)(end - b->len) : sizeof(zeros);
		int rc = buf_append(b, zeros, n);

		if (rc) {
			b->len = old;
			if (b->data)
				b->data[old] = '\0';
			return rc;
		}
	}
	*changed = 1;
	return 0;
}

int engine_file_fallocate(struct pfs_file *f, int mode, uint64_t off, uint64_t len,
			  const struct pfs_caller *who)
{
	struct open_doc *d = f->od;
	int rc, changed;

	if (len == 0 || off + len < off)
		return -EINVAL;
	if (mode & ~ALLOC_MODES)
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) &&
	    (!(mode & FALLOC_FL_KEEP_SIZE) || (mode & FALLOC_FL_ZERO_RANGE)))
		return -EINVAL; /* as the kernel answers these itself */
	switch (f->kind) {
	case N_DOC:
		if (off + len > packet__max_doc(f->e))
			return -EFBIG;
		pthread_mutex_lock(&f->lock); /* the handle's lock first (namespace.h) */
		packet__od_request(d, f, 1);
		pthread_mutex_lock(&d->lock);
		rc = packet__od_load(f->e, d);
		if (rc == 0)
			rc = alloc_buf(&d->content, mode, off, len, &changed);
		if (rc == 0 && changed) {
			d->dirty = 1;
			d->mtime_ns = util_now_ns();
			f->wrote = 1;
		}
		pthread_mutex_unlock(&d->lock);
		if (rc == 0 && changed)
			rc = packet__through_settle(f, who);
		pthread_mutex_unlock(&f->lock);
		return rc;
	case N_PIPELINE:
	case N_PFS_TMP:
		if (off + len > (1u << 20))
			return -EFBIG;
		pthread_mutex_lock(&f->lock);
		rc = alloc_buf(&f->snap, mode, off, len, &changed);
		if (rc == 0 && changed)
			f->snap_dirty = 1;
		pthread_mutex_unlock(&f->lock);
		return rc;
	case N_REGISTRY:
		return mode == FALLOC_FL_KEEP_SIZE ? 0 : -EPERM;
	case N_CTL:
	case N_RECORD:
		return -EOPNOTSUPP;
	default:
		return -EACCES;
	}
}

/* engine_file_truncate with f->lock held. */
static int file_truncate(struct pfs_file *f, uint64_t size)
{
	int rc;

	assert(util_mutex_held(&f->lock));
	assert(!util_mutex_held(&f->e->files_lock)); /* a handle's lock comes first */
	switch (f->kind) {
	case N_DOC:
		if (size > packet__max_doc(f->e))
			return -EFBIG;
		packet__od_request(f->od, f, 1);
		pthread_mutex_lock(&f->od->lock);
		if (size < packet__od_size(f->od))
			rc = packet__od_cut(f->e, f->od, size);
		else
			rc = packet__od_resize(f->e, f->od, size);
		pthread_mutex_unlock(&f->od->lock);
		return rc;
	case N_CTL:
	case N_RECORD:
		return 0;
	case N_REGISTRY:
		return size == packet__registry_size(f->e, f->item_id) ? 0 : -EPERM;
	case N_PIPELINE:
	case N_PFS_TMP:
		if (size > (1u << 20))
			return -EFBIG;
		if (size <= f->snap.len) {
			f->snap.len = (size_t)size;
			if (f->snap.data)
				f->snap.data[size] = '\0';
		}
		f->snap_dirty = 1;
		return 0;
	default:
		return -EACCES;
	}
}

int engine_file_truncate(struct pfs_file *f, uint64_t size, const struct pfs_caller *who)
{
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = file_truncate(f, size);
	if (rc == 0 && f->kind == N_DOC)
		rc = packet__through_settle(f, who);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int engine_truncate(struct engine *e, const char *path, uint64_t size, const struct pfs_caller *who)
{
	struct pfs_file *f;
	int rc, flags = O_WRONLY;

	/* The registry refuses O_TRUNC-less writes only at the wrong offset;
	 * truncate by path goes through the same checks as ftruncate. */
	rc = engine_file_open(e, path, flags, 0, who, &f);
	if (rc)
		return rc;
	pthread_mutex_lock(&f->lock);
	rc = file_truncate(f, size);
	if (rc == 0 && f->kind == N_DOC)
		rc = packet__od_commit(e, f->od, who, 0, NULL);
	f->advanced = 1; /* a truncate of ctl is no trigger */
	f->wrote = 1;
	if (rc)
		f->snap_dirty = 0;
	pthread_mutex_unlock(&f->lock);
	engine_file_release(f);
	return rc;
}
