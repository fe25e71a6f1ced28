/*
 * fs_team.c - who may use a mount: the gate every request passes (SPEC §3,
 * "a team shares one mount"), and the group membership that chgrp asks.
 *
 * DESIGN
 *
 * Mounted without allow_other, only the mounting user reaches the daemon
 * (the kernel refuses everyone else). With -o allow_other a team shares
 * the mount, and the daemon lets in root, the store owner (the mounting
 * user) and the members of the store's group (the group of the store
 * directory, engine_team); every request of anyone else is answered
 * EACCES, the root's lookup and getattr included. Past the gate, access
 * follows owners and modes, which the kernel checks (default_permissions).
 *
 * One place: the table of operations the session is made with, fs__ops,
 * is the table of handlers (fs__handlers, fs_ops.c) with each request
 * passed through fs__admit first. Only what is no request of a user's
 * passes without it: init, forget, and the releases that end a handle
 * opened while its user was let in.
 *
 * Membership: a request whose filesystem gid is the store's group is a
 * member's. Otherwise the user's groups in the group database
 * (getgrouplist) are asked, and the answer kept for TEAM_TTL_NS per uid in
 * a small table (a user added to or removed from the group is seen within
 * that time); then, for a user the database does not list, the groups of
 * the requesting process itself (fuse_req_getgroups: newgrp, sg). The
 * table is protected by team.lock; the database is asked without it.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "engine.h"
#include "fs_int.h"

/* How long a user's membership, as the group database gave it, is kept. */
#define TEAM_TTL_NS (5 * 1000000000LL)

/* The most supplementary groups asked of the kernel for one request. */
#define REQ_GROUPS 256

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void fs__team_init(struct fs *fs)
{
	engine_team(fs->engine, &fs->team.owner, &fs->team.group);
}

/* Whether the group database lists uid in gid (as its primary group or a
 * supplementary one): 1 or 0 (0 also for a uid it does not know). */
static int db_member(uid_t uid, gid_t gid)
{
	struct passwd pw, *res = NULL;
	gid_t *groups = NULL;
	char *buf;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	int n = 64, i, member = 0;

	if (size < 1024)
		size = 16384;
	buf = malloc((size_t)size);
	if (buf == NULL)
		return 0;
	if (getpwuid_r(uid, &pw, buf, (size_t)size, &res) != 0 || res == NULL)
		goto out;
	if (pw.pw_gid == gid) {
		member = 1;
		goto out;
	}
	for (;;) {
		gid_t *g = realloc(groups, (size_t)n * sizeof(*groups));
		int want = n;

		if (g == NULL)
			goto out;
		groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &want) >= 0) {
			n = want;
			break;
		}
		if (want <= n) /* no growth asked for: give up */
			goto out;
		n = want;
	}
	for (i = 0; i < n && !member; i++)
		member = groups[i] == gid;
out:
	free(groups);
	free(buf);
	return member;
}

/* Whether uid is a member of the store's group by the group database,
 * through the table (see the top). */
static int cached_member(struct fs *fs, uid_t uid)
{
	struct team_slot *s = &fs->team.slots[uid % TEAM_SLOTS];
	int64_t now = now_ns();
	int member, hit;

	pthread_mutex_lock(&fs->team.lock);
	hit = s->expires_ns > now && s->uid == uid;
	member = s->member;
	pthread_mutex_unlock(&fs->team.lock);
	if (hit)
		return member;
	member = db_member(uid, fs->team.group);
	pthread_mutex_lock(&fs->team.lock);
	s->uid = uid;
	s->member = member;
	s->expires_ns = now + TEAM_TTL_NS;
	pthread_mutex_unlock(&fs->team.lock);
	return member;
}

/* Whether the process that made req has gid among its supplementary
 * groups (fuse_req_getgroups): 1, 0, or a negative errno when the kernel
 * cannot say. */
static int req_has_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[REQ_GROUPS];
	int n = fuse_req_getgroups(req, REQ_GROUPS, groups), i;

	if (n < 0)
		return n;
	if (n > REQ_GROUPS)
		n = REQ_GROUPS;
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

int fs__admit(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	struct fs *fs = fs_of(req);

	if (c->uid == 0 || c->uid == fs->team.owner || c->gid == fs->team.group ||
	    cached_member(fs, c->uid) || req_has_group(req, fs->team.group) > 0)
		return 1;
	fuse_reply_err(req, EACCES);
	return 0;
}

int fs__in_group(fuse_req_t req, gid_t gid)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	int r;

	if (c->gid == gid)
		return 1;
	r = req_has_group(req, gid);
	return r >= 0 ? r : db_member(c->uid, gid);
}

/* ---- the gated table of operations ---- */

/* gate_OP: the handler OP of fs__handlers, for an admitted request; pass_OP:
 * the handler, for every one. */
#define GATE(op, params, args)                \
	static void gate_##op params          \
	{                                     \
		if (fs__admit(req))           \
			fs__handlers.op args; \
	}
#define PASS(op, params, args)        \
	static void pass_##op params  \
	{                             \
		fs__handlers.op args; \
	}

static void pass_init(void *userdata, struct fuse_conn_info *conn)
{
	fs__handlers.init(userdata, conn);
}

PASS(forget, (fuse_req_t req, fuse_ino_t ino, uint64_t nlookup), (req, ino, nlookup))
PASS(forget_multi, (fuse_req_t req, size_t count, struct fuse_forget_data *forgets),
     (req, count, forgets))
PASS(release, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
PASS(releasedir, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))

GATE(lookup, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
GATE(getattr, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
GATE(setattr, (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
	       struct fuse_file_info *fi), (req, ino, attr, to_set, fi))
GATE(readlink, (fuse_req_t req, fuse_ino_t ino), (req, ino))
GATE(mknod, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev),
     (req, parent, name, mode, rdev))
GATE(mkdir, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode),
     (req, parent, name, mode))
GATE(unlink, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
GATE(rmdir, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
GATE(symlink, (fuse_req_t req, const char *link, fuse_ino_t parent, const char *name),
     (req, link, parent, name))
GATE(link, (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname),
     (req, ino, newparent, newname))
GATE(rename, (fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	      const char *newname, unsigned int flags), (req, parent, name, newparent, newname, flags))
GATE(open, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
GATE(create, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	      struct fuse_file_info *fi), (req, parent, name, mode, fi))
GATE(read, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
     (req, ino, size, off, fi))
GATE(write, (fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	     struct fuse_file_info *fi), (req, ino, buf, size, off, fi))
GATE(fallocate, (fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		 struct fuse_file_info *fi), (req, ino, mode, off, len, fi))
GATE(flush, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
GATE(fsync, (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi),
     (req, ino, datasync, fi))
GATE(poll, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct fuse_pollhandle *ph),
     (req, ino, fi, ph))
GATE(opendir, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
GATE(readdir, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
     (req, ino, size, off, fi))
GATE(readdirplus, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi), (req, ino, size, off, fi))
GATE(statfs, (fuse_req_t req, fuse_ino_t ino), (req, ino))
GATE(getxattr, (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size),
     (req, ino, name, size))
GATE(setxattr, (fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		int flags), (req, ino, name, value, size, flags))
GATE(listxattr, (fuse_req_t req, fuse_ino_t ino, size_t size), (req, ino, size))
GATE(removexattr, (fuse_req_t req, fuse_ino_t ino, const char *name), (req, ino, name))

const struct fuse_lowlevel_ops fs__ops = {
	.init = pass_init,
	.lookup = gate_lookup,
	.forget = pass_forget,
	.forget_multi = pass_forget_multi,
	.getattr = gate_getattr,
	.setattr = gate_setattr,
	.readlink = gate_readlink,
	.mknod = gate_mknod,
	.mkdir = gate_mkdir,
	.unlink = gate_unlink,
	.rmdir = gate_rmdir,
	.symlink = gate_symlink,
	.link = gate_link,
	.rename = gate_rename,
	.open = gate_open,
	.create = gate_create,
	.read = gate_read,
	.write = gate_write,
	.flush = gate_flush,
	.fallocate = gate_fallocate,
	.release = pass_release,
	.fsync = gate_fsync,
	.poll = gate_poll,
	.opendir = gate_opendir,
	.readdir = gate_readdir,
	.readdirplus = gate_readdirplus,
	.releasedir = pass_releasedir,
	.statfs = gate_statfs,
	.getxattr = gate_getxattr,
	.setxattr = gate_setxattr,
	.listxattr = gate_listxattr,
	.removexattr = gate_removexattr,
};
