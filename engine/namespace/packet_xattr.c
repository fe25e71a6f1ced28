/*
 * packet_xattr.c - extended attributes in the packet namespace (SPEC §3:
 * `user.*` xattrs, kept in the store). engine.h documents the functions.
 *
 * Design. A packet offers the user namespace alone, on what a user makes
 * (documents, their directories, item directories and learnings/): those
 * attributes live in the store's xattrs table, keyed like the documents
 * (engine/store/store_xattr.c). Other namespaces (security., trusted.,
 * system.) answer as on a file system without them: nothing to read,
 * ENOTSUP to a write; the kernel asks for security.capability before each
 * write to a file, and that answer costs no SQLite statement. Generated
 * entries (views, logs, ctl, the root) hold no attributes.
 */
#include <errno.h>
#include <string.h>

#include "packet_int.h"

#define USER_PREFIX "user."

/* Resolves path into n and says where its attributes live: 1 with *rel
 * (the path inside the item; "" for the item directory) for an entry that
 * keeps attributes, 0 for one that cannot (n resolved all the same), or a
 * negative errno (n not resolved). */
static int xattr_entry(struct engine *e, const char *path, struct node *n, const char **rel)
{
	int rc = packet__resolve(e, path, n);

	if (rc)
		return rc;
	if (n->kind == N_DOC || n->kind == N_DOCDIR) {
		*rel = n->rel;
		return 1;
	}
	if (n->kind == N_ITEM) {
		*rel = "";
		return 1;
	}
	return 0;
}

static int user_name(const char *name)
{
	return strncmp(name, USER_PREFIX, sizeof(USER_PREFIX) - 1) == 0 &&
	       name[sizeof(USER_PREFIX) - 1] != '\0';
}

int engine_getxattr(struct engine *e, const char *path, const char *name, char **value,
		    size_t *len)
{
	const char *rel = NULL;
	struct node n;
	int rc;

	if (!user_name(name))
		return -ENODATA;
	rc = xattr_entry(e, path, &n, &rel);
	if (rc < 0)
		return rc;
	rc = rc ? store_xattr_get(e->store, n.item.id, rel, name, value, len) : -ENODATA;
	packet__node_clear(&n);
	return rc;
}

/* What setting or removing name at path writes to: 0 with n resolved
 * (packet__node_clear it after) and *rel set, or a negative errno with n
 * not resolved: absent as what a name outside user. or a generated entry
 * gives, -EACCES under .archive/. */
static int xattr_writable(struct engine *e, const char *path, const char *name, int absent,
			  struct node *n, const char **rel)
{
	int rc;

	if (!user_name(name))
		return absent;
	rc = xattr_entry(e, path, n, rel);
	if (rc < 0)
		return rc;
	if (rc == 0 || n->archived) {
		rc = rc == 0 ? absent : -EACCES;
		packet__node_clear(n);
		return rc;
	}
	return 0;
}

int engine_setxattr(struct engine *e, const char *path, const char *name, const void *value,
		    size_t len, int how)
{
	const char *rel = NULL;
	struct node n;
	int rc = xattr_writable(e, path, name, -ENOTSUP, &n, &rel);

	if (rc)
		return rc;
	rc = store_xattr_set(e->store, n.item.id, rel, name, value, len,
			     how == ENGINE_XATTR_CREATE    ? STORE_XATTR_CREATE
			     : how == ENGINE_XATTR_REPLACE ? STORE_XATTR_REPLACE
							   : 0);
	packet__node_clear(&n);
	return rc;
}

int engine_listxattr(struct engine *e, const char *path, struct buf *names)
{
	const char *rel = NULL;
	struct node n;
	int rc = xattr_entry(e, path, &n, &rel);

	if (rc < 0)
		return rc;
	if (rc)
		rc = store_xattr_list(e->store, n.item.id, rel, names);
	packet__node_clear(&n);
	return rc;
}

int engine_removexattr(struct engine *e, const char *path, const char *name)
{
	const char *rel = NULL;
	struct node n;
	int rc = xattr_writable(e, path, name, -ENODATA, &n, &rel);

	if (rc)
		return rc;
	rc = store_xattr_remove(e->store, n.item.id, rel, name);
	packet__node_clear(&n);
	return rc;
}
