/*
 * fs_ops_dir.c - directory listings: the FUSE operations opendir, readdir,
 * readdirplus and releasedir.
 *
 * DESIGN
 *
 * Handles. fi->fh holds a struct dir_handle * for a directory. opendir
 * only checks that the path is a directory and decides whether the kernel
 * may keep the listing (fs_cache.c "Listings"); the listing is snapshotted
 * at the first readdir (and again when a handle is rewound to offset 0
 * after being read), so a kernel that answers from its cache costs no
 * listing here. readdir offsets are indices into the snapshot, "." and
 * ".." first. Which entries a readdirplus reply hands over with attributes
 * is one of the caching rules (fs_cache.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include "engine.h"
#include "fs_int.h"
#include "inode.h"

/* The inode number readdir reports for entries the table does not know. */
#define UNKNOWN_INO 0xffffffffu

struct dir_entry {
	char *name;
	struct pfs_stat st;
};

struct dir_handle {
	pthread_mutex_t lock;
	char *path;             /* constant */
	struct dir_entry *ents; /* protected by lock; "." and ".." first */
	size_t n;               /* protected by lock */
	size_t cap;             /* protected by lock */
	int loaded;             /* protected by lock; the snapshot was taken */
	int was_read;           /* protected by lock */
	int cache;              /* constant; the kernel keeps the listing */
	uint64_t seen;          /* protected by lock; fs__change_count before the
	                         * snapshot */
	struct pfs_stat self;   /* protected by lock; the directory's attributes
	                         * asked at opendir, until the first snapshot */
};

static void dir_clear(struct dir_handle *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->ents[i].name);
	d->n = 0;
}

static int dir_add(struct dir_handle *d, const char *name, const struct pfs_stat *st)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct dir_entry *v = realloc(d->ents, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		d->ents = v;
		d->cap = cap;
	}
	d->ents[d->n].name = strdup(name);
	if (d->ents[d->n].name == NULL)
		return -ENOMEM;
	d->ents[d->n].st = *st;
	d->n++;
	return 0;
}

static int collect_entry(void *arg, const char *name, const struct pfs_stat *st)
{
	return dir_add(arg, name, st);
}

/* (Re)reads the listing of d->path into the snapshot: names, types and
 * the stable flag of each entry's kind (engine_list), no attributes. The
 * first snapshot takes "." from the attributes opendir asked; a later one
 * asks again. On failure the snapshot is empty. */
static int dir_load(struct fs *fs, struct dir_handle *d)
{
	struct pfs_stat self = d->self;
	int r = 0, first = !d->was_read;

	dir_clear(d);
	d->loaded = 0;
	d->seen = fs__change_count(fs);
	if (!first)
		r = engine_getattr(fs->engine, d->path, &self);
	if (r < 0)
		return r;
	if (!S_ISDIR(self.mode))
		return -ENOTDIR;
	r = dir_add(d, ".", &self);
	if (r == 0)
		r = dir_add(d, "..", &self);
	if (r == 0)
		r = engine_list(fs->engine, d->path, collect_entry, d);
	if (r > 0)
		r = -ENOMEM;
	if (r < 0)
		dir_clear(d);
	else
		d->loaded = 1;
	return r;
}

static void dir_free(struct dir_handle *d)
{
	dir_clear(d);
	free(d->ents);
	free(d->path);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void fs__op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct dir_handle *d = calloc(1, sizeof(*d));
	struct pfs_caller who;
	int r;

	if (d == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	r = fs__path_of(fs, ino, &d->path);
	if (r == 0)
		r = engine_getattr(fs->engine, d->path, &d->self);
	if (r == 0 && !S_ISDIR(d->self.mode))
		r = -ENOTDIR;
	if (r < 0) {
		dir_free(d);
		fuse_reply_err(req, -r);
		return;
	}
	caller_of(req, &who);
	engine_dir_opened(fs->engine, d->path, &who); /* rm -rf of an item starts here */
	d->cache = fs__cache_listing(req, ino, &d->self);
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->keep_cache = d->cache ? 1 : 0;
	fi->cache_readdir = d->cache ? 1 : 0;
	if (fuse_reply_open(req, fi) != 0)
		dir_free(d);
}

/* The inode number readdir shows for entry i of d. */
static uint64_t entry_ino(struct fs *fs, struct dir_handle *d, size_t i, fuse_ino_t self)
{
	char *path = NULL;
	uint64_t ino = 0;

	if (i == 0)
		return self;
	if (i == 1 ? fs__parent_of(d->path, &path) : fs__join(d->path, d->ents[i].name, &path))
		return UNKNOWN_INO;
	ino = inode_peek(fs->inodes, path);
	free(path);
	return ino ? ino : UNKNOWN_INO;
}

/*
 * The readdirplus record of entry de of directory dir, at most rem bytes
 * at p (its size returned; more than rem: nothing was added). An entry of
 * a stable kind is stat-ed now (the snapshot has no attributes, and the
 * kernel keeps them) and handed over as a lookup (*eino, 0 otherwise);
 * others go without attributes (ino 0), as "." and "..": the kernel looks
 * them up when they are used, and asks their attributes each time anyway.
 */
static size_t dirent_plus(fuse_req_t req, const char *dir, const struct dir_entry *de,
			  uint64_t dino, char *p, size_t rem, off_t next, uint64_t *eino, int *err)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct pfs_stat st;
	uint64_t seen = fs__change_count(fs);
	char *path;
	size_t len;

	*eino = 0;
	*err = 0;
	memset(&e, 0, sizeof(e));
	e.attr.st_ino = dino;
	e.attr.st_mode = de->st.mode;
	if (!de->st.stable)
		return fuse_add_direntry_plus(req, p, rem, de->name, &e, next);
	*err = fs__join(dir, de->name, &path);
	if (*err < 0)
		return 0;
	if (engine_getattr(fs->engine, path, &st) < 0) {
		/* Gone since the listing: the lookup the kernel makes says so. */
		free(path);
		return fuse_add_direntry_plus(req, p, rem, de->name, &e, next);
	}
	*err = inode_ref(fs->inodes, path, st.file_id, eino);
	free(path);
	if (*err < 0)
		return 0;
	fs__fill_entry(req, *eino, &st, seen, &e);
	len = fuse_add_direntry_plus(req, p, rem, de->name, &e, next);
	if (len > rem) {
		inode_forget(fs->inodes, *eino, 1);
		*eino = 0;
	}
	return len;
}

/*
 * readdir and readdirplus. For readdirplus every entry of a stable kind is
 * a lookup (dirent_plus): it adds to the lookup count only when the entry
 * made it into the reply, and all of them are taken back when the reply
 * fails.
 */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, int plus)
{
	struct fs *fs = fs_of(req);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	uint64_t *refs = NULL;
	size_t nrefs = 0, rem = size, i;
	char *buf = malloc(size ? size : 1), *p = buf;
	int r = 0;

	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&d->lock);
	/* The kernel filled its cache from the replies before: a change since
	 * the snapshot may have found nothing to drop (fs_cache.c "Listings"). */
	if (d->cache && d->loaded && fs__change_count(fs) != d->seen)
		fs__drop_listing(fs, ino);
	if (!d->loaded || (off == 0 && d->was_read))
		r = dir_load(fs, d);
	d->was_read = 1;
	if (r == 0 && plus && (size_t)off < d->n) {
		refs = malloc((d->n - (size_t)off) * sizeof(*refs));
		if (refs == NULL)
			r = -ENOMEM;
	}
	for (i = (size_t)off; r == 0 && i < d->n; i++) {
		struct dir_entry *de = &d->ents[i];
		size_t len;

		if (!plus) {
			struct stat st;

			memset(&st, 0, sizeof(st));
			st.st_ino = entry_ino(fs, d, i, ino);
			st.st_mode = de->st.mode;
			len = fuse_add_direntry(req, p, rem, de->name, &st, (off_t)(i + 1));
		} else if (i < 2) {
			struct fuse_entry_param e;

			/* ino 0: attributes and no lookup, for "." and "..". */
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = entry_ino(fs, d, i, ino);
			e.attr.st_mode = de->st.mode;
			len = fuse_add_direntry_plus(req, p, rem, de->name, &e, (off_t)(i + 1));
		} else {
			uint64_t eino;

			len = dirent_plus(req, d->path, de, entry_ino(fs, d, i, ino), p, rem,
					  (off_t)(i + 1), &eino, &r);
			if (r < 0)
				break;
			if (eino)
				refs[nrefs++] = eino;
		}
		if (len > rem)
			break;
		p += len;
		rem -= len;
	}
	pthread_mutex_unlock(&d->lock);
	/* An entry that failed after others were added ends the listing
	 * early; the next call reports the error. */
	if (r < 0 && p == buf) {
		fuse_reply_err(req, -r);
	} else if (fuse_reply_buf(req, buf, size - rem) != 0) {
		for (i = 0; i < nrefs; i++)
			inode_forget(fs->inodes, refs[i], 1);
	}
	free(refs);
	free(buf);
}

void fs__op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 0);
}

void fs__op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 1);
}

void fs__op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;

	/* A reader that stopped before the end sent no last readdir. */
	if (d->cache && d->loaded && fs__change_count(fs_of(req)) != d->seen)
		fs__drop_listing(fs_of(req), ino);
	dir_free(d);
	fuse_reply_err(req, 0);
}
