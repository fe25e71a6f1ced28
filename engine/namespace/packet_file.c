/*
 * packet_file.c - open files of the packet namespace: documents (through
 * their shared open_doc, packet_doc.c), views, logs, the trigger file ctl,
 * appends to validation/registry.jsonl and edits of
 * .packetfs/pipeline.json. engine.h documents the public functions.
 *
 * Design. A struct pfs_file is one handle. Views are read from a snapshot
 * rendered at open, except the append-only ones (events, registry.jsonl,
 * logs), which are read live so that tail -f sees them grow, and
 * validation/record, whose answer is rendered again at every read at
 * offset 0 (record.c); a log sealed
 * when it is opened never changes again, and goes through the page cache
 * (engine_file_immutable). A document
 * handle commits its open_doc at flush; ctl hands what is written to it to
 * ctl.c, which applies its lines, and validation/record to record.c;
 * registry.jsonl (packet_append.c) stores only whole, checked lines;
 * pipeline.json is replaced whole when a changed handle is flushed.
 *
 * Invariants: nothing is committed for a handle that wrote nothing, except
 * the emptying or creation of a document at open, made durable at its
 * first close (see packet__od_commit). registry.jsonl never shrinks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "packet_int.h"

/* Rendered views whose snapshot a read at offset 0 takes again, so that a
 * reader that polls, seeks back and reads sees the new version. */
static int resnapshots(enum kind k)
{
	return k == N_STATUS || k == N_STATUS_JSON || k == N_EVIDENCE || k == N_JUNIT || k == N_DIFF ||
	       k == N_SCOPE || k == N_MEASUREMENTS ||
	       k == N_CTL || k == N_RECORD || k == N_PIPELINE_ERROR || k == N_REGISTRY_ERROR ||
	       k == N_REPORT || k == N_INDEX || k == N_COMPUTE_ENV || k == N_ITEM_COMPUTE_ENV;
}

/* ---- open files ---- */

static int wants_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

/* Whether d's last commit failed (a full disk), so that what it holds is
 * still to be stored. Takes d->lock. */
static int od_failed(struct open_doc *d)
{
	int failed;

	pthread_mutex_lock(&d->lock);
	failed = d->commit_failed;
	pthread_mutex_unlock(&d->lock);
	return failed;
}

int packet__od_quiet(struct open_doc *d)
{
	int clean;

	pthread_mutex_lock(&d->lock);
	clean = !d->dirty && d->stored && !d->unlinked && !d->commit_failed;
	pthread_mutex_unlock(&d->lock);
	return clean && d->writers == 0;
}

/* Drops the reference on d of a handle opened with flags, its count as a
 * writer (once what it wrote is committed) and as a reader. */
static void od_release(struct engine *e, struct open_doc *d, int flags)
{
	pthread_mutex_lock(&e->files_lock);
	if (wants_write(flags)) {
		assert(d->writers > 0);
		d->writers--;
	}
	if ((flags & O_ACCMODE) != O_WRONLY) {
		assert(d->readers > 0);
		d->readers--;
	}
	pthread_mutex_unlock(&e->files_lock);
	packet__od_put(e, d);
}

int engine_file_open(struct engine *e, const char *path, int flags, mode_t mode,
		     const struct pfs_caller *who, struct pfs_file **out)
{
	struct pfs_file *f;
	struct node n;
	int rc, creating = 0, wr = wants_write(flags);
	/* Before the item is read: a release between that read and the
	 * settle below applied an advance the read missed. */
	uint64_t paid = packet__ctl_paid_count(e);

	rc = packet__resolve(e, path, &n);
	if (rc == -ENOENT && (flags & O_CREAT)) {
		char rel[PATH_MAX];
		const char *name;
		struct node p;

		rc = packet__resolve_parent(e, path, &name, &p);
		if (rc)
			return rc;
		if (p.kind == N_PFS_DIR && !e->readonly) { /* an editor's temp file (packet_tmp.c) */
			packet__node_clear(&p);
			rc = packet__tmp_create(e, name, mode, who ? who->uid : e->uid,
						who ? who->gid : e->gid);
			return rc ? rc : engine_file_open(e, path, flags & ~O_CREAT, mode, who, out);
		}
		rc = packet__doc_parent(&p, name, rel, sizeof(rel));
		if (rc == 0 && e->readonly)
			rc = -EROFS;
		if (rc) {
			packet__node_clear(&p);
			return rc;
		}
		memset(&n, 0, sizeof(n));
		n.doc.mode = mode & 07777;
		packet__new_owner(e, &p, who, 0, &n.doc.mode, &n.doc.uid, &n.doc.gid);
		n.kind = N_DOC;
		n.has_item = 1;
		n.item = p.item; /* moves ownership, or the reference */
		n.item_ref = p.item_ref;
		p.has_item = 0;
		p.item_ref = NULL;
		snprintf(n.rel, sizeof(n.rel), "%s", rel);
		creating = 1;
	} else if (rc) {
		return rc;
	} else if ((flags & O_CREAT) && (flags & O_EXCL)) {
		packet__node_clear(&n);
		return -EEXIST;
	} else if ((n.kind == N_CTL || n.kind == N_STATUS || n.kind == N_STATUS_JSON) &&
		   packet__ctl_settle(e, n.item.id, paid)) {
		/* An empty write's advance, whose close returned, came first. */
		packet__node_clear(&n);
		rc = packet__resolve(e, path, &n);
		if (rc)
			return rc;
	}
	if (packet__is_dir_kind(n.kind)) {
		rc = -EISDIR;
		goto fail_node;
	}
	/* The kernel follows symlinks and opens FIFOs, sockets and devices
	 * itself: a request for one here did not come through it. */
	if (n.kind == N_DOC && n.doc.type && !S_ISREG(n.doc.type)) {
		rc = S_ISLNK(n.doc.type) ? -ELOOP : -ENXIO;
		goto fail_node;
	}
	if (wr && (n.archived || e->readonly)) {
		rc = e->readonly ? -EROFS : -EACCES;
		goto fail_node;
	}
	if (wr && !(packet__kinds[n.kind].flags & KIND_WRITE)) {
		rc = -EACCES;
		goto fail_node;
	}
	if (n.kind == N_REGISTRY && (flags & O_TRUNC) && packet__registry_size(e, n.item.id) > 0) {
		rc = -EPERM;
		goto fail_node;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		rc = -ENOMEM;
		goto fail_node;
	}
	f->e = e;
	f->kind = n.kind;
	f->flags = flags;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		rc = -ENOMEM;
		goto fail_node;
	}
	pthread_mutex_init(&f->lock, NULL);
	if (who)
		f->opener = *who;
	else
		f->opener.uid = getuid(), f->opener.gid = getgid();
	if (n.has_item) {
		f->item_id = n.item.id;
		snprintf(f->item_name, sizeof(f->item_name), "%s", n.item.name);
	}
	switch (n.kind) {
	case N_DOC:
		/* A handle that only writes or only reads does not read the
		 * document at its open (appends commit their bytes alone, a read
		 * loads them first; packet_doc.c): an open to chmod, lock or
		 * check a file reads nothing. */
		rc = packet__od_get(e, n.item.id, n.rel, creating, creating && (flags & O_EXCL),
				    (flags & O_ACCMODE) != O_RDWR, n.doc.mode, n.doc.uid,
				    n.doc.gid, creating || n.from_store ? &n.doc : NULL,
				    creating ? -ENOENT : 0, &f->od);
		f->trunc_pending = creating;
		f->through = rc == 0 && packet__through_wanted(e, f, creating, who);
		/* Counted before anything changes it (O_TRUNC): from here on
		 * its attributes are not stable (packet__od_quiet). */
		if (rc == 0) {
			pthread_mutex_lock(&e->files_lock);
			f->od->writers += wr;
			f->od->readers += (flags & O_ACCMODE) != O_WRONLY;
			pthread_mutex_unlock(&e->files_lock);
		}
		if (rc == 0 && (flags & O_TRUNC) && wr) {
			pthread_mutex_lock(&f->od->lock);
			f->trunc_pending |= packet__od_size(f->od) > 0;
			packet__od_trunc(f->od, f);
			pthread_mutex_unlock(&f->od->lock);
		}
		break;
	case N_STAGE_LOG:
	case N_RECIPE_LOG: {
		struct run r;

		rc = store_run_by_log(e->store, n.item.id, n.rel, &r);
		if (rc == 0) {
			f->run_id = r.id;
			f->sealed = packet__run_sealed(&r);
			run_clear(&r);
		}
		break;
	}
	case N_EVENTS_ALL:
	case N_ITEM_EVENTS:
	case N_REGISTRY:
		f->through = packet__through_wanted(e, f, 0, who);
		break; /* read live (packet__tail_read) */
	case N_PIPELINE:
	case N_PFS_TMP:
		rc = (flags & O_TRUNC) ? 0 : packet__render(e, &n, &f->snap);
		f->snap_dirty = (flags & O_TRUNC) != 0;
		break;
	case N_RECORD:
		rc = packet__record_open(n.item.id, n.item.name, &f->rec);
		if (rc == 0)
			rc = packet__record_render(e, n.item.id, f->rec, &f->snap);
		break;
	default:
		rc = packet__render(e, &n, &f->snap);
		if (rc && n.kind == N_DIFF) {
			/* A diff git cannot compute reads as an explanation. */
			buf_free(&f->snap);
			rc = buf_printf(&f->snap, "# change.diff unavailable: %s\n", strerror(-rc));
		}
		break;
	}
	if (rc) {
		if (f->od)
			od_release(e, f->od, flags);
		packet__record_release(e, f->rec, &f->opener);
		buf_free(&f->snap);
		pthread_mutex_destroy(&f->lock);
		free(f->path);
		free(f);
		goto fail_node;
	}
	packet__node_clear(&n);
	*out = f;
	return 0;
fail_node:
	packet__node_clear(&n);
	return rc;
}

static ssize_t slice(const struct buf *b, char *out, size_t size, uint64_t off)
{
	size_t n;

	if (off >= b->len)
		return 0;
	n = b->len - (size_t)off < size ? b->len - (size_t)off : size;
	memcpy(out, b->data + off, n);
	return (ssize_t)n;
}

/* Renders the current content of the view f was opened on into out.
 * f->lock not held: it is taken here for ctl's answer. */
static int render_again(struct pfs_file *f, struct buf *out)
{
	struct node n;
	int rc;

	if (f->kind == N_RECORD) /* the handle's own answer */
		return packet__record_render(f->e, f->item_id, f->rec, out);
	if (f->kind == N_CTL) { /* the answer to its own commands, once it has one */
		pthread_mutex_lock(&f->lock);
		rc = f->reply.len ? packet__ctl_render_reply(&f->reply, out) : 1;
		pthread_mutex_unlock(&f->lock);
		if (rc <= 0)
			return rc;
	}
	rc = packet__resolve(f->e, f->path, &n);

	if (rc)
		return rc;
	rc = n.kind == f->kind ? packet__render(f->e, &n, out) : -ENOENT;
	packet__node_clear(&n);
	return rc;
}

/* Whether the view f was opened on now renders other than its snapshot.
 * f->lock not held. */
static int snapshot_stale(struct pfs_file *f)
{
	struct buf now;
	int stale = 0;

	buf_init(&now);
	if (render_again(f, &now) == 0) {
		pthread_mutex_lock(&f->lock);
		stale = now.len != f->snap.len || (now.len && memcmp(now.data, f->snap.data, now.len));
		pthread_mutex_unlock(&f->lock);
	}
	buf_free(&now);
	return stale;
}

/* A read of a view read from a snapshot: at offset 0 the view is rendered
 * again once the snapshot was read, or once this handle wrote (a ctl
 * command: its result is new); validation/record at every read at offset 0
 * (its run moves on). The rendering is done without f->lock and swapped in
 * under it unless a later one already was; the copy is made under it. */
static ssize_t snapshot_read(struct pfs_file *f, char *buf, size_t size, uint64_t off)
{
	struct buf now;
	uint64_t gen = 0;
	ssize_t n;

	buf_init(&now);
	if (off == 0 && resnapshots(f->kind)) {
		pthread_mutex_lock(&f->lock);
		if (f->snap_read || f->wrote || f->kind == N_RECORD)
			gen = ++f->snap_gen;
		pthread_mutex_unlock(&f->lock);
		if (gen && render_again(f, &now) != 0)
			gen = 0;
	}
	pthread_mutex_lock(&f->lock);
	if (gen > f->snap_at) {
		buf_free(&f->snap);
		f->snap = now;
		f->snap_at = gen;
		buf_init(&now);
	}
	n = slice(&f->snap, buf, size, off);
	f->read_end = off + (uint64_t)n;
	f->snap_read = 1;
	pthread_mutex_unlock(&f->lock);
	buf_free(&now);
	return n;
}

ssize_t engine_file_read(struct pfs_file *f, char *buf, size_t size, uint64_t off)
{
	ssize_t n;

	switch (f->kind) {
	case N_DOC: {
		const struct buf *bytes;

		pthread_mutex_lock(&f->od->lock);
		n = packet__od_bytes(f->e, f->od, f, off, &bytes);
		if (n == 0)
			n = slice(bytes, buf, size, off);
		pthread_mutex_unlock(&f->od->lock);
		return n;
	}
	case N_STAGE_LOG:
	case N_RECIPE_LOG:
		n = store_log_read(f->e->store, f->run_id, off, buf, size);
		if (n >= 0) {
			pthread_mutex_lock(&f->lock);
			f->read_end = off + (uint64_t)n;
			pthread_mutex_unlock(&f->lock);
		}
		return n;
	case N_EVENTS_ALL:
	case N_ITEM_EVENTS:
	case N_REGISTRY:
		pthread_mutex_lock(&f->lock);
		n = packet__tail_read(f->e, f->kind, f->item_id, &f->tail, buf, size, off);
		if (n >= 0)
			f->read_end = off + (uint64_t)n;
		pthread_mutex_unlock(&f->lock);
		return n;
	default:
		return snapshot_read(f, buf, size, off);
	}
}

unsigned engine_file_poll(struct pfs_file *f)
{
	unsigned ready = POLLIN | POLLRDNORM;
	unsigned out = wants_write(f->flags) ? POLLOUT | POLLWRNORM : 0;
	uint64_t end;
	struct run r;
	char c;
	int ended = 1, more;

	switch (f->kind) {
	case N_STAGE_LOG:
	case N_RECIPE_LOG:
		pthread_mutex_lock(&f->lock);
		end = f->read_end;
		pthread_mutex_unlock(&f->lock);
		if (store_log_read(f->e->store, f->run_id, end, &c, 1) > 0)
			return ready | out;
		if (store_run_get(f->e->store, f->run_id, &r) == 0) {
			ended = r.status != RUN_RUNNING && r.status != RUN_QUEUED;
			run_clear(&r);
		}
		return (ended ? ready : 0) | out;
	case N_EVENTS_ALL:
	case N_ITEM_EVENTS:
	case N_REGISTRY:
		pthread_mutex_lock(&f->lock);
		more = packet__tail_read(f->e, f->kind, f->item_id, &f->tail, &c, 1, f->read_end) > 0;
		pthread_mutex_unlock(&f->lock);
		return (more ? ready : 0) | out;
	case N_STATUS:
	case N_STATUS_JSON:
	case N_EVIDENCE:
	case N_JUNIT:
	case N_SCOPE:
	case N_MEASUREMENTS:
	case N_DIFF:
	case N_RECORD:
	case N_REPORT:
	case N_INDEX:
		pthread_mutex_lock(&f->lock);
		more = f->read_end < f->snap.len;
		pthread_mutex_unlock(&f->lock);
		if (more)
			return ready | out;
		return (snapshot_stale(f) ? ready : 0) | out;
	default:
		return ready | out;
	}
}

/* engine_file_write with f->lock held. */
static ssize_t file_write(struct pfs_file *f, const char *buf, size_t size, uint64_t off,
			  const struct pfs_caller *who)
{
	struct open_doc *d = f->od;
	uint64_t end;
	int rc, was_dirty;

	assert(util_mutex_held(&f->lock));
	assert(!util_mutex_held(&f->e->files_lock)); /* a handle's lock comes first */
	f->wrote = 1;
	switch (f->kind) {
	case N_DOC:
		packet__od_request(d, f, 1);
		pthread_mutex_lock(&d->lock);
		end = packet__od_size(d);
		was_dirty = d->dirty;
		if (f->flags & O_APPEND)
			off = end;
		packet__through_count(f, off, size);
		if (off + size > packet__max_doc(f->e)) {
			pthread_mutex_unlock(&d->lock);
			return -EFBIG;
		}
		/* At the end of a document never read: only the new bytes are
		 * held. Anywhere else the write needs what is before it. */
		rc = d->partial && off != end ? packet__od_load(f->e, d) : 0;
		if (rc == 0 && d->partial) {
			rc = buf_append(&d->content, buf, size);
			if (rc == 0 && size) {
				d->dirty = 1;
				d->mtime_ns = util_now_ns();
			}
			pthread_mutex_unlock(&d->lock);
			goto written;
		}
		if (rc == 0 && off + size > d->content.len)
			rc = packet__od_resize(f->e, d, off + size);
		if (rc == 0 && size) {
			memcpy(d->content.data + off, buf, size);
			d->dirty = 1;
			d->mtime_ns = util_now_ns();
		}
		pthread_mutex_unlock(&d->lock);
	written:
		if (rc)
			return rc;
		return f->through ? packet__through_commit(f, who ? who : &f->opener, end, size,
							   was_dirty)
				  : (ssize_t)size;
	case N_CTL:
		return packet__ctl_write(f->e, f->item_name, &f->line, &f->reply, buf, size);
	case N_RECORD:
		return packet__record_write(f->e, f->rec, buf, size, who ? who : &f->opener);
	case N_REGISTRY:
		packet__through_count(f, off, size);
		if (f->through && f->writes == 2)
			packet__through_note(f->e, f);
		return packet__registry_write(f->e, f->item_id, f->item_name, (f->flags & O_APPEND) != 0,
					      f->through, &f->line, buf, size, off);
	case N_PIPELINE:
	case N_PFS_TMP:
		if (off + size > (1u << 20))
			return -EFBIG;
		if (off > f->snap.len) {
			static const char spaces[64] = {0};

			while (f->snap.len < off)
				buf_append(&f->snap, spaces,
					   off - f->snap.len < sizeof(spaces) ? off - f->snap.len
									      : sizeof(spaces));
		}
		if (off + size > f->snap.len) {
			rc = buf_append(&f->snap, buf + (f->snap.len - off), off + size - f->snap.len);
			if (rc)
				return rc;
			memcpy(f->snap.data + off, buf, size - (off + size - f->snap.len));
		} else {
			memcpy(f->snap.data + off, buf, size);
		}
		f->snap_dirty = 1;
		return (ssize_t)size;
	default:
		return -EACCES;
	}
}

ssize_t engine_file_write(struct pfs_file *f, const char *buf, size_t size, uint64_t off,
			  const struct pfs_caller *who)
{
	ssize_t n;

	pthread_mutex_lock(&f->lock);
	n = file_write(f, buf, size, off, who);
	pthread_mutex_unlock(&f->lock);
	return n;
}

int engine_file_reopen(struct pfs_file *of, int flags, const struct pfs_caller *who,
		       struct pfs_file **out)
{
	struct engine *e = of->e;
	struct pfs_file *f;

	if (of->kind != N_DOC || wants_write(flags) || (flags & O_CREAT))
		return -ESTALE;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->path = strdup(of->path);
	if (!f->path) {
		free(f);
		return -ENOMEM;
	}
	f->e = e;
	f->kind = N_DOC;
	f->flags = flags;
	f->item_id = of->item_id;
	memcpy(f->item_name, of->item_name, sizeof(f->item_name));
	pthread_mutex_init(&f->lock, NULL);
	if (who)
		f->opener = *who;
	else
		f->opener.uid = getuid(), f->opener.gid = getgid();
	pthread_mutex_lock(&e->files_lock);
	of->od->refs++;
	of->od->readers += (flags & O_ACCMODE) != O_WRONLY;
	f->od = of->od;
	pthread_mutex_unlock(&e->files_lock);
	*out = f;
	return 0;
}

/* engine_file_flush with f->lock held; who not NULL. */
static int file_flush(struct pfs_file *f, const struct pfs_caller *who)
{
	struct engine *e = f->e;
	char err[512];
	int rc = 0;

	assert(util_mutex_held(&f->lock));
	assert(!util_mutex_held(&e->files_lock)); /* a handle's lock comes first */
	switch (f->kind) {
	case N_DOC:
		packet__od_request(f->od, f, 0);
		packet__through_note(e, f);
		/* A shell opens with O_TRUNC, dup2()s and closes the first fd before
		 * it writes: that close must be durable, but the writes that follow
		 * amend the same revision instead of adding one. */
		if (f->trunc_pending && !f->wrote) {
			f->trunc_pending = 0;
			return packet__od_commit(e, f->od, who, 0, &f->provisional);
		}
		rc = packet__od_commit(e, f->od, who, f->wrote ? f->provisional : 0, NULL);
		if (f->wrote)
			f->provisional = 0;
		return rc;
	case N_CTL:
		rc = packet__ctl_flush(e, f->item_name, &f->line, &f->reply);
		/* Writing nothing means advance, applied at the last close. */
		if (rc == 0 && wants_write(f->flags) && !f->wrote && !f->advanced &&
		    (rc = packet__ctl_empty_close(e, f->item_name, f->path, who->pid)) <= 0)
			f->advanced = 1;
		if (rc == 2) /* the writer unknown: its advance comes at release */
			packet__ctl_owe(f);
		return rc > 0 ? 0 : rc;
	case N_RECORD:
		return packet__record_flush(e, f->rec, who);
	case N_REGISTRY:
		packet__through_note(e, f);
		/* A fragment waits for the rest of its line across flushes (a shell
		 * closes duplicates of the fd after each command). A whole object
		 * that only lacks its newline is refused now: a line ends with one.
		 * Release drops a fragment that never got its end. */
		if (f->line.len) {
			char *norm = NULL, why[64];

			if (registry_check_external(f->line.data, f->line.len, &norm, why, sizeof(why)) == 0) {
				free(norm);
				f->line.len = 0;
				packet__refuse(e, f->item_id, f->item_name,
					       "line without newline not stored");
				return -EINVAL;
			}
		}
		return 0;
	case N_PIPELINE:
		if (!f->snap_dirty)
			return 0;
		/* Emptied and not (yet) written: refused, but kept pending so that a
		 * shell's write after its dup2 flush is judged whole at the next one. */
		if (f->snap.len == 0)
			return -EINVAL;
		f->snap_dirty = 0;
		rc = pipeline_config_set(e->pl, f->snap.data ? f->snap.data : "", f->snap.len, err, sizeof(err));
		if (rc)
			packet__refuse(e, 0, NULL, "%s (old configuration kept)", err);
		else
			packet__refusal_clear(e, 0, NULL);
		return rc;
	case N_PFS_TMP:
		f->snap_dirty = 0;
		return packet__tmp_store(e, f->path + strlen("/.packetfs/"), &f->snap);
	default:
		return 0;
	}
}

int engine_file_flush(struct pfs_file *f, const struct pfs_caller *who)
{
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = file_flush(f, who ? who : &f->opener);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int engine_file_fsync(struct pfs_file *f, const struct pfs_caller *who)
{
	int rc = f->kind == N_DOC ? engine_file_flush(f, who) : 0;

	return rc ? rc : store_sync(f->e->store);
}

void engine_file_release(struct pfs_file *f)
{
	if (!f)
		return;
	/* No other call on f can be under way (engine.h), but what they left
	 * is read under the lock that guarded it. */
	pthread_mutex_lock(&f->lock);
	/* A handle that only read commits nothing another handle wrote: the
	 * writer's own close does, and the revision names the writer. One that
	 * may have created the document (O_RDONLY | O_CREAT) commits it, and a
	 * commit that failed (a full disk) is tried again at every release. */
	if ((f->kind == N_DOC && (wants_write(f->flags) || (f->flags & O_CREAT) ||
				  od_failed(f->od))) ||
	    (f->kind == N_PFS_TMP && f->snap_dirty))
		file_flush(f, &f->opener);
	if (f->kind == N_PIPELINE && f->snap_dirty) {
		char err[512];

		if (pipeline_config_set(f->e->pl, f->snap.data ? f->snap.data : "", f->snap.len, err,
				      sizeof(err)))
			packet__refuse(f->e, 0, NULL, "%s (old configuration kept)", err);
		else
			packet__refusal_clear(f->e, 0, NULL);
	}
	/* A fragment a flush kept waiting for more is applied now, whatever it
	 * is (ctl.c). */
	if (f->kind == N_CTL)
		packet__ctl_release(f->e, f->item_name, &f->line);
	packet__record_release(f->e, f->rec, &f->opener);
	/* Writing nothing to ctl means advance: here when no flush was the
	 * last close (ctl.c). The outcome is in ctl's last result. */
	if (f->kind == N_CTL && wants_write(f->flags) && !f->wrote && !f->advanced)
		packet__ctl_apply(f->e, f->item_name, "advance", NULL, 0);
	if (f->kind == N_CTL)
		packet__ctl_paid(f);
	if (f->kind == N_REGISTRY && f->line.len)
		packet__refuse(f->e, f->item_id, f->item_name,
			       "incomplete last line (no newline) not stored");
	if (f->od)
		od_release(f->e, f->od, f->flags);
	buf_free(&f->snap);
	buf_free(&f->line);
	buf_free(&f->reply);
	buf_free(&f->tail.bytes);
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_destroy(&f->lock);
	free(f->path);
	free(f);
}

int engine_file_direct(const struct pfs_file *f)
{
	return f->kind != N_DOC && !engine_file_immutable(f);
}

int engine_file_immutable(const struct pfs_file *f)
{
	/* (Not a .history revision: the current one is amended in place,
	 * packet__od_commit.) */
	return f->sealed;
}

int engine_file_flushes(const struct pfs_file *f)
{
	/* A read-only handle of a document could commit what its other
	 * handles wrote, but each writer's own close commits that (and fsync,
	 * which noflush does not leave out, commits through any handle). */
	return wants_write(f->flags) && !f->through;
}

int engine_file_getattr(struct pfs_file *f, struct pfs_stat *st)
{
	struct engine *e = f->e;

	if (f->kind == N_DOC) {
		struct doc_meta m;
		int unlinked, quiet;

		packet__od_request(f->od, f, 0);
		memset(st, 0, sizeof(*st));
		pthread_mutex_lock(&e->files_lock);
		packet__od_meta(e, f->od, &m);
		unlinked = f->od->unlinked;
		quiet = packet__od_quiet(f->od);
		pthread_mutex_unlock(&e->files_lock);
		st->mode = S_IFREG | m.mode;
		st->size = m.size;
		st->mtime_ns = m.mtime_ns;
		st->ctime_ns = m.ctime_ns;
		st->atime_ns = m.atime_ns;
		st->nlink = m.nlink;
		st->file_id = packet__file_id(f->od->item_id, m.link);
		st->unlinked = unlinked;
		st->uid = packet__uid(e, m.uid);
		st->gid = packet__gid(e, m.gid);
		/* As a stat by path gives it (node_stable). */
		st->stable = quiet && m.nlink <= 1;
		return 0;
	}
	if (f->kind == N_PFS_TMP) {
		memset(st, 0, sizeof(*st));
		st->nlink = 1;
		if (packet__tmp_stat(e, f->path + strlen("/.packetfs/"), st) < 0)
			st->mode = S_IFREG | 0600; /* unlinked while open */
		pthread_mutex_lock(&f->lock);
		if (f->snap_dirty)
			st->size = f->snap.len;
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	return -ENOSYS;
}
