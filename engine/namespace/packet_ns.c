/*
 * packet_ns.c - the changes to the packet namespace through the mount:
 * making items and directories (mkdir), removing them (rmdir), unlink and
 * rename of documents, with what they do to open documents (packet_doc.c:
 * an unlinked or replaced one goes stale, a renamed one follows), and the
 * reports of changes to whoever watches the engine (engine_watch).
 * engine.h documents the public functions, packet_int.h the ones the
 * other files of the namespace use. Renames and unlinks hold ns_lock
 * exclusively, so no commit (which holds it shared) sees a path move.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "packet_int.h"

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
		packet__od_unlink_locked(e, d);
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
		  const struct pfs_caller *who, char **replaced)
{
	char rel[PATH_MAX];
	struct node a, b, p;
	struct who_buf wb;
	unsigned sflags;
	int rc, have_b, rrev = 0;

	if (replaced)
		*replaced = NULL;
	if (flags & ~1u)
		return -EINVAL; /* RENAME_EXCHANGE and others */
	/* A document's existence and type are store_doc_rename's to check, in
	 * its transaction: the paths' kinds are enough here. */
	rc = packet__resolve_shallow(e, from, &a);
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
	have_b = packet__resolve_shallow(e, to, &b) == 0;
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
	/* The end of a temp-file-then-rename save carries the temp name's
	 * life (store_save.c): decided in the rename's transaction. */
	sflags = ((flags & 1u) ? STORE_RENAME_NOREPLACE : 0) | STORE_RENAME_SAVE;
	pthread_rwlock_wrlock(&e->ns_lock);
	rc = store_doc_rename(e->store, a.item.id, a.rel, rel, sflags, &wb.w, &rrev);
	/* Without memory for the path, the replaced file's readers get what
	 * they got before there was one (fs/inode.h). */
	if (rc == 0 && rrev && replaced)
		(void)packet__history_path(to, rel, rrev, replaced);
	if (rc == 0) {
		struct open_doc *d;
		size_t alen = strlen(a.rel);

		/* Keep open documents on their content: the replaced target's handles
		 * go stale (as on a local disk), moved ones follow. */
		pthread_mutex_lock(&e->files_lock);
		d = packet__od_find_locked(e, a.item.id, rel);
		if (d)
			packet__od_unlink_locked(e, d);
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
