/*
 * fs_ops_xattr.c - the FUSE low-level extended attribute operations
 * (getxattr, setxattr, listxattr, removexattr) of fs__handlers.
 *
 * A packet keeps attributes of the user namespace (engine.h,
 * engine_getxattr). A name of any other namespace is answered here,
 * without the engine: the kernel asks for security.capability before every
 * write to a file, and that question must cost no more than a round trip.
 * Sizes follow getxattr(2): a request of size 0 asks for the length, one
 * too small gets ERANGE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include <fuse_lowlevel.h>

#include "engine.h"
#include "fs_int.h"

static int user_name(const char *name)
{
	return strncmp(name, "user.", 5) == 0;
}

/* The path of ino for a request that reads or removes the attribute name
 * into *path (the caller frees it). 0, -ENODATA for a name outside the
 * user namespace (no such attribute), or fs__path_of's error. */
static int user_attr_path(struct fs *fs, fuse_ino_t ino, const char *name, char **path)
{
	return user_name(name) ? fs__path_of(fs, ino, path) : -ENODATA;
}

/* Replies req with data of len bytes as getxattr(2) and listxattr(2) do
 * for a buffer of size bytes. */
static void reply_sized(fuse_req_t req, const char *data, size_t len, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, data, len);
}

void fs__op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs *fs = fs_of(req);
	char *path, *value = NULL;
	size_t len = 0;
	int r = user_attr_path(fs, ino, name, &path);

	if (r == 0) {
		r = engine_getxattr(fs->engine, path, name, &value, &len);
		free(path);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_sized(req, value, len, size);
	free(value);
}

void fs__op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags)
{
	struct fs *fs = fs_of(req);
	char *path;
	int r, how = 0;

	if (!user_name(name)) {
		fuse_reply_err(req, ENOTSUP);
		return;
	}
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE) ||
	    (flags & (XATTR_CREATE | XATTR_REPLACE)) == (XATTR_CREATE | XATTR_REPLACE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (flags & XATTR_CREATE)
		how = ENGINE_XATTR_CREATE;
	else if (flags & XATTR_REPLACE)
		how = ENGINE_XATTR_REPLACE;
	r = fs__path_of(fs, ino, &path);
	if (r == 0) {
		r = engine_setxattr(fs->engine, path, name, value, size, how);
		free(path);
	}
	fuse_reply_err(req, -r);
}

void fs__op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs *fs = fs_of(req);
	struct buf names;
	char *path;
	int r;

	buf_init(&names);
	r = fs__path_of(fs, ino, &path);
	if (r == 0) {
		r = engine_listxattr(fs->engine, path, &names);
		free(path);
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_sized(req, names.data, names.len, size);
	buf_free(&names);
}

void fs__op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs *fs = fs_of(req);
	char *path;
	int r = user_attr_path(fs, ino, name, &path);

	if (r == 0) {
		r = engine_removexattr(fs->engine, path, name);
		free(path);
	}
	fuse_reply_err(req, -r);
}
