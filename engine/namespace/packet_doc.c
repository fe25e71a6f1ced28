/*
 * packet_doc.c - open documents: the content a document's handles share
 * while it is open, loaded from the store, and committed as a revision
 * (packet_int.h: packet__od_*). Who a change is made by is packet_who.c's. The changes
 * to the namespace (mkdir, rmdir, unlink, rename) are packet_ns.c's.
 * engine.h documents the public functions, packet_int.h the ones the
 * other files of the namespace use.
 *
 * Design. Documents live in the store; while a document is open its
 * content is held once in a struct open_doc shared by every handle (so
 * readers see writers at once, and concurrent appenders do not lose lines)
 * and committed as one new revision when a handle is flushed after a
 * change. Renames and unlinks hold ns_lock exclusively, commits shared, so
 * a path cannot move under a commit; open documents follow a rename, and
 * the ones replaced or unlinked go stale (as on a local disk).
 *
 * Appends. A document opened only by handles that write (O_WRONLY: `>>`,
 * a log) is not read from the store: it is partial, holding only the bytes
 * written at its end, and a commit stores them as an append
 * (store_doc_append), so an append costs what its bytes cost, not what the
 * document's do. The first thing that needs the bytes before them (a
 * read, a write inside the document, a truncate other than to 0) reads
 * them (packet__od_load), from the revision the document was opened at,
 * which holds them whatever renames, unlinks or commits of other paths
 * came since. An open only to read (O_RDONLY) is partial the same way
 * until its first read: a handle opened to chmod, lock or look at a file
 * (rsync's fchmod, a test of readability) reads no content.
 *
 * Invariants: an open_doc is in e->docs while it has handles and is not
 * unlinked; its rel is kept current across renames. Nothing is committed
 * for a handle that wrote nothing.
 *
 * Times (engine.h): the store keeps them. An open document mirrors its
 * mtime and atime; a commit stores the content's mtime as both, so a
 * utimens is applied after pending content is committed. Every change that
 * adds or removes an entry moves its directory's mtime and ctime in the
 * store, a document created open when it is created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "packet_int.h"

/* ---- open documents ---- */

/* The open document at (item, rel) or NULL; files_lock held. */
struct open_doc *packet__od_find_locked(struct engine *e, int64_t item, const char *rel)
{
	struct open_doc *d;

	assert(util_mutex_held(&e->files_lock));
	for (d = e->docs; d; d = d->next)
		if (d->item_id == item && strcmp(d->rel, rel) == 0)
			return d;
	return NULL;
}

/* Fills m from an open document's in-memory state; files_lock held. */
void packet__od_meta(struct engine *e, struct open_doc *d, struct doc_meta *m)
{
	struct doc_meta stored;
	int clean, stored_ok;

	assert(util_mutex_held(&e->files_lock));
	pthread_mutex_lock(&d->lock);
	m->is_dir = 0;
	m->type = S_IFREG;
	m->rdev = 0;
	m->size = packet__od_size(d);
	m->mode = d->mode;
	m->uid = d->uid;
	m->gid = d->gid;
	m->mtime_ns = d->mtime_ns;
	m->ctime_ns = d->mtime_ns;
	m->atime_ns = d->dirty ? d->mtime_ns : d->atime_ns;
	m->link = 0;
	m->nlink = 1;
	clean = !d->dirty && d->stored && !d->unlinked;
	stored_ok = d->stored && !d->unlinked;
	pthread_mutex_unlock(&d->lock);
	if (!stored_ok || store_doc_stat(e->store, d->item_id, d->rel, &stored) != 0 ||
	    stored.is_dir)
		return;
	m->link = stored.link;
	m->nlink = stored.nlink;
	/* Nothing pending: the store's row is the document, and its ctime
	 * (moved by each commit, chmod and utimens) is the one a stat of the
	 * closed document shows. */
	if (clean)
		m->ctime_ns = stored.ctime_ns;
}

/* Makes d the stored document: its content the len bytes at data (d takes
 * them; its old content is freed), its attributes those of m. */
static void od_take_stored(struct open_doc *d, const struct doc_meta *m, char *data, size_t len)
{
	buf_free(&d->content);
	if (data) {
		d->content.data = data;
		d->content.len = len;
		d->content.cap = len + 1;
	}
	d->mode = m->mode;
	d->uid = m->uid;
	d->gid = m->gid;
	d->mtime_ns = m->mtime_ns;
	d->atime_ns = m->atime_ns;
	d->stored = 1;
	d->partial = 0;
}

uint64_t packet__od_size(struct open_doc *d)
{
	assert(util_mutex_held(&d->lock));
	return (d->partial ? d->stored_len : 0) + d->content.len;
}

/* Makes content, which holds the bytes after the first stored_len of the
 * revision stored_rev while *partial, the whole document: reads that
 * revision before them and clears *partial. 0 or a negative errno
 * (content unchanged). */
static int load_bytes(struct engine *e, struct buf *content, int *partial,
		      uint64_t stored_len, int64_t stored_rev)
{
	char *data = NULL, *grown;
	size_t len = 0;
	int rc;

	if (!*partial)
		return 0;
	if (stored_len == 0) { /* nothing to read (a probe's revision may be gone) */
		*partial = 0;
		return 0;
	}
	rc = store_rev_read_id(e->store, stored_rev, &data, &len);
	if (rc == 0 && len != stored_len)
		rc = -EIO; /* not the revision it was opened on */
	if (rc == 0 && content->len) {
		grown = realloc(data, len + content->len + 1);
		if (grown) {
			data = grown;
			memcpy(data + len, content->data, content->len + 1);
			len += content->len;
		} else {
			rc = -ENOMEM;
		}
	}
	if (rc) {
		free(data);
		return rc == -ENOENT ? -EIO : rc;
	}
	buf_free(content);
	content->data = data;
	content->len = len;
	content->cap = len + 1;
	*partial = 0;
	return 0;
}

int packet__od_load(struct engine *e, struct open_doc *d)
{
	assert(util_mutex_held(&d->lock));
	return load_bytes(e, &d->content, &d->partial, d->stored_len, d->stored_rev);
}

/* ---- truncation ---- */

/*
 * Truncation. An O_TRUNC open empties the document while the kernel
 * serves the opener's OPEN request; the kernel sets the file's size to 0
 * only once the reply has reached the opener. A page-cache read of the
 * same file by another process, sent at the old size before that and
 * answered after the truncation, comes back short. The kernel then lowers
 * the file's size to the end of that reply, unless the file's attribute
 * version moved meanwhile (Linux fs/fuse/file.c, fuse_short_read), as it
 * does when it takes an attribute reply made before the truncation (the
 * old size): then it keeps the old size and the read's pages zero-filled
 * and up to date, and that reader and every later one that finds the
 * pages reads zeros where the old version was. So a truncating open keeps
 * what the document held (struct od_before), and the other handles read
 * that until the truncating handle makes a request: the kernel sends one
 * only after the open has returned, so after the size became 0. A read
 * at the old size then gets the old bytes, whole, as a read that reached
 * a local disk before the truncation does. Any other change of the
 * document ends it too, and attributes are the emptied document's at once.
 *
 * A truncate(2) or ftruncate(2) that shrinks the document (a SETATTR) is
 * the same race, wider: the kernel keeps the size it had while the
 * request is under way (FUSE_I_SIZE_UNSTABLE, fs/fuse/dir.c
 * fuse_do_setattr), which the commit of a truncate by path spans, so a
 * short read answered meanwhile is taken at the old size whatever the
 * attribute version. It keeps what the document held too
 * (packet__od_cut), read by every handle, its own included, with one
 * bound: once the kernel has set the new size (cut) it reads no page past
 * the one holding it, so a read of the old bytes then gets the new ones,
 * which are the same below cut; and it drops the pages it held past cut,
 * but when cut is inside a page that page stays, and old bytes read into
 * it after that would show past the end when the file grows. So when cut
 * is not on a page boundary, a read that starts below cut gets the new
 * content: such a read sent before the new size was set can still come
 * back short, the kernel giving no way to tell it from one sent after. A
 * truncate to 0, or to a page boundary (`truncate -s 0`, a log's
 * rotation, `truncate -s 1M`), keeps no read short. The kernel sends a
 * write or another truncate of the file only once the truncation has
 * returned (it holds the inode's lock), and the truncation waits for the
 * reads on the pages it drops, so a change ends the keeping; otherwise it
 * lasts until the document's last close.
 */
struct od_before {
	const struct pfs_file *owner; /* the O_TRUNC open's handle; NULL for a truncate */
	uint64_t cut;         /* the size the truncation left (before_reads) */
	struct buf content;   /* as struct open_doc's fields of those names */
	int partial;
	uint64_t stored_len;
	int64_t stored_rev;
};

static void before_free(struct od_before *b)
{
	if (b) {
		buf_free(&b->content);
		free(b);
	}
}

/* Whether the read at off of handle f reads what a truncation kept, b
 * (may be NULL): see Truncation. An O_DIRECT handle's reads fill no page
 * and are not bounded by the size the kernel holds: they read the
 * content. */
static int before_reads(const struct od_before *b, const struct pfs_file *f, uint64_t off)
{
	return b && b->owner != f && !(f->flags & O_DIRECT) &&
	       (off >= b->cut || b->cut % (uint64_t)sysconf(_SC_PAGESIZE) == 0);
}

/* Drops what a truncation of d kept; d->lock held. */
static void before_end(struct open_doc *d)
{
	assert(util_mutex_held(&d->lock));
	before_free(d->before);
	d->before = NULL;
}

/* Empties d's content, pending as a change; d->lock held. */
static void od_empty(struct open_doc *d)
{
	assert(util_mutex_held(&d->lock));
	d->partial = 0;
	d->content.len = 0;
	if (d->content.data)
		d->content.data[0] = '\0';
	d->dirty = 1;
	d->mtime_ns = util_now_ns();
}

/* Moves d's content and its partial state into a new d->before, kept for
 * the reads of the handles other than owner (before_reads), and leaves
 * d's content empty; d->lock held, nothing kept before. 1 when kept; 0
 * without the memory, d then as it was. */
static int before_keep(struct open_doc *d, const struct pfs_file *owner, uint64_t cut)
{
	struct od_before *b = calloc(1, sizeof(*b));

	assert(util_mutex_held(&d->lock));
	assert(d->before == NULL);
	if (!b)
		return 0;
	b->owner = owner;
	b->cut = cut;
	b->content = d->content;
	b->partial = d->partial;
	b->stored_len = d->stored_len;
	b->stored_rev = d->stored_rev;
	buf_init(&d->content);
	d->partial = 0;
	d->before = b;
	return 1;
}

void packet__od_trunc(struct open_doc *d, const struct pfs_file *owner)
{
	assert(util_mutex_held(&d->lock));
	before_end(d);
	if (packet__od_size(d) == 0)
		return;
	(void)before_keep(d, owner, 0);
	od_empty(d);
}

int packet__od_cut(struct engine *e, struct open_doc *d, uint64_t size)
{
	struct buf head;
	int rc;

	assert(util_mutex_held(&d->lock));
	assert(size < packet__od_size(d));
	if (size == 0) {
		packet__od_trunc(d, NULL);
		return 0;
	}
	before_end(d);
	rc = packet__od_load(e, d);
	if (rc)
		return rc;
	buf_init(&head);
	if (buf_append(&head, d->content.data, (size_t)size) != 0 ||
	    !before_keep(d, NULL, size)) {
		buf_free(&head);
		return packet__od_resize(e, d, size); /* cut in place, nothing kept */
	}
	d->content = head;
	d->dirty = 1;
	d->mtime_ns = util_now_ns();
	return 0;
}

void packet__od_request(struct open_doc *d, const struct pfs_file *f, int writes)
{
	pthread_mutex_lock(&d->lock);
	if (d->before && (writes || d->before->owner == f))
		before_end(d);
	pthread_mutex_unlock(&d->lock);
}

int packet__od_bytes(struct engine *e, struct open_doc *d, const struct pfs_file *f,
		     uint64_t off, const struct buf **out)
{
	struct od_before *b = d->before;
	int rc;

	assert(util_mutex_held(&d->lock));
	if (before_reads(b, f, off)) {
		rc = load_bytes(e, &b->content, &b->partial, b->stored_len, b->stored_rev);
		*out = &b->content;
		return rc;
	}
	if (b && b->owner == f)
		before_end(d);
	rc = packet__od_load(e, d);
	*out = &d->content;
	return rc;
}

static void od_destroy(struct open_doc *d)
{
	before_free(d->before);
	buf_free(&d->content);
	free(d->rel);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/*
 * Takes a reference on the open document (item, rel). An open one is
 * shared; otherwise it is loaded from the store, or made empty when create
 * and the store has none (excl: -EEXIST when it exists anywhere). The
 * store is read without files_lock, so the load is checked afterwards
 * against the revision then current and repeated if a commit slipped in.
 */
int packet__od_get(struct engine *e, int64_t item, const char *rel, int create, int excl,
		   int lazy, mode_t mode, uid_t uid, gid_t gid, const struct doc_meta *stored,
		   int stored_rc, struct open_doc **out)
{
	struct open_doc *d, *nd;
	struct doc_meta m, now;
	int rc, tries;

	for (tries = 0; tries < 8; tries++) {
		pthread_mutex_lock(&e->files_lock);
		d = packet__od_find_locked(e, item, rel);
		if (d && !excl)
			d->refs++;
		pthread_mutex_unlock(&e->files_lock);
		if (d) {
			if (excl)
				return -EEXIST;
			if (create) {
				/* Made again: it resolves by name again (packet.c). */
				pthread_mutex_lock(&d->lock);
				d->commit_failed = 0;
				pthread_mutex_unlock(&d->lock);
			}
			*out = d;
			return 0;
		}
		nd = calloc(1, sizeof(*nd));
		if (!nd || !(nd->rel = strdup(rel))) {
			free(nd);
			return -ENOMEM;
		}
		pthread_mutex_init(&nd->lock, NULL);
		nd->item_id = item;
		nd->refs = 1;
		if (stored && tries == 0) {
			rc = stored_rc;
			if (rc == 0)
				m = *stored;
		} else {
			rc = store_doc_stat(e->store, item, rel, &m);
		}
		if (rc == 0 && m.is_dir)
			rc = -EISDIR;
		else if (rc == 0 && excl)
			rc = -EEXIST;
		if (rc == -ENOENT && create) {
			nd->mode = mode & 07777;
			nd->uid = uid;
			nd->gid = gid;
			nd->dirty = 1;
			nd->mtime_ns = nd->atime_ns = nd->created_ns = util_now_ns();
			m.rev_id = 0;
			rc = 0;
		} else if (rc == 0 && lazy) {
			od_take_stored(nd, &m, NULL, 0);
			nd->partial = 1;
			nd->stored_len = m.size;
			nd->stored_rev = m.rev_id;
		} else if (rc == 0) {
			char *data = NULL;
			size_t len = 0;

			rc = store_doc_read(e->store, item, rel, &data, &len);
			if (rc == 0)
				od_take_stored(nd, &m, data, len);
		}
		if (rc) {
			od_destroy(nd);
			return rc;
		}
		/* Insert unless another thread opened it, or a commit changed the
		 * document, meanwhile. */
		pthread_mutex_lock(&e->files_lock);
		d = packet__od_find_locked(e, item, rel);
		if (!d) {
			if (store_doc_stat(e->store, item, rel, &now))
				now.rev_id = 0;
			if (now.rev_id == m.rev_id) {
				nd->next = e->docs;
				e->docs = nd;
				pthread_mutex_unlock(&e->files_lock);
				/* A new entry is listed from now on: its directory
				 * shows created_ns as its times until the first
				 * commit stores them (node_stat, packet.c). */
				*out = nd;
				return 0;
			}
		}
		pthread_mutex_unlock(&e->files_lock);
		od_destroy(nd);
	}
	return -EAGAIN;
}

void packet__od_unlink_locked(struct engine *e, struct open_doc *d)
{
	struct open_doc **pp;

	for (pp = &e->docs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	d->next = NULL;
	d->unlinked = 1;
	/* Still open: its handles may read what it never read (or what an
	 * O_TRUNC open kept of it, "Truncation"), and the unlink
	 * that follows may remove the revision holding it (a backup's copy,
	 * store_save.c). Read it now; a failure leaves it to the first read. */
	if (d->refs > 0) {
		pthread_mutex_lock(&d->lock);
		(void)packet__od_load(e, d);
		if (d->before)
			(void)load_bytes(e, &d->before->content, &d->before->partial,
					 d->before->stored_len, d->before->stored_rev);
		pthread_mutex_unlock(&d->lock);
	}
}

void packet__od_put(struct engine *e, struct open_doc *d)
{
	int last;

	pthread_mutex_lock(&e->files_lock);
	assert(d->refs > 0);
	last = --d->refs == 0;
	if (last && !d->unlinked)
		packet__od_unlink_locked(e, d);
	pthread_mutex_unlock(&e->files_lock);
	if (last)
		od_destroy(d);
}

/* After a commit of d (path rel) that no handle able to read it holds:
 * drops the content, which is the stored revision, and keeps d partial
 * on it, so that the next handle's writes at its end are committed as an
 * append (a `>>` that opened before the creating handle's release, a
 * writer that keeps its handle). rev is the revision number the commit
 * made, or 0 for an amend of the current one; when the store's current
 * revision is no longer that (another name of the file committed
 * meanwhile) d stays as it is. With d->lock held. */
static void od_unload(struct engine *e, struct open_doc *d, const char *rel, int rev)
{
	struct doc_meta m;

	assert(util_mutex_held(&d->lock));
	if (store_doc_stat(e->store, d->item_id, rel, &m) != 0 || m.is_dir ||
	    (rev && m.rev != rev) || m.size != d->content.len)
		return;
	buf_free(&d->content);
	d->partial = 1;
	d->stored_len = m.size;
	d->stored_rev = m.rev_id;
}

/*
 * Commits a changed open document. amend (a revision id, or 0) names a
 * revision this handle committed only to make an O_TRUNC or a create
 * durable at a close before any write: while it is still the current one
 * its content is replaced, so a shell's `echo x > f` leaves one revision.
 * *grow (grow may be NULL; *grow 0: none yet) names the revision a
 * write-through handle's earlier writes committed: while it is still the
 * current one it takes this commit's bytes in place (store_doc_grow, or
 * an amend of its whole content when d holds all of it), so that the
 * handle's writes leave one revision. *grow and *rev_id (either may be
 * NULL) get the current revision id afterwards. Holds ns_lock shared, so
 * a rename or unlink cannot move the path meanwhile.
 */
static int od_commit(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
		     int64_t amend, int64_t *grow, int64_t *rev_id)
{
	struct doc_meta m;
	struct who_buf wb;
	char *rel;
	int rc = 0, unlinked, dirty, readers, rev = 0;

	/* Nothing pending and nothing asked (a handle that only read, a
	 * second flush): no commit, and no caller to look up. A write that
	 * comes after this look is committed by its own handle's flush. */
	pthread_mutex_lock(&d->lock);
	dirty = d->dirty;
	pthread_mutex_unlock(&d->lock);
	if (!dirty && !rev_id)
		return 0;
	packet__who_fill(e, c, &wb);
	pthread_rwlock_rdlock(&e->ns_lock);
	/* files_lock before d->lock never nests the other way (see packet__od_meta). */
	pthread_mutex_lock(&e->files_lock);
	unlinked = d->unlinked;
	readers = d->readers;
	rel = strdup(d->rel);
	pthread_mutex_unlock(&e->files_lock);
	pthread_mutex_lock(&d->lock);
	if (!rel) {
		rc = -ENOMEM;
	} else if (d->dirty && !unlinked && d->partial && amend) {
		/* An amend replaces the whole content (a create whose name another
		 * handle's write made partial meanwhile). */
		rc = packet__od_load(e, d);
	} else if (d->dirty && !unlinked && d->partial) {
		/* Only bytes after the stored ones: an append, unless the store's
		 * document is no longer one to append to. */
		rc = -ESTALE;
		if (d->content.len && grow && *grow)
			rc = store_doc_grow(e->store, d->item_id, rel, *grow, d->content.data,
					    d->content.len, d->mtime_ns, &d->stored_len);
		if (d->content.len && rc == -ESTALE)
			rc = store_doc_append(e->store, d->item_id, rel, d->content.data,
					      d->content.len, d->mode, d->mtime_ns, &wb.w,
					      &d->stored_rev, &d->stored_len);
		if (rc == 0) {
			d->content.len = 0;
			d->content.data[0] = '\0';
			d->dirty = 0;
			d->atime_ns = d->mtime_ns;
		} else if (rc == -ESTALE) {
			rc = packet__od_load(e, d);
		}
		d->commit_failed = rc != 0;
	}
	if (rc == 0 && rel && d->dirty && !unlinked && !d->partial) {
		const char *data = d->content.data ? d->content.data : "";

		if (grow && *grow)
			amend = *grow;
		rc = amend ? store_doc_amend(e->store, d->item_id, rel, amend, data, d->content.len,
					     d->mode, d->mtime_ns)
			   : -ESTALE;
		if (rc == -ESTALE)
			rc = store_doc_write_owned(e->store, d->item_id, rel, data, d->content.len,
						   d->mode, d->mtime_ns, d->stored ? "write" : "create",
						   &wb.w, d->uid, d->gid, &rev);
		if (rc == 0) {
			d->dirty = 0;
			d->stored = 1;
			d->atime_ns = d->mtime_ns;
			if (!readers)
				od_unload(e, d, rel, rev);
		}
		d->commit_failed = rc != 0;
	}
	if (rc == 0 && grow && rel && d->partial)
		*grow = d->stored_rev;
	else if (rc == 0 && grow && rel)
		*grow = store_doc_stat(e->store, d->item_id, rel, &m) == 0 ? m.rev_id : 0;
	if (rc == 0 && rev_id && rel)
		*rev_id = store_doc_stat(e->store, d->item_id, rel, &m) == 0 ? m.rev_id : 0;
	pthread_mutex_unlock(&d->lock);
	pthread_rwlock_unlock(&e->ns_lock);
	free(rel);
	return rc;
}

int packet__od_commit(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
		      int64_t amend, int64_t *rev_id)
{
	return od_commit(e, d, c, amend, NULL, rev_id);
}

int packet__od_commit_grow(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
			   int64_t *grow)
{
	return od_commit(e, d, c, 0, grow, NULL);
}

uint64_t packet__max_doc(struct engine *e)
{
	return (uint64_t)pipeline_config_get(e->pl)->max_doc_size;
}

/* Resizes an open document's content (zero-filling growth). Lock held. */
int packet__od_resize(struct engine *e, struct open_doc *d, uint64_t size)
{
	int rc;

	assert(util_mutex_held(&d->lock));
	if (size == packet__od_size(d))
		return 0;
	before_end(d);
	if (d->partial && size == 0) {
		od_empty(d); /* what was never read is not needed */
		return 0;
	}
	rc = packet__od_load(e, d);
	if (rc)
		return rc;
	if (size > d->content.len) {
		size_t grow = (size_t)(size - d->content.len);
		char *z = calloc(1, grow ? grow : 1);

		if (!z)
			return -ENOMEM;
		rc = buf_append(&d->content, z, grow);
		free(z);
		if (rc)
			return rc;
	} else if (size < d->content.len) {
		d->content.len = (size_t)size;
		d->content.data[size] = '\0';
	} else {
		return 0;
	}
	d->dirty = 1;
	d->mtime_ns = util_now_ns();
	return 0;
}

int packet__od_commit_path(struct engine *e, int64_t item, const char *rel,
			   const struct pfs_caller *who)
{
	struct open_doc *d;
	int rc = 0;

	pthread_mutex_lock(&e->files_lock);
	d = packet__od_find_locked(e, item, rel);
	if (d)
		d->refs++;
	pthread_mutex_unlock(&e->files_lock);
	if (d) {
		rc = packet__od_commit(e, d, who, 0, NULL);
		packet__od_put(e, d);
	}
	return rc;
}

void engine_doc_refresh(struct engine *e, int64_t item_id, const char *path)
{
	struct open_doc *d;
	struct doc_meta m;
	char *data = NULL;
	size_t len = 0;

	pthread_mutex_lock(&e->files_lock);
	d = packet__od_find_locked(e, item_id, path);
	if (d) {
		pthread_mutex_lock(&d->lock);
		if (d->dirty || store_doc_stat(e->store, item_id, path, &m) != 0) {
			/* pending content is committed over the change */
		} else {
			before_end(d); /* the engine's change is what everyone reads */
			if (d->partial) {
				od_take_stored(d, &m, NULL, 0); /* what was not read stays unread */
				d->partial = 1;
				d->stored_len = m.size;
				d->stored_rev = m.rev_id;
			} else if (store_doc_read(e->store, item_id, path, &data, &len) == 0) {
				od_take_stored(d, &m, data, len);
			}
		}
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&e->files_lock);
}
