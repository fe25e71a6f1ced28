/*
 * packet_node.c - symbolic links, FIFOs, sockets and device nodes in
 * packets (SPEC §3: documents behave like files on a local disk):
 * engine_symlink, engine_mknod and engine_readlink (engine.h); and hard
 * links, engine_link, which give any of them, or a plain document, another
 * name (the store keeps the names of one file in step: store_link.c).
 *
 * Design. Such an entry is a document of another kind (store.h, struct
 * doc_meta's type; schema/0009_nodes.sql): a row of the item's live tree
 * with revisions, so that unlink, rename, chmod, chown, utimens, .history,
 * `packetfs log`, archiving and export treat it as they treat documents. A
 * symlink's content is its target; the others have none, a device its
 * number. Nothing here opens them: the kernel follows a symlink itself,
 * asking readlink, and does the I/O of FIFOs, sockets and devices without
 * the file system; engine_file_open refuses them (packet_file.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "packet_int.h"

mode_t packet__history_mode(mode_t type)
{
	if (S_ISLNK(type))
		return S_IFLNK | 0777;
	return (type ? type : S_IFREG) | 0444;
}

/* Makes the entry path of type type (struct doc_meta) with content
 * data[len] (a symlink's target), mode and rdev, owned by who. */
static int make_node(struct engine *e, const char *path, mode_t type, mode_t mode, uint64_t rdev,
		     const char *data, size_t len, const struct pfs_caller *who)
{
	char rel[PATH_MAX];
	const char *name;
	struct who_buf wb;
	struct node p, n;
	uid_t uid;
	gid_t gid;
	int rc;

	rc = packet__resolve_parent(e, path, &name, &p);
	if (rc)
		return rc;
	rc = packet__doc_parent(&p, name, rel, sizeof(rel));
	if (rc == 0 && packet__resolve(e, path, &n) == 0) {
		packet__node_clear(&n);
		rc = -EEXIST;
	}
	if (rc == 0 && e->readonly)
		rc = -EROFS;
	if (rc == 0) {
		mode &= 07777;
		packet__new_owner(e, &p, who, 0, &mode, &uid, &gid);
		packet__who_fill(e, who, &wb);
		rc = store_doc_make_node(e->store, p.item.id, rel, type, rdev, data, len, mode, uid,
					 gid, &wb.w);
	}
	packet__node_clear(&p);
	return rc;
}

int engine_symlink(struct engine *e, const char *path, const char *target,
		   const struct pfs_caller *who)
{
	size_t len = strlen(target);

	if (len == 0)
		return -ENOENT; /* as symlink(2) with an empty target */
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	return make_node(e, path, S_IFLNK, 0777, 0, target, len, who);
}

int engine_mknod(struct engine *e, const char *path, mode_t mode, uint64_t rdev,
		 const struct pfs_caller *who)
{
	mode_t type = mode & S_IFMT;

	if (type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR && type != S_IFBLK)
		return -EINVAL;
	if ((type == S_IFCHR || type == S_IFBLK) && who && who->uid != 0)
		return -EPERM;
	return make_node(e, path, type, mode, type == S_IFCHR || type == S_IFBLK ? rdev : 0, NULL,
			 0, who);
}

int engine_readlink(struct engine *e, const char *path, char *buf, size_t size)
{
	char *data = NULL;
	struct node n;
	size_t len = 0;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	if (n.kind == N_WORKTREE) {
		if ((size_t)snprintf(buf, size, "%s/worktrees/%s", e->store_dir, n.item.name) >= size)
			rc = -ENAMETOOLONG;
	} else if (n.kind == N_DOC && !n.open && S_ISLNK(n.doc.type)) {
		rc = store_doc_read(e->store, n.item.id, n.rel, &data, &len);
	} else if (n.kind == N_HISTORY_FILE && S_ISLNK(n.doc.type)) {
		rc = store_rev_read(e->store, n.item.id, n.rel, n.rev, &data, &len);
	} else {
		rc = -EINVAL;
	}
	if (rc == 0 && data) {
		if (len >= size)
			rc = -ENAMETOOLONG;
		else
			memcpy(buf, data, len + 1);
	}
	free(data);
	packet__node_clear(&n);
	return rc;
}

uint64_t packet__file_id(int64_t item_id, int64_t link)
{
	if (link == 0)
		return 0;
	return ((uint64_t)item_id << 32) | ((uint64_t)link & 0xffffffffu);
}

int engine_link(struct engine *e, const char *from, const char *to, const struct pfs_caller *who)
{
	char rel[PATH_MAX];
	struct who_buf wb;
	struct node a, p, b;
	int rc = packet__resolve(e, from, &a);

	if (rc)
		return rc;
	if (packet__is_dir_kind(a.kind))
		rc = -EPERM; /* as link(2) of a directory */
	else if (a.kind != N_DOC || a.archived)
		rc = -EACCES;
	if (rc == 0)
		rc = packet__dest(e, to, a.item.id, &p, rel, sizeof(rel));
	if (rc)
		goto out_a;
	if (packet__resolve(e, to, &b) == 0) {
		packet__node_clear(&b);
		rc = -EEXIST;
	}
	if (rc == 0 && e->readonly)
		rc = -EROFS;
	/* A document created open is in the store from its first commit. */
	if (rc == 0)
		rc = packet__od_commit_path(e, a.item.id, a.rel, who);
	if (rc == 0) {
		packet__who_fill(e, who, &wb);
		pthread_rwlock_wrlock(&e->ns_lock);
		rc = store_doc_link(e->store, a.item.id, a.rel, rel, &wb.w);
		pthread_rwlock_unlock(&e->ns_lock);
	}
	packet__node_clear(&p);
out_a:
	packet__node_clear(&a);
	return rc;
}
