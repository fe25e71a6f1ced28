/*
 * fs_ops.c - the FUSE low-level operations on names and attributes
 * (lookup, forget, getattr, setattr, readlink, mknod, mkdir, unlink,
 * rmdir, symlink, link, rename, statfs), the paths they work on, and the
 * table of all operations; open files are fs_ops_file.c's, directory
 * listings fs_ops_dir.c's, extended attributes fs_ops_xattr.c's.
 *
 * DESIGN
 *
 * Inodes. The engine is addressed by path; the inode table (inode.c) maps
 * the kernel's inode numbers to paths, counts lookups and is re-keyed on
 * rename and unlink. Every reply that hands an inode to the kernel adds one
 * lookup, and takes it back when the reply fails (an interrupted request).
 *
 * Left to the kernel on purpose: locks (getlk/setlk/flock), so the kernel
 * does fcntl and flock locking locally, which is correct on a single host;
 * and access, which default_permissions makes the kernel answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include "engine.h"
#include "fs_int.h"
#include "inode.h"
#include "notify.h"

#define MAX_WRITE (1u << 20)

/*
 * The path of ino (caller frees *out). An inode without a path was replaced
 * by a rename or unlinked after the kernel looked it up: -ESTALE, on which
 * the VFS looks the name up once more and retries open, stat, chmod...
 * (an open racing a rename-over then opens the new file, as on a local
 * disk, instead of failing with ENOENT).
 */
int fs__path_of(struct fs *fs, uint64_t ino, char **out)
{
	int r = inode_path(fs->inodes, ino, out);

	if (r == -ENOENT && inode_removed(fs->inodes, ino))
		return -ENOENT; /* a removed directory (inode_removed) */
	return r == -ENOENT ? -ESTALE : r;
}

/* "/a" + "b" -> "/a/b"; "/" + "b" -> "/b". Caller frees *out. */
int fs__join(const char *dir, const char *name, char **out)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p;

	if (nl > NAME_MAX)
		return -ENAMETOOLONG;
	p = malloc(dl + nl + 2);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, dir, dl);
	if (dl > 1)
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	*out = p;
	return 0;
}

/* The parent directory of a normalised path ("/" for "/a" and for "/"). */
int fs__parent_of(const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash && slash != path ? (size_t)(slash - path) : 1;

	*out = strndup(path, len);
	return *out ? 0 : -ENOMEM;
}

void fs__refused(const char *op, const char *path, int r)
{
	if (r != -EACCES && r != -EPERM)
		return;
	util_log(LOG_NOTICE, "%s %s: refused: %s (the mount's own rule: a generated or read-only "
		 "entry, an archived item, or an owner's check)", op, path ? path : "(unlinked)",
		 strerror(-r));
}

/* The path of name in the directory parent. Caller frees *out. */
int fs__child_path(struct fs *fs, fuse_ino_t parent, const char *name, char **out)
{
	char *dir;
	int r = inode_path(fs->inodes, parent, &dir);

	if (r < 0)
		return r;
	if (strcmp(name, ".") == 0) {
		*out = dir;
		return 0;
	}
	if (strcmp(name, "..") == 0)
		r = fs__parent_of(dir, out);
	else
		r = fs__join(dir, name, out);
	free(dir);
	return r;
}

/* Hands the inode of path to the kernel as a lookup reply; ps was asked of
 * the engine after fs__change_count gave seen. */
static void reply_entry(fuse_req_t req, const char *path, const struct pfs_stat *ps,
			uint64_t seen)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e;
	uint64_t ino;
	int r = inode_ref(fs->inodes, path, ps->file_id, &ino);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fs__fill_entry(req, ino, ps, seen, &e);
	if (fuse_reply_entry(req, &e) != 0)
		inode_forget(fs->inodes, ino, 1);
}

/* What the notifier is told of an inode, from ps, what anyone is told
 * (notify.h): a mode it alone is told the owner may write
 * (notifier_write_bit) must not reach anyone else, so it is not cached. */
void fs__notifier_attrs(fuse_req_t req, struct pfs_stat *ps)
{
	struct notifier *n = fs_of(req)->notifier;

	if (!S_ISLNK(ps->mode) && !(ps->mode & S_IWUSR) && notifier_write_bit(n, req)) {
		ps->mode |= S_IWUSR;
		ps->stable = 0;
	}
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* libfuse lowers this to what its buffers hold; the kernel then
	 * also allows reads of that size (max_pages). */
	conn->max_write = MAX_WRITE;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	uint64_t seen = fs__change_count(fs);
	struct pfs_stat ps;
	char *path, as[PATH_MAX];
	int r = fs__child_path(fs, parent, name, &path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	switch (notifier_lookup(fs->notifier, req, path, as, sizeof(as))) {
	case NOTIFY_HIDE:
		r = -ENOENT;
		break;
	case NOTIFY_REVEAL:
		/* Another path's attributes, under this one's inode. */
		r = engine_getattr(fs->engine, as, &ps);
		ps.stable = 0;
		break;
	default: {
		int keep = 0;

		r = engine_lookup(fs->engine, path, &ps,
				  fs__miss_may_keep(req, name, path) ? &keep : NULL);
		if (r == -ENOENT) {
			fs__reply_missing(req, keep, seen);
			free(path);
			return;
		}
		break;
	}
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		fs__notifier_attrs(req, &ps);
		reply_entry(req, path, &ps, seen);
	}
	free(path);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_forget(fs_of(req)->inodes, ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fs *fs = fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		inode_forget(fs->inodes, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* Current attributes of ino: through fi when given, else by path, else
 * (the path was unlinked) through any open file of ino. A file (no
 * directory: inode_is_leaf) whose path names nothing in the engine (a new
 * document whose first commit failed, hidden while its writer holds it;
 * what the engine removed on its own) gives -ESTALE: the kernel's entry of
 * the name is stale, and the VFS looks the name up once more (the entry a
 * create gives is kept: fs_ops_file.c, "Creates"). A directory's gives
 * -ENOENT: the kernel retries no lookup of a directory it holds open (the
 * dirfd of unlinkat, a cwd). */
static int getattr_of(struct fs *fs, fuse_ino_t ino, struct fuse_file_info *fi,
		      struct pfs_stat *ps)
{
	char *path;
	int r;

	if (fi && fi->fh) {
		r = engine_file_getattr(file_of(fi), ps);
		if (r != -ENOSYS)
			return r;
		/* Views and logs have no attributes of their own handle. */
	}
	r = fs__path_of(fs, ino, &path);
	if (r == 0) {
		r = engine_getattr(fs->engine, path, ps);
		free(path);
		if (r == -ENOENT && inode_is_leaf(fs->inodes, ino))
			return -ESTALE;
	}
	if (r == -ENOENT || r == -ESTALE) {
		int o = fs__open_getattr(fs, ino, ps);

		if (o == 0 || r == -ENOENT)
			r = o;
	}
	if (r == -ESTALE && inode_replaced(fs->inodes, ino, &path) == 0) {
		/* A file a rename replaced, no longer open: what it held then,
		 * with no link left, as on a local disk (inode_replaced). */
		r = engine_getattr(fs->engine, path, ps);
		free(path);
		if (r == 0)
			ps->unlinked = 1;
		else
			r = -ESTALE;
	}
	return r;
}

/* The attributes the notifier is told: it opens views only to replay their
 * changes (notify.h), and the kernel asks for attributes at each of its
 * opens (the permission check of default_permissions, for an attribute
 * timeout of 0), so views are not rendered for it (size 0). */
static int notifier_getattr(struct fs *fs, fuse_ino_t ino, struct pfs_stat *ps)
{
	char *path;
	int r = fs__path_of(fs, ino, &path);

	if (r == 0) {
		r = engine_getattr_unrendered(fs->engine, path, ps);
		free(path);
	}
	/* A file's size may be a rendering's: not cached. A directory's
	 * attributes are the same rendered or not. */
	if (r == 0 && !S_ISDIR(ps->mode))
		ps->stable = 0;
	return r;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct pfs_stat ps;
	uint64_t seen = fs__change_count(fs);
	int r = notifier_is_self(fs->notifier, req) ? notifier_getattr(fs, ino, &ps)
						    : getattr_of(fs, ino, fi, &ps);

	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		fs__notifier_attrs(req, &ps);
		fs__reply_attr(req, ino, &ps, seen);
	}
}

/*
 * The chown part of a setattr, under POSIX rules (as Linux's chown_ok and
 * chgrp_ok, which the kernel checks first under default_permissions): root
 * may give anything away; the owner may "change" the owner to itself, and
 * the group to one it is in (fs__in_group) or to the one it has; anyone
 * else gets EPERM. The engine clears set-ID bits for anyone but root.
 */
static int chown_request(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			 const char *path, const struct stat *attr, int to_set)
{
	struct fs *fs = fs_of(req);
	const struct fuse_ctx *c = fuse_req_ctx(req);
	uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
	gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
	struct pfs_stat ps;
	int r = getattr_of(fs, ino, fi, &ps);

	if (r < 0)
		return r;
	if (path == NULL) /* unlinked, still open: its owner stays as it is */
		return (uid == (uid_t)-1 || uid == ps.uid) && (gid == (gid_t)-1 || gid == ps.gid)
			       ? 0
			       : -ENOENT;
	if (c->uid != 0) {
		if (uid != (uid_t)-1 && (c->uid != ps.uid || uid != ps.uid))
			return -EPERM;
		if (gid != (gid_t)-1 &&
		    (c->uid != ps.uid || (gid != ps.gid && !fs__in_group(req, gid))))
			return -EPERM;
	}
	/* Under HANDLE_KILLPRIV_V2 the kernel leaves a chown's clearing of the
	 * set-user-ID and set-group-ID bits to the file system, whoever asks,
	 * as Linux's VFS does it for root too (fs_io.c). */
	return engine_chown(fs->engine, path, uid, gid, c->uid == 0 && !fs__io_killpriv());
}

/*
 * The kernel passes fi for any setattr through an open file, directories
 * included, so fi->fh is used only for a size change, which the VFS allows
 * on regular files only.
 */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_stat ps;
	char *path = NULL;
	uint64_t seen;
	int r;

	caller_of(req, &who);
	r = inode_path(fs->inodes, ino, &path);
	if (r < 0 && !(r == -ENOENT && fi && fi->fh))
		goto out;
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		r = chown_request(req, ino, fi, path, attr, to_set);
		if (r < 0)
			goto out;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (fi && fi->fh)
			r = engine_file_truncate(file_of(fi), (uint64_t)attr->st_size, &who);
		else
			r = engine_truncate(fs->engine, path, (uint64_t)attr->st_size, &who);
		if (r < 0)
			goto out;
		/* A truncate by a process without CAP_FSETID (fs_io.c). */
		if (fs__io_kill_suidgid())
			r = fi && fi->fh ? engine_file_kill_suidgid(file_of(fi))
					 : path ? engine_kill_suidgid(fs->engine, path) : -ENOENT;
		if (r < 0)
			goto out;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW |
		      FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW) &&
	    path == NULL) {
		r = -ENOENT;
		goto out;
	}
	if (to_set & FUSE_SET_ATTR_MODE) {
		r = engine_chmod(fs->engine, path, attr->st_mode & 07777);
		if (r < 0)
			goto out;
	}
	/* A time left out (UTIME_OMIT) keeps its stored value. */
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_ATIME |
		      FUSE_SET_ATTR_ATIME_NOW)) {
		int64_t at = PFS_TIME_OMIT, mt = PFS_TIME_OMIT;

		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			at = PFS_TIME_NOW;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			at = (int64_t)attr->st_atim.tv_sec * 1000000000 + attr->st_atim.tv_nsec;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			mt = PFS_TIME_NOW;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			mt = (int64_t)attr->st_mtim.tv_sec * 1000000000 + attr->st_mtim.tv_nsec;
		r = fs__open_flush(fs, ino, &who);
		if (r < 0)
			goto out;
		r = engine_utimens(fs->engine, path, at, mt);
		if (r < 0)
			goto out;
	}
	seen = fs__change_count(fs);
	r = getattr_of(fs, ino, fi, &ps);
out:
	fs__refused("setattr", path, r);
	free(path);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fs__reply_attr(req, ino, &ps, seen);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = fs_of(req);
	char buf[PATH_MAX];
	char *path;
	int r = fs__path_of(fs, ino, &path);

	if (r == 0) {
		r = engine_readlink(fs->engine, path, buf, sizeof(buf));
		free(path);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_readlink(req, buf);
}

/* Creates the empty document path and replies with its entry. */
static void make_node(fuse_req_t req, const char *path, mode_t mode)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_file *f;
	struct pfs_stat ps;
	uint64_t seen = fs__change_count(fs);
	int r;

	caller_of(req, &who);
	r = engine_file_open(fs->engine, path, O_CREAT | O_EXCL | O_WRONLY, mode & 07777, &who,
			     &f);
	if (r < 0)
		goto fail;
	r = engine_file_flush(f, &who);
	if (r == 0)
		r = engine_file_getattr(f, &ps);
	engine_file_release(f);
	if (r < 0)
		goto fail;
	reply_entry(req, path, &ps, seen);
	return;
fail:
	fuse_reply_err(req, -r);
}

/* Replies to a request that made the entry path (r: 0, or the -errno of
 * the making) with its entry; seen as fs__change_count gave it before. */
static void reply_made(fuse_req_t req, const char *path, int r, uint64_t seen)
{
	struct pfs_stat ps;

	if (r == 0)
		r = engine_getattr(fs_of(req)->engine, path, &ps);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	/* The kernel takes a new entry's attributes without comparing
	 * versions, so an invalidation sent while the notifier's reply was
	 * under way would not stop them: the notifier's are not cached. */
	if (notifier_is_self(fs_of(req)->notifier, req))
		ps.stable = 0;
	reply_entry(req, path, &ps, seen);
}

/* A document (S_IFREG), or a FIFO, socket or device node, which the
 * engine keeps with its type and rdev (the kernel has refused a device to
 * a caller without CAP_MKNOD; the engine refuses it to anyone but root). */
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	uint64_t seen = fs__change_count(fs);
	char *path;
	int r = fs__child_path(fs, parent, name, &path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (S_ISREG(mode)) {
		make_node(req, path, mode);
	} else {
		caller_of(req, &who);
		r = engine_mknod(fs->engine, path, mode, (uint64_t)rdev, &who);
		reply_made(req, path, r, seen);
	}
	free(path);
}

/* The path of name in the directory parent into *path (the caller frees
 * it) and the process that made req into *who, for a request that changes
 * the directory; on the request's FUSE thread. Returns 0, or -errno after
 * replying req with the error. */
static int change_request(fuse_req_t req, fuse_ino_t parent, const char *name, char **path,
			  struct pfs_caller *who)
{
	int r = fs__child_path(fs_of(req), parent, name, path);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return r;
	}
	caller_of(req, who);
	return 0;
}

/* Makes the directory name in parent (link NULL; mode: its permission bits)
 * or the symlink name to link, which the engine keeps as a document whose
 * content is the target, and replies with its entry. */
static void make_entry(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       const char *link)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	uint64_t seen = fs__change_count(fs);
	char *path;
	int r = change_request(req, parent, name, &path, &who);

	if (r < 0)
		return;
	if (link) {
		r = engine_symlink(fs->engine, path, link, &who);
	} else {
		/* The notifier makes an existing directory again (an archived
		 * item's): it is new to the kernel, which tells inotify. */
		if (!notifier_is_self(fs->notifier, req))
			r = engine_mkdir(fs->engine, path, mode & 07777, &who);
		fs__refused("mkdir", path, r);
	}
	reply_made(req, path, r, seen);
	free(path);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_entry(req, parent, name, mode, NULL);
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	char *path;
	int r = change_request(req, parent, name, &path, &who);

	if (r < 0)
		return;
	fs__ns_change_begin(fs);
	/* The notifier removes what the engine has archived already. */
	if (dir && notifier_is_self(fs->notifier, req))
		r = 0;
	else if (dir)
		r = engine_rmdir(fs->engine, path, &who);
	else
		r = engine_unlink(fs->engine, path, &who);
	if (r == 0)
		inode_unlink(fs->inodes, path);
	fs__ns_change_end(fs);
	fs__refused(dir ? "rmdir" : "unlink", path, r);
	free(path);
	fuse_reply_err(req, -r);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 1);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	make_entry(req, parent, name, 0, link);
}

/* A hard link: the engine gives the file of ino the name newname, and the
 * reply hands ino over again with it (inode.h: the names of one file are
 * one inode, as Linux expects of link(2)). What the kernel cached of ino
 * is dropped first; from now on its attributes are not cached at all (a
 * file with several names is never stable: struct pfs_stat). */
static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	struct pfs_stat ps;
	uint64_t seen = fs__change_count(fs);
	char *from = NULL, *to = NULL;
	int r = fs__path_of(fs, ino, &from);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	r = change_request(req, newparent, newname, &to, &who);
	if (r == 0) {
		fs__ns_change_begin(fs);
		r = engine_link(fs->engine, from, to, &who);
		if (r == 0)
			r = engine_getattr(fs->engine, to, &ps);
		if (r == 0) {
			fs__drop_attrs(fs, from);
			inode_set_file(fs->inodes, ino, ps.file_id);
		}
		fs__ns_change_end(fs);
		reply_made(req, to, r, seen);
	}
	free(from);
	free(to);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct fs *fs = fs_of(req);
	struct pfs_caller who;
	char *from = NULL, *to = NULL, *replaced = NULL;
	int r;

	r = fs__child_path(fs, parent, name, &from);
	if (r == 0)
		r = fs__child_path(fs, newparent, newname, &to);
	if (r == 0) {
		caller_of(req, &who);
		fs__ns_change_begin(fs);
		r = engine_rename(fs->engine, from, to, flags, &who, &replaced);
		fs__refused("rename", from, r);
		/* inode_rename keeps the table consistent even when it runs out
		 * of memory; the rename itself has happened. */
		if (r == 0)
			inode_rename(fs->inodes, from, to, replaced);
		fs__ns_change_end(fs);
	}
	free(from);
	free(to);
	free(replaced);
	fuse_reply_err(req, -r);
}

/* The space of the file system holding the store, which is where packet
 * content lives. */
static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (statvfs(fs_of(req)->store, &sv) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	sv.f_namemax = NAME_MAX;
	sv.f_flag = 0;
	fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops fs__handlers = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.link = op_link,
	.rename = op_rename,
	.open = fs__op_open,
	.create = fs__op_create,
	.read = fs__op_read,
	.write = fs__op_write,
	.flush = fs__op_flush,
	.fallocate = fs__op_fallocate,
	.release = fs__op_release,
	.fsync = fs__op_fsync,
	.poll = fs__op_poll,
	.opendir = fs__op_opendir,
	.readdir = fs__op_readdir,
	.readdirplus = fs__op_readdirplus,
	.releasedir = fs__op_releasedir,
	.statfs = op_statfs,
	.getxattr = fs__op_getxattr,
	.setxattr = fs__op_setxattr,
	.listxattr = fs__op_listxattr,
	.removexattr = fs__op_removexattr,
};
