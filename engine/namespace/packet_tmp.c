/*
 * packet_tmp.c - files an editor makes in .packetfs/ to save pipeline.json
 * (sed -i, vim, any temp-file-then-rename save): kept in the daemon's
 * memory, never in the store, and applied when renamed over pipeline.json.
 *
 * Design. A file created in .packetfs/ under a name of its own is a temp
 * file: it reads, writes, truncates, chmods and touches like a small file
 * (at most PFS_TMP_MAX of them, each at most PFS_TMP_SIZE bytes, written
 * through a handle as pipeline.json is, packet_file.c). Renamed over
 * pipeline.json, its content is validated and put in force as a write of
 * pipeline.json would be (pipeline_config_set); refused, the rename fails
 * with EINVAL, the configuration and the temp file stay as they were and
 * the refusal is logged and kept in pipeline.error. Renamed over another
 * name of .packetfs/ it takes that name; elsewhere, EXDEV (mv copies).
 * pipeline.json renamed to a temp name (vim's backup by rename) gives the
 * temp file the configuration's text and leaves pipeline.json in place:
 * the configuration is never absent. Temp files vanish at unmount.
 *
 * Threads: any; the list is under e->tmp_lock, never held while the
 * pipeline is called.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "packet_int.h"

#define PFS_TMP_MAX 64

struct pfs_tmp {
	char *name;
	struct buf data;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int64_t mtime_ns;
	struct pfs_tmp *next;
};

/* The names of .packetfs/ that are no temp file's. */
static int fixed_name(const char *name)
{
	return strcmp(name, "pipeline.json") == 0 || strcmp(name, "pipeline.error") == 0 ||
	       strcmp(name, "version") == 0 || strcmp(name, "recipes") == 0 ||
	       strcmp(name, "compute-env.md") == 0;
}

/* The temp file name; e->tmp_lock held. */
static struct pfs_tmp **find_locked(struct engine *e, const char *name)
{
	struct pfs_tmp **pp;

	assert(util_mutex_held(&e->tmp_lock));
	for (pp = &e->tmps; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0)
			return pp;
	return NULL;
}

static void tmp_free(struct pfs_tmp *t)
{
	if (!t)
		return;
	free(t->name);
	buf_free(&t->data);
	free(t);
}

int packet__tmp_exists(struct engine *e, const char *name)
{
	int found;

	pthread_mutex_lock(&e->tmp_lock);
	found = find_locked(e, name) != NULL;
	pthread_mutex_unlock(&e->tmp_lock);
	return found;
}

int packet__tmp_stat(struct engine *e, const char *name, struct pfs_stat *st)
{
	struct pfs_tmp **pp;
	int rc = -ENOENT;

	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, name);
	if (pp) {
		st->mode = S_IFREG | (*pp)->mode;
		st->size = (*pp)->data.len;
		st->uid = (*pp)->uid;
		st->gid = (*pp)->gid;
		st->mtime_ns = st->ctime_ns = (*pp)->mtime_ns;
		rc = 0;
	}
	pthread_mutex_unlock(&e->tmp_lock);
	return rc;
}

int packet__tmp_create(struct engine *e, const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	struct pfs_tmp *t, *p;
	size_t n = 0;
	int rc = 0;

	if (fixed_name(name))
		return -EEXIST;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->name = strdup(name))) {
		free(t);
		return -ENOMEM;
	}
	t->mode = mode & 07777;
	t->uid = uid;
	t->gid = gid;
	t->mtime_ns = util_now_ns();
	pthread_mutex_lock(&e->tmp_lock);
	for (p = e->tmps; p; p = p->next)
		n++;
	if (find_locked(e, name))
		rc = -EEXIST;
	else if (n >= PFS_TMP_MAX)
		rc = -ENOSPC;
	if (rc == 0) {
		t->next = e->tmps;
		e->tmps = t;
	}
	pthread_mutex_unlock(&e->tmp_lock);
	if (rc)
		tmp_free(t);
	return rc;
}

int packet__tmp_read(struct engine *e, const char *name, struct buf *out)
{
	struct pfs_tmp **pp;
	int rc = -ENOENT;

	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, name);
	if (pp)
		rc = (*pp)->data.len ? buf_append(out, (*pp)->data.data, (*pp)->data.len) : 0;
	pthread_mutex_unlock(&e->tmp_lock);
	return rc;
}

int packet__tmp_store(struct engine *e, const char *name, const struct buf *data)
{
	struct pfs_tmp **pp;
	struct buf copy;
	int rc = 0;

	buf_init(&copy);
	if (data->len && buf_append(&copy, data->data, data->len) < 0)
		return -ENOMEM;
	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, name);
	if (pp) { /* (unlinked while open: what was written goes with it) */
		buf_free(&(*pp)->data);
		(*pp)->data = copy;
		(*pp)->mtime_ns = util_now_ns();
		buf_init(&copy);
	}
	pthread_mutex_unlock(&e->tmp_lock);
	buf_free(&copy);
	return rc;
}

int packet__tmp_unlink(struct engine *e, const char *name)
{
	struct pfs_tmp **pp, *t = NULL;

	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, name);
	if (pp) {
		t = *pp;
		*pp = t->next;
	}
	pthread_mutex_unlock(&e->tmp_lock);
	tmp_free(t);
	return t ? 0 : -ENOENT;
}

int packet__tmp_chmod(struct engine *e, const char *name, mode_t mode)
{
	struct pfs_tmp **pp;

	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, name);
	if (pp)
		(*pp)->mode = mode & 07777;
	pthread_mutex_unlock(&e->tmp_lock);
	return pp ? 0 : -ENOENT;
}

int packet__tmp_touch(struct engine *e, const char *name, int64_t mtime_ns)
{
	struct pfs_tmp **pp;

	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, name);
	if (pp && mtime_ns >= 0)
		(*pp)->mtime_ns = mtime_ns;
	pthread_mutex_unlock(&e->tmp_lock);
	return pp ? 0 : -ENOENT;
}

char **packet__tmp_names(struct engine *e)
{
	struct pfs_tmp *t;
	char **v = NULL;

	pthread_mutex_lock(&e->tmp_lock);
	for (t = e->tmps; t; t = t->next)
		strv_push(&v, t->name);
	pthread_mutex_unlock(&e->tmp_lock);
	return v;
}

/* Renames the temp file from over the temp name to (replacing one there). */
static int rename_tmp(struct engine *e, const char *from, const char *to, unsigned flags)
{
	struct pfs_tmp **pp, *t = NULL, *old = NULL;
	char *name = strdup(to);
	int rc = 0;

	if (!name)
		return -ENOMEM;
	pthread_mutex_lock(&e->tmp_lock);
	pp = find_locked(e, to);
	if (pp && (flags & 1u)) {
		rc = -EEXIST;
	} else if (pp && strcmp(from, to) != 0) {
		old = *pp;
		*pp = old->next;
	}
	pp = rc ? NULL : find_locked(e, from);
	if (pp) {
		t = *pp;
		free(t->name);
		t->name = name;
		name = NULL;
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	pthread_mutex_unlock(&e->tmp_lock);
	free(name);
	tmp_free(old);
	return rc;
}

/* Puts the content of the temp file name in force as pipeline.json; the
 * temp file goes when it is. */
static int apply_tmp(struct engine *e, const char *name)
{
	char err[1024] = "";
	struct buf data;
	int rc;

	buf_init(&data);
	rc = packet__tmp_read(e, name, &data);
	if (rc == 0)
		rc = pipeline_config_set(e->pl, data.data ? data.data : "", data.len, err, sizeof(err));
	if (rc == -EINVAL)
		packet__refuse(e, 0, NULL, "%s (old configuration kept; %s left as it was)",
			       err[0] ? err : "refused", name);
	else if (rc == 0)
		packet__tmp_unlink(e, name);
	if (rc == 0)
		packet__refusal_clear(e, 0, NULL);
	buf_free(&data);
	return rc;
}

int packet__tmp_rename(struct engine *e, const struct node *a, const char *from, const char *to,
		       unsigned flags)
{
	const char *src = from + strlen("/.packetfs/"), *dst;
	struct buf json;
	int rc;

	if (strncmp(to, "/.packetfs/", 11) != 0)
		return -EXDEV;
	dst = to + 11;
	if (!*dst || strchr(dst, '/'))
		return -EXDEV;
	if (a->kind == N_PFS_TMP && strcmp(dst, "pipeline.json") == 0)
		return (flags & 1u) ? -EEXIST : apply_tmp(e, src);
	if (fixed_name(dst))
		return strcmp(dst, "recipes") == 0 ? -EISDIR : -EACCES;
	if (a->kind == N_PFS_TMP)
		return rename_tmp(e, src, dst, flags);
	/* pipeline.json to a temp name: a copy, pipeline.json stays. */
	if (packet__tmp_exists(e, dst)) {
		if (flags & 1u)
			return -EEXIST;
		packet__tmp_unlink(e, dst);
	}
	rc = packet__tmp_create(e, dst, 0644, e->uid, e->gid);
	buf_init(&json);
	if (rc == 0)
		rc = pipeline_config_json(e->pl, &json);
	if (rc == 0)
		rc = packet__tmp_store(e, dst, &json);
	buf_free(&json);
	return rc;
}

void packet__tmps_free(struct engine *e)
{
	struct pfs_tmp *t;

	while ((t = e->tmps)) {
		e->tmps = t->next;
		tmp_free(t);
	}
}
