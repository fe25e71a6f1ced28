/*
 * packet_owner.c - owners, groups, modes and times of the packet namespace
 * (SPEC §3, a team on one mount): who a new entry belongs to, what the
 * store keeps for the store owner and the store's group, chown, chmod and
 * utimens. engine.h documents the
 * public functions, packet_int.h the ones the other packet files use.
 *
 * Design. Documents, their directories and item directories belong to
 * whoever made them, as on a local disk: the caller's uid, and its gid or,
 * below a set-group-ID directory, the directory's (BSD rules, which Linux
 * follows there), a new directory taking the bit along. The store keeps
 * STORE_ID_DEFAULT for the store owner and the store's group (e->uid,
 * e->gid), so that what the mounting user makes, and everything made
 * before owners were kept, belongs to whoever mounts the store. Generated
 * entries belong to the store owner and the store's group (packet.c).
 * Who may chown is fs/'s check (POSIX rules); the mode bits are the
 * kernel's (default_permissions).
 */
#include <errno.h>
#include <sys/stat.h>

#include "packet_int.h"

uid_t packet__uid(const struct engine *e, uid_t stored)
{
	return stored == STORE_ID_DEFAULT ? e->uid : stored;
}

gid_t packet__gid(const struct engine *e, gid_t stored)
{
	return stored == STORE_ID_DEFAULT ? e->gid : stored;
}

uid_t packet__store_uid(const struct engine *e, uid_t uid)
{
	return uid == e->uid ? STORE_ID_DEFAULT : uid;
}

gid_t packet__store_gid(const struct engine *e, gid_t gid)
{
	return gid == e->gid ? STORE_ID_DEFAULT : gid;
}

void packet__new_owner(const struct engine *e, const struct node *p, const struct pfs_caller *who,
		       int dir, mode_t *mode, uid_t *uid, gid_t *gid)
{
	mode_t pmode = 0;
	gid_t pgid = STORE_ID_DEFAULT;

	*uid = packet__store_uid(e, who ? who->uid : e->uid);
	*gid = packet__store_gid(e, who ? who->gid : e->gid);
	if (p->kind == N_ITEM)
		pmode = p->item.dir_mode, pgid = p->item.dir_gid;
	else if (p->kind == N_DOCDIR)
		pmode = p->doc.mode, pgid = p->doc.gid;
	if (pmode & S_ISGID) {
		*gid = pgid;
		if (dir)
			*mode |= S_ISGID;
	}
}

/* The bits Linux clears of mode when a process without CAP_FSETID writes,
 * truncates or chowns a file: set-user-ID, and set-group-ID where it has
 * group execute (without it, it marks mandatory locking). */
static mode_t suidgid_of(mode_t mode)
{
	mode_t kill = mode & S_ISUID;

	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		kill |= S_ISGID;
	return kill;
}

/* What od_update found at n's path. */
enum od_found {
	OD_NONE,     /* no open document: the store's row is all there is */
	OD_STORED,   /* an open document the store holds a row of */
	OD_UNSTORED, /* one created and not committed yet: the store has no row
		      * at its path (a rename onto it or an unlink takes it off
		      * the open list), and its first commit stores what it holds */
};

/* Gives the open document of n, if one is open, the attributes a chown,
 * chmod or utimens stored: uid, gid and mode unless (uid_t)-1, (gid_t)-1
 * or (mode_t)-1, each time unless STORE_TIME_OMIT. Returns what it found;
 * OD_UNSTORED is read under the document's lock with the change, and a
 * commit reads the attributes and marks the document stored under that
 * lock (packet__od_commit), so no commit can miss the change once it is
 * returned: the caller then need not ask the store, whose row does not
 * exist. Takes files_lock, then the document's lock. */
static enum od_found od_update(struct engine *e, const struct node *n, uid_t uid, gid_t gid,
			       mode_t mode, int64_t atime_ns, int64_t mtime_ns)
{
	enum od_found found = OD_NONE;
	struct open_doc *d;

	pthread_mutex_lock(&e->files_lock);
	d = packet__od_find_locked(e, n->item.id, n->rel);
	if (d) {
		pthread_mutex_lock(&d->lock);
		found = d->stored ? OD_STORED : OD_UNSTORED;
		if (uid != (uid_t)-1)
			d->uid = uid;
		if (gid != (gid_t)-1)
			d->gid = gid;
		if (mode != (mode_t)-1)
			d->mode = mode & 07777;
		if (atime_ns != STORE_TIME_OMIT)
			d->atime_ns = atime_ns;
		if (mtime_ns != STORE_TIME_OMIT)
			d->mtime_ns = mtime_ns;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&e->files_lock);
	return found;
}

int engine_chown(struct engine *e, const char *path, uid_t uid, gid_t gid, int privileged)
{
	struct pfs_stat st;
	struct node n;
	mode_t mode;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	rc = packet__node_stat(e, &n, &st, 1);
	if (rc)
		goto out;
	mode = st.mode & 07777;
	/* As Linux: a chown by anyone but root clears the set-user-ID bit of
	 * a file, and its set-group-ID bit where that means set-group-ID
	 * (with group execute; without it, mandatory locking). */
	if (!privileged && !S_ISDIR(st.mode) && (uid != (uid_t)-1 || gid != (gid_t)-1))
		mode &= ~suidgid_of(mode);
	uid = packet__store_uid(e, uid == (uid_t)-1 ? st.uid : uid);
	gid = packet__store_gid(e, gid == (gid_t)-1 ? st.gid : gid);
	if (n.archived) {
		rc = -EACCES;
	} else if (n.kind == N_DOC || n.kind == N_DOCDIR) {
		enum od_found open = od_update(e, &n, uid, gid, mode, STORE_TIME_OMIT,
					       STORE_TIME_OMIT);

		rc = open == OD_UNSTORED ? 0
					 : store_doc_set_owner(e->store, n.item.id, n.rel, uid, gid, mode);
		if (rc == -ENOENT && open)
			rc = 0;
	} else if (n.kind == N_ITEM) {
		rc = store_item_set_owner(e->store, n.item.id, uid, gid, mode);
	} else if (packet__uid(e, uid) != st.uid || packet__gid(e, gid) != st.gid) {
		rc = -EPERM; /* generated entries keep the store owner and group */
	}
out:
	packet__node_clear(&n);
	return rc;
}

void engine_team(const struct engine *e, uid_t *owner, gid_t *group)
{
	*owner = e->uid;
	*group = e->gid;
}

int engine_file_kill_suidgid(struct pfs_file *f)
{
	struct engine *e = f->e;
	struct open_doc *d = f->od;
	mode_t mode, kill;
	int rc = 0;

	if (f->kind != N_DOC)
		return 0;
	/* Every write of a process other than root asks (fs/fs_io.c): without
	 * the bits, one look under the document's lock. */
	pthread_mutex_lock(&d->lock);
	kill = suidgid_of(d->mode);
	pthread_mutex_unlock(&d->lock);
	if (!kill)
		return 0;
	/* As a commit: ns_lock shared, so that no rename moves d->rel to
	 * another file while the store is told; then files_lock (d->rel,
	 * d->unlinked) before d->lock (packet_int.h). */
	pthread_rwlock_rdlock(&e->ns_lock);
	pthread_mutex_lock(&e->files_lock);
	pthread_mutex_lock(&d->lock);
	mode = d->mode;
	kill = suidgid_of(mode);
	/* A document not stored yet gets its mode at its first commit. */
	if (kill && d->stored && !d->unlinked)
		rc = store_doc_set_mode(e->store, d->item_id, d->rel, mode & ~kill);
	if (rc == 0 || rc == -ENOENT) {
		d->mode = mode & ~kill;
		rc = 0;
	}
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&e->files_lock);
	pthread_rwlock_unlock(&e->ns_lock);
	return rc;
}

int engine_kill_suidgid(struct engine *e, const char *path)
{
	struct pfs_stat st;
	mode_t kill;
	/* The mode alone is needed: a view is not rendered for its size. */
	int rc = engine_getattr_unrendered(e, path, &st);

	if (rc || !S_ISREG(st.mode) || !(kill = suidgid_of(st.mode & 07777)))
		return rc;
	return engine_chmod(e, path, st.mode & 07777 & ~kill);
}

int engine_chmod(struct engine *e, const char *path, mode_t mode)
{
	struct pfs_stat st;
	struct node n;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	if ((n.kind == N_DOC || n.kind == N_DOCDIR) && !n.archived) {
		enum od_found open = od_update(e, &n, (uid_t)-1, (gid_t)-1, mode, STORE_TIME_OMIT,
					       STORE_TIME_OMIT);

		rc = open == OD_UNSTORED ? 0 : store_doc_set_mode(e->store, n.item.id, n.rel, mode);
		if (rc == -ENOENT && open)
			rc = 0;
	} else if (n.kind == N_ITEM && !n.archived) {
		rc = store_item_set_owner(e->store, n.item.id, n.item.dir_uid, n.item.dir_gid, mode);
	} else if (n.kind == N_PFS_TMP) {
		rc = packet__tmp_chmod(e, n.name, mode);
	} else {
		rc = packet__node_stat(e, &n, &st, 1);
		if (rc == 0 && (st.mode & 07777) != (mode & 07777))
			rc = -EACCES;
	}
	packet__node_clear(&n);
	return rc;
}

/* A time argument of engine_utimens as the store takes it. */
static int64_t utime_arg(int64_t t, int64_t now)
{
	return t == PFS_TIME_NOW ? now : t == PFS_TIME_OMIT ? STORE_TIME_OMIT : t;
}

int engine_utimens(struct engine *e, const char *path, int64_t atime_ns, int64_t mtime_ns)
{
	int64_t now = util_now_ns();
	struct node n;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	atime_ns = utime_arg(atime_ns, now);
	mtime_ns = utime_arg(mtime_ns, now);
	if (n.archived) {
		rc = -EACCES;
	} else if (n.kind == N_ITEM) {
		rc = store_item_set_times(e->store, n.item.id, atime_ns, mtime_ns);
	} else if (n.kind == N_DOC || n.kind == N_DOCDIR) {
		enum od_found open = od_update(e, &n, (uid_t)-1, (gid_t)-1, (mode_t)-1, atime_ns,
					       mtime_ns);

		rc = open == OD_UNSTORED
			     ? 0
			     : store_doc_set_times(e->store, n.item.id, n.rel, atime_ns, mtime_ns);
		if (rc == -ENOENT && open)
			rc = 0;
	} else if (n.kind == N_PFS_TMP) {
		rc = packet__tmp_touch(e, n.name, mtime_ns == STORE_TIME_OMIT ? -1 : mtime_ns);
	} else if (n.kind == N_CTL || n.kind == N_RECORD || n.kind == N_REGISTRY ||
		   n.kind == N_PIPELINE) {
		rc = 0; /* touch of a trigger or append-only file changes nothing */
	} else {
		rc = packet__is_dir_kind(n.kind) ? 0 : -EACCES;
	}
	packet__node_clear(&n);
	return rc;
}
