/*
 * packet_doc.c - open documents, and the changes to the packet namespace
 * (mkdir, rmdir, unlink, rename, chmod, utimens). engine.h documents the
 * public functions, packet_int.h the ones packet.c and packet_file.c use.
 *
 * Design. Documents live in the store; while a document is open its
 * content is held once in a struct open_doc shared by every handle (so
 * readers see writers at once, and concurrent appenders do not lose lines)
 * and committed as one new revision when a handle is flushed after a
 * change. Renames and unlinks hold ns_lock exclusively, commits shared, so
 * a path cannot move under a commit; open documents follow a rename, and
 * the ones replaced or unlinked go stale (as on a local disk).
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "packet_int.h"

/* ---- who ---- */

void packet__who_fill(struct engine *e, const struct pfs_caller *c, struct who_buf *wb)
{
	char path[64];
	FILE *f;

	memset(wb, 0, sizeof(*wb));
	wb->w.uid = c ? c->uid : getuid();
	wb->w.pid = c ? c->pid : 0;
	if (c && c->pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(wb->comm, sizeof(wb->comm), f))
				wb->comm[strcspn(wb->comm, "\n")] = '\0';
			fclose(f);
		}
		pipeline_active_stage_of(e->pl, c->pid, wb->stage, sizeof(wb->stage));
	}
	wb->w.comm = wb->comm;
	wb->w.stage = wb->stage;
}

/* The process (thread group) of thread or process pid, or 0 when it is
 * gone: FUSE names the calling thread. */
static pid_t tgid_of(pid_t pid)
{
	char path[64], line[128];
	long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &v) == 1)
			break;
	fclose(f);
	return (pid_t)v;
}

/*
 * Whether a rename of the document at (item, rel) by caller c is the end of
 * a temp-file-then-rename save, so that the document's life goes to its new
 * name (STORE_RENAME_CARRY) and the temp name keeps no history: the name's
 * life began with its creation, by the process that renames it now (sed
 * -i, Python's tempfile + os.replace, an agent's Write tool, each in one
 * process). A document made by one program and renamed by another (mv of
 * a document, vim's backup rename) keeps its history where it is.
 */
static int is_temp_save(struct engine *e, int64_t item, const char *rel, const struct pfs_caller *c)
{
	char op[16];
	pid_t by = 0, t;
	int count = 0;

	if (!c || c->pid <= 0 || store_doc_life(e->store, item, rel, op, sizeof(op), &by, &count) ||
	    strcmp(op, "create") != 0 || by <= 0)
		return 0;
	if (by == c->pid)
		return 1;
	t = tgid_of(c->pid);
	return t > 0 && t == tgid_of(by);
}

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
	m->size = d->content.len;
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
	d->content.data = data;
	d->content.len = len;
	d->content.cap = len + 1;
	d->mode = m->mode;
	d->uid = m->uid;
	d->gid = m->gid;
	d->mtime_ns = m->mtime_ns;
	d->atime_ns = m->atime_ns;
	d->stored = 1;
}

static void od_destroy(struct open_doc *d)
{
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
		   mode_t mode, uid_t uid, gid_t gid, struct open_doc **out)
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
		rc = store_doc_stat(e->store, item, rel, &m);
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

static void od_unlink_locked(struct engine *e, struct open_doc *d)
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
}

void packet__od_put(struct engine *e, struct open_doc *d)
{
	int last;

	pthread_mutex_lock(&e->files_lock);
	assert(d->refs > 0);
	last = --d->refs == 0;
	if (last && !d->unlinked)
		od_unlink_locked(e, d);
	pthread_mutex_unlock(&e->files_lock);
	if (last)
		od_destroy(d);
}

/*
 * Commits a changed open document. amend (a revision id, or 0) names a
 * revision this handle committed only to make an O_TRUNC or a create
 * durable at a close before any write: while it is still the current one
 * its content is replaced, so a shell's `echo x > f` leaves one revision.
 * *rev_id (may be NULL) gets the current revision id afterwards. Holds
 * ns_lock shared, so a rename or unlink cannot move the path meanwhile.
 */
int packet__od_commit(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
		      int64_t amend, int64_t *rev_id)
{
	struct doc_meta m;
	struct who_buf wb;
	char *rel;
	int rc = 0, unlinked, dirty;

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
	rel = strdup(d->rel);
	pthread_mutex_unlock(&e->files_lock);
	pthread_mutex_lock(&d->lock);
	if (!rel) {
		rc = -ENOMEM;
	} else if (d->dirty && !unlinked) {
		const char *data = d->content.data ? d->content.data : "";

		rc = amend ? store_doc_amend(e->store, d->item_id, rel, amend, data, d->content.len,
					     d->mode, d->mtime_ns)
			   : -ESTALE;
		if (rc == -ESTALE)
			rc = store_doc_write_owned(e->store, d->item_id, rel, data, d->content.len,
						   d->mode, d->mtime_ns, d->stored ? "write" : "create",
						   &wb.w, d->uid, d->gid, NULL);
		if (rc == 0) {
			d->dirty = 0;
			d->stored = 1;
			d->atime_ns = d->mtime_ns;
		}
		d->commit_failed = rc != 0;
	}
	if (rc == 0 && rev_id && rel)
		*rev_id = store_doc_stat(e->store, d->item_id, rel, &m) == 0 ? m.rev_id : 0;
	pthread_mutex_unlock(&d->lock);
	pthread_rwlock_unlock(&e->ns_lock);
	free(rel);
	return rc;
}

uint64_t packet__max_doc(struct engine *e)
{
	return (uint64_t)pipeline_config_get(e->pl)->max_doc_size;
}

/* Resizes an open document's content (zero-filling growth). Lock held. */
int packet__od_resize(struct open_doc *d, uint64_t size)
{
	assert(util_mutex_held(&d->lock));
	if (size > d->content.len) {
		size_t grow = (size_t)(size - d->content.len);
		char *z = calloc(1, grow ? grow : 1);
		int rc;

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

/* ---- creating and changing entries ---- */

/* Splits path into its parent and last component (name points into path). */
int packet__split(const char *path, char *parent, size_t size, const char **name)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1])
		return -EINVAL;
	if (slash == path)
		snprintf(parent, size, "/");
	else if ((size_t)(slash - path) >= size)
		return -ENAMETOOLONG;
	else
		snprintf(parent, size, "%.*s", (int)(slash - path), path);
	*name = slash + 1;
	if (strlen(*name) > 255)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether new documents may be made in directory node p; rel gets the
 * item-relative path of name inside it. */
int packet__doc_parent(struct node *p, const char *name, char *rel, size_t size)
{
	const char *prefix;

	switch (p->kind) {
	case N_ITEM:
		prefix = "";
		break;
	case N_VALIDATION_DIR:
		prefix = "validation";
		break;
	case N_DOCDIR:
		prefix = p->rel;
		break;
	case N_ROOT:
	case N_PFS_DIR:
	case N_RECIPES_DIR:
	case N_ARCHIVE_DIR:
	case N_STAGES_DIR:
	case N_LOGS_DIR:
	case N_HISTORY_DIR:
		return -EACCES;
	default:
		return -ENOTDIR;
	}
	if (p->archived)
		return -EACCES;
	if ((size_t)snprintf(rel, size, "%s%s%s", prefix, *prefix ? "/" : "", name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int packet__item_create(struct engine *e, const char *name, mode_t mode,
			const struct pfs_caller *who, const char *at)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	char branch[128], wt[PATH_MAX], err[512] = "";
	struct runner_user *user = NULL;
	struct item it;
	int64_t id;
	int rc;

	if (strcmp(name, "events") == 0 || strcmp(name, ".packetfs") == 0 ||
	    strcmp(name, ".archive") == 0 || strcmp(name, "index.html") == 0)
		return -EEXIST;
	if (!engine_valid_item_name(name))
		return packet__item_name_refused(e, name);
	if (e->readonly)
		return -EROFS;
	if (store_item_get(e->store, name, &it) == 0) {
		item_clear(&it);
		return -EEXIST;
	}
	snprintf(branch, sizeof(branch), "packetfs/%s", name);
	snprintf(wt, sizeof(wt), "%s/worktrees/%s", e->store_dir, name);
	/* run_as (SPEC §5): the worktree is that user's, to write and to
	 * commit in. */
	if (cfg->run_as) {
		rc = runner_user_lookup(cfg->run_as, &user);
		if (rc) {
			util_log(LOG_WARNING, "mkdir %s: run_as: %s: %s", name, cfg->run_as,
				rc == -ENOENT ? "no such user" : strerror(-rc));
			return rc == -ENOMEM ? -ENOMEM : -EIO;
		}
	}
	if (user && user->uid == geteuid()) { /* this process's own user */
		runner_user_free(user);
		user = NULL;
	}
	rc = repo_item_create(cfg->repo, at ? at : cfg->base, branch, name, wt,
			      user ? user->uid : (uid_t)-1, user ? user->gid : (gid_t)-1, err,
			      sizeof(err));
	runner_user_free(user);
	if (rc) {
		util_log(LOG_WARNING, "mkdir %s: %s", name, err);
		return rc == -EEXIST || rc == -ENOENT || rc == -ENOSPC || rc == -EDQUOT ? rc : -EIO;
	}
	/* The root has no set-group-ID bit: the item takes its maker's group. */
	rc = store_item_create_owned(e->store, name, branch, cfg->base,
				     packet__store_uid(e, who ? who->uid : e->uid),
				     packet__store_gid(e, who ? who->gid : e->gid), mode, &id);
	if (rc) {
		/* No half-made item: the branch and worktree go again, so that
		 * the same mkdir succeeds once the store can take it. */
		int undo = repo_item_remove(cfg->repo, branch, name, wt);

		util_log(LOG_WARNING, "mkdir %s: the store refused the item: %s%s%s", name,
			strerror(-rc), undo ? "; its branch or worktree remain: " : "",
			undo ? strerror(-undo) : "");
		return rc;
	}
	{
		char extra[320], head[41] = "";

		/* A move of the branch from here on is a head_moved from this head. */
		if (repo_branch_head(cfg->repo, branch, head) == 0)
			pipeline_item_made(e->pl, id, head);
		snprintf(extra, sizeof(extra), ",\"branch\":\"%s\",\"head\":\"%s\",\"uid\":%d,\"pid\":%d",
			 branch, head, who ? (int)who->uid : 0, who ? (int)who->pid : 0);
		pipeline_event(e->pl, id, name, "item_created", extra);
	}
	return 0;
}

int engine_mkdir(struct engine *e, const char *path, mode_t mode, const struct pfs_caller *who)
{
	char parent[PATH_MAX], rel[PATH_MAX];
	const char *name;
	struct node n, p;
	int rc;

	rc = packet__split(path, parent, sizeof(parent), &name);
	if (rc)
		return rc;
	if (strcmp(parent, "/") == 0)
		return packet__item_create(e, name, mode & 07777, who, NULL);
	rc = packet__resolve(e, path, &n);
	if (rc == 0) {
		packet__node_clear(&n);
		return -EEXIST;
	}
	rc = packet__resolve(e, parent, &p);
	if (rc)
		return rc;
	rc = packet__doc_parent(&p, name, rel, sizeof(rel));
	if (rc == 0) {
		uid_t uid;
		gid_t gid;

		mode &= 07777;
		packet__new_owner(e, &p, who, 1, &mode, &uid, &gid);
		rc = store_doc_mkdir_owned(e->store, p.item.id, rel, mode, uid, gid);
	}
	packet__node_clear(&p);
	return rc;
}

int engine_rmdir(struct engine *e, const char *path, const struct pfs_caller *who)
{
	struct node n;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	switch (n.kind) {
	case N_ITEM:
		if (n.archived) {
			rc = -EACCES;
		} else if (n.learnings) {
			rc = -EPERM; /* the mount's own directory */
		} else {
			/* The end of a recursive removal restores what it took
			 * (packet_remove.c); 1: not one. */
			rc = packet__remove_item(e, &n, who, 1);
			if (rc == 1)
				rc = packet__ctl_apply(e, n.item.name, "archive", NULL, 0);
		}
		break;
	case N_DOCDIR:
		rc = n.archived ? -EACCES : packet__remove_blocked(e, &n, who);
		if (rc == 0)
			rc = store_doc_rmdir(e->store, n.item.id, n.rel);
		if (rc == 0)
			packet__remove_taken(e, &n, who);
		break;
	default:
		rc = packet__is_dir_kind(n.kind) ? -EACCES : -ENOTDIR;
		if (rc == -EACCES) /* stages/, .history/...: rm -rf of the item */
			rc = packet__remove_item(e, &n, who, rc);
	}
	packet__node_clear(&n);
	return rc;
}

/* The name of open document d is about to be unlinked: when its file has
 * another name that no other open document holds, d moves to that name
 * and its pending writes go on to the file, as on a local disk. 1 if it
 * moved. files_lock held. */
static int od_follow_file(struct engine *e, struct open_doc *d)
{
	char *other = NULL;

	assert(util_mutex_held(&e->files_lock));
	if (store_doc_other_name(e->store, d->item_id, d->rel, &other) != 0)
		return 0;
	if (packet__od_find_locked(e, d->item_id, other)) {
		free(other);
		return 0;
	}
	free(d->rel);
	d->rel = other;
	return 1;
}

int engine_unlink(struct engine *e, const char *path, const struct pfs_caller *who)
{
	struct who_buf wb;
	struct open_doc *d;
	struct node n;
	int rc = packet__resolve(e, path, &n), was_open = 0;

	if (rc)
		return rc;
	if (n.kind == N_PFS_TMP) { /* an editor's temp file (packet_tmp.c) */
		rc = packet__tmp_unlink(e, n.name);
		packet__node_clear(&n);
		return rc;
	}
	if (packet__is_dir_kind(n.kind))
		rc = -EISDIR;
	else if (n.kind == N_REGISTRY && !n.archived)
		rc = -EPERM;
	else if (n.kind != N_DOC || n.archived)
		rc = -EACCES;
	if (rc == -EPERM || rc == -EACCES) /* an engine's entry: rm -rf of the item */
		rc = packet__remove_item(e, &n, who, rc);
	else if (rc == 0)
		rc = packet__remove_blocked(e, &n, who);
	if (rc || n.kind != N_DOC) {
		packet__node_clear(&n);
		return rc;
	}
	packet__who_fill(e, who, &wb);
	pthread_rwlock_wrlock(&e->ns_lock);
	pthread_mutex_lock(&e->files_lock);
	d = packet__od_find_locked(e, n.item.id, n.rel);
	if (d && !od_follow_file(e, d)) {
		od_unlink_locked(e, d);
		was_open = 1;
	}
	pthread_mutex_unlock(&e->files_lock);
	rc = store_doc_unlink(e->store, n.item.id, n.rel, &wb.w);
	if (rc == -ENOENT && was_open) /* created but never committed */
		rc = store_doc_touch_parent(e->store, n.item.id, n.rel);
	pthread_rwlock_unlock(&e->ns_lock);
	if (rc == 0)
		packet__remove_taken(e, &n, who);
	packet__node_clear(&n);
	return rc;
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

int packet__dest(struct engine *e, const char *to, int64_t item_id, struct node *p, char *rel,
		 size_t size)
{
	const char *name;
	int rc = packet__resolve_parent(e, to, &name, p);

	if (rc)
		return rc;
	rc = packet__doc_parent(p, name, rel, size);
	if (rc == 0 && p->item.id != item_id)
		rc = -EXDEV;
	if (rc)
		packet__node_clear(p);
	return rc;
}

int engine_rename(struct engine *e, const char *from, const char *to, unsigned flags,
		  const struct pfs_caller *who)
{
	char rel[PATH_MAX];
	struct node a, b, p;
	struct who_buf wb;
	unsigned sflags;
	int rc, have_b;

	if (flags & ~1u)
		return -EINVAL; /* RENAME_EXCHANGE and others */
	rc = packet__resolve(e, from, &a);
	if (rc)
		return rc;
	if (a.kind == N_PFS_TMP || a.kind == N_PIPELINE) {
		rc = packet__tmp_rename(e, &a, from, to, flags);
		goto out_a;
	}
	if ((a.kind != N_DOC && a.kind != N_DOCDIR) || a.archived) {
		rc = a.kind == N_ITEM ? -EPERM : -EACCES;
		goto out_a;
	}
	rc = packet__dest(e, to, a.item.id, &p, rel, sizeof(rel));
	if (rc)
		goto out_a;
	have_b = packet__resolve(e, to, &b) == 0;
	if (have_b) {
		if (b.kind == N_REGISTRY)
			rc = -EPERM; /* append-only: never replaced */
		else if (b.kind != N_DOC && b.kind != N_DOCDIR)
			rc = packet__is_dir_kind(b.kind) ? -EISDIR : -EACCES;
		packet__node_clear(&b);
		if (rc)
			goto out_p;
	}
	rc = packet__od_commit_path(e, a.item.id, a.rel, who);
	if (rc)
		goto out_p;
	packet__who_fill(e, who, &wb);
	sflags = ((flags & 1u) ? STORE_RENAME_NOREPLACE : 0) |
		 (is_temp_save(e, a.item.id, a.rel, who) ? STORE_RENAME_CARRY : 0);
	pthread_rwlock_wrlock(&e->ns_lock);
	rc = store_doc_rename(e->store, a.item.id, a.rel, rel, sflags, &wb.w);
	if (rc == 0) {
		struct open_doc *d;
		size_t alen = strlen(a.rel);

		/* Keep open documents on their content: the replaced target's handles
		 * go stale (as on a local disk), moved ones follow. */
		pthread_mutex_lock(&e->files_lock);
		d = packet__od_find_locked(e, a.item.id, rel);
		if (d)
			od_unlink_locked(e, d);
		for (d = e->docs; d; d = d->next) {
			if (d->item_id != a.item.id)
				continue;
			if (strcmp(d->rel, a.rel) == 0 ||
			    (strncmp(d->rel, a.rel, alen) == 0 && d->rel[alen] == '/')) {
				struct buf nr;

				buf_init(&nr);
				if (buf_printf(&nr, "%s%s", rel, d->rel + alen) == 0) {
					free(d->rel);
					d->rel = buf_steal(&nr);
				}
			}
		}
		pthread_mutex_unlock(&e->files_lock);
	}
	pthread_rwlock_unlock(&e->ns_lock);
out_p:
	packet__node_clear(&p);
out_a:
	packet__node_clear(&a);
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
		if (!d->dirty && store_doc_stat(e->store, item_id, path, &m) == 0 &&
		    store_doc_read(e->store, item_id, path, &data, &len) == 0)
			od_take_stored(d, &m, data, len);
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&e->files_lock);
}

void engine_watch(struct engine *e, engine_change_fn fn, void *arg)
{
	e->watch_fn = fn;
	e->watch_arg = arg;
}

void engine_changed(struct engine *e, const char *item, const char *rel, enum engine_change what)
{
	char path[PATH_MAX];
	int n;

	if (!e->watch_fn)
		return;
	if (item)
		n = snprintf(path, sizeof(path), "/%s/%s", item, rel);
	else
		n = snprintf(path, sizeof(path), "/%s", rel);
	if (n > 0 && (size_t)n < sizeof(path))
		e->watch_fn(e->watch_arg, path, what);
	view_html_changed(e, item, rel, what);
}
