/*
 * inode.c - the inode table: inode number <-> path, with lookup counts.
 *
 * Design: each inode is one node chained into two hash tables of the same
 * power-of-two size, one keyed by number and one by path (FNV-1a). Pathless
 * (unlinked) inodes sit only in the number table. Both tables double when
 * the node count passes the bucket count. Renames and unlinks of a
 * directory touch every node below it; they walk the number table, which is
 * proportional to the inodes the kernel holds, not to the store. Those of
 * a node known to be no directory (inode_set_leaf) touch that node alone.
 *
 * Invariants: node->path == NULL exactly when the node is not in the path
 * table; next_ino only grows; the root node is created with the table and
 * freed only with it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inode.h"

#define INITIAL_BUCKETS 64

struct inode {
	uint64_t ino;
	uint64_t nlookup;       /* protected by inode_table.lock */
	char *path;             /* protected by inode_table.lock; NULL once unlinked */
	int cached;             /* protected by inode_table.lock: see inode_set_cached */
	int leaf;               /* protected by inode_table.lock: see inode_set_leaf */
	struct inode *ino_next; /* protected by inode_table.lock */
	struct inode *path_next;
};

struct inode_table {
	pthread_mutex_t lock;
	struct inode **by_ino;  /* protected by lock */
	struct inode **by_path; /* protected by lock */
	size_t nbuckets;        /* protected by lock; a power of two */
	size_t count;           /* protected by lock */
	uint64_t next_ino;      /* protected by lock */
	uint64_t generation;    /* constant after inode_table_new */
};

static size_t hash_ino(uint64_t ino)
{
	ino ^= ino >> 33;
	ino *= 0xff51afd7ed558ccdULL;
	ino ^= ino >> 33;
	return (size_t)ino;
}

static size_t hash_path(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (size_t)h;
}

/* Whether path is below dir ("/a/b" is below "/a", "/ab" is not). */
static int is_below(const char *path, const char *dir, size_t dirlen)
{
	if (dirlen == 1)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, dir, dirlen) == 0 && path[dirlen] == '/';
}

static struct inode *find_ino(struct inode_table *t, uint64_t ino)
{
	struct inode *n = t->by_ino[hash_ino(ino) & (t->nbuckets - 1)];

	while (n && n->ino != ino)
		n = n->ino_next;
	return n;
}

static struct inode *find_path(struct inode_table *t, const char *path)
{
	struct inode *n = t->by_path[hash_path(path) & (t->nbuckets - 1)];

	while (n && strcmp(n->path, path) != 0)
		n = n->path_next;
	return n;
}

static void link_ino(struct inode_table *t, struct inode *n)
{
	struct inode **b = &t->by_ino[hash_ino(n->ino) & (t->nbuckets - 1)];

	n->ino_next = *b;
	*b = n;
}

static void link_path(struct inode_table *t, struct inode *n)
{
	struct inode **b = &t->by_path[hash_path(n->path) & (t->nbuckets - 1)];

	n->path_next = *b;
	*b = n;
}

static void unlink_ino(struct inode_table *t, struct inode *n)
{
	struct inode **p = &t->by_ino[hash_ino(n->ino) & (t->nbuckets - 1)];

	while (*p != n)
		p = &(*p)->ino_next;
	*p = n->ino_next;
}

/* Takes n out of the path table and frees its path. */
static void drop_path(struct inode_table *t, struct inode *n)
{
	struct inode **p = &t->by_path[hash_path(n->path) & (t->nbuckets - 1)];

	while (*p != n)
		p = &(*p)->path_next;
	*p = n->path_next;
	free(n->path);
	n->path = NULL;
	n->path_next = NULL;
}

/* Doubles both tables. Returns 0 or -ENOMEM (the tables stay as they were). */
static int grow(struct inode_table *t)
{
	size_t nb = t->nbuckets * 2, ob = t->nbuckets, i;
	struct inode **bi = calloc(nb, sizeof(*bi));
	struct inode **bp = calloc(nb, sizeof(*bp));
	struct inode **old = t->by_ino;

	if (bi == NULL || bp == NULL) {
		free(bi);
		free(bp);
		return -ENOMEM;
	}
	free(t->by_path);
	t->by_ino = bi;
	t->by_path = bp;
	t->nbuckets = nb;
	for (i = 0; i < ob; i++) {
		struct inode *n = old[i], *next;

		for (; n; n = next) {
			next = n->ino_next;
			link_ino(t, n);
			if (n->path)
				link_path(t, n);
		}
	}
	free(old);
	return 0;
}

int inode_table_new(struct inode_table **out)
{
	struct inode_table *t = calloc(1, sizeof(*t));
	struct inode *root = calloc(1, sizeof(*root));
	struct timespec ts;

	if (t == NULL || root == NULL)
		goto fail;
	t->nbuckets = INITIAL_BUCKETS;
	t->by_ino = calloc(t->nbuckets, sizeof(*t->by_ino));
	t->by_path = calloc(t->nbuckets, sizeof(*t->by_path));
	root->path = strdup("/");
	if (t->by_ino == NULL || t->by_path == NULL || root->path == NULL)
		goto fail_arrays;
	pthread_mutex_init(&t->lock, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	t->generation = (uint64_t)ts.tv_sec;
	root->ino = INODE_ROOT;
	root->nlookup = 1;
	link_ino(t, root);
	link_path(t, root);
	t->count = 1;
	t->next_ino = INODE_ROOT + 1;
	*out = t;
	return 0;

fail_arrays:
	free(root->path);
	free(t->by_ino);
	free(t->by_path);
fail:
	free(root);
	free(t);
	return -ENOMEM;
}

void inode_table_free(struct inode_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nbuckets; i++) {
		struct inode *n = t->by_ino[i], *next;

		for (; n; n = next) {
			next = n->ino_next;
			free(n->path);
			free(n);
		}
	}
	free(t->by_ino);
	free(t->by_path);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

uint64_t inode_generation(const struct inode_table *t)
{
	return t->generation;
}

int inode_ref(struct inode_table *t, const char *path, uint64_t *ino)
{
	struct inode *n;
	int r = 0;

	pthread_mutex_lock(&t->lock);
	n = find_path(t, path);
	if (n == NULL) {
		if (t->count >= t->nbuckets && grow(t) < 0) {
			r = -ENOMEM;
			goto out;
		}
		n = calloc(1, sizeof(*n));
		if (n == NULL || (n->path = strdup(path)) == NULL) {
			free(n);
			r = -ENOMEM;
			goto out;
		}
		n->ino = t->next_ino++;
		link_ino(t, n);
		link_path(t, n);
		t->count++;
	}
	n->nlookup++;
	*ino = n->ino;
out:
	pthread_mutex_unlock(&t->lock);
	return r;
}

uint64_t inode_peek(struct inode_table *t, const char *path)
{
	struct inode *n;
	uint64_t ino;

	pthread_mutex_lock(&t->lock);
	n = find_path(t, path);
	ino = n ? n->ino : 0;
	pthread_mutex_unlock(&t->lock);
	return ino;
}

void inode_set_cached(struct inode_table *t, uint64_t ino)
{
	struct inode *n;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	if (n)
		n->cached = 1;
	pthread_mutex_unlock(&t->lock);
}

void inode_set_leaf(struct inode_table *t, uint64_t ino, int leaf)
{
	struct inode *n;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	if (n)
		n->leaf = leaf != 0;
	pthread_mutex_unlock(&t->lock);
}

uint64_t inode_peek_cached(struct inode_table *t, const char *path)
{
	struct inode *n;
	uint64_t ino;

	pthread_mutex_lock(&t->lock);
	n = find_path(t, path);
	ino = n && n->cached ? n->ino : 0;
	pthread_mutex_unlock(&t->lock);
	return ino;
}

void inode_forget(struct inode_table *t, uint64_t ino, uint64_t count)
{
	struct inode *n;

	if (ino == INODE_ROOT)
		return;
	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	if (n == NULL)
		goto out;
	n->nlookup = count < n->nlookup ? n->nlookup - count : 0;
	if (n->nlookup == 0) {
		if (n->path)
			drop_path(t, n);
		unlink_ino(t, n);
		t->count--;
		free(n);
	}
out:
	pthread_mutex_unlock(&t->lock);
}

int inode_path(struct inode_table *t, uint64_t ino, char **out)
{
	struct inode *n;
	int r = 0;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	if (n == NULL || n->path == NULL)
		r = -ENOENT;
	else if ((*out = strdup(n->path)) == NULL)
		r = -ENOMEM;
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* Drops the path of the node at path and of every node below it. */
static void unlink_locked(struct inode_table *t, const char *path)
{
	size_t len = strlen(path), i;
	struct inode *n = find_path(t, path);

	if (n && n->leaf) {
		drop_path(t, n);
		return;
	}
	for (i = 0; i < t->nbuckets; i++) {
		for (n = t->by_ino[i]; n; n = n->ino_next) {
			if (n->path && n->ino != INODE_ROOT && is_below(n->path, path, len))
				drop_path(t, n);
		}
	}
	n = find_path(t, path);
	if (n && n->ino != INODE_ROOT)
		drop_path(t, n);
}

void inode_unlink(struct inode_table *t, const char *path)
{
	pthread_mutex_lock(&t->lock);
	unlink_locked(t, path);
	pthread_mutex_unlock(&t->lock);
}

/* inode_rename of the leaf node to path to, the table locked: nothing can
 * be below either path (the node at to, if any, is no directory either: a
 * rename never puts a file over one). 0 or -ENOMEM as inode_rename. */
static int rename_leaf(struct inode_table *t, struct inode *node, const char *to)
{
	char *path = strdup(to);

	unlink_locked(t, to);
	drop_path(t, node);
	if (path == NULL)
		return -ENOMEM;
	node->path = path;
	link_path(t, node);
	return 0;
}

/* A node to re-key in a rename, with its new path made in advance. */
struct rekey {
	struct inode *node;
	char *path;
};

int inode_rename(struct inode_table *t, const char *from, const char *to)
{
	size_t flen = strlen(from), tlen = strlen(to), n = 0, cap = 8, i;
	struct rekey *v = NULL;
	struct inode *node;
	int r = 0;

	if (strcmp(from, to) == 0)
		return 0;
	pthread_mutex_lock(&t->lock);
	node = find_path(t, from);
	if (node && node->leaf) {
		r = rename_leaf(t, node, to);
		goto out;
	}
	/* Make every new path first, so that a failed allocation changes
	 * nothing but the paths of the renamed subtree. */
	v = malloc(cap * sizeof(*v));
	if (v == NULL)
		goto nomem;
	for (i = 0; i < t->nbuckets; i++) {
		for (node = t->by_ino[i]; node; node = node->ino_next) {
			size_t plen;

			if (node->path == NULL || node->ino == INODE_ROOT)
				continue;
			if (strcmp(node->path, from) != 0 && !is_below(node->path, from, flen))
				continue;
			if (n == cap) {
				struct rekey *nv = realloc(v, 2 * cap * sizeof(*v));

				if (nv == NULL)
					goto nomem;
				v = nv;
				cap *= 2;
			}
			plen = strlen(node->path);
			v[n].node = node;
			v[n].path = malloc(tlen + plen - flen + 1);
			if (v[n].path == NULL)
				goto nomem;
			memcpy(v[n].path, to, tlen);
			memcpy(v[n].path + tlen, node->path + flen, plen - flen + 1);
			n++;
		}
	}
	unlink_locked(t, to);
	for (i = 0; i < n; i++) {
		if (v[i].node->path)
			drop_path(t, v[i].node);
		v[i].node->path = v[i].path;
	}
	for (i = 0; i < n; i++)
		link_path(t, v[i].node);
	goto out;

nomem:
	for (i = 0; i < n; i++)
		free(v[i].path);
	unlink_locked(t, from);
	unlink_locked(t, to);
	r = -ENOMEM;
out:
	pthread_mutex_unlock(&t->lock);
	free(v);
	return r;
}

size_t inode_count(struct inode_table *t)
{
	size_t c;

	pthread_mutex_lock(&t->lock);
	c = t->count;
	pthread_mutex_unlock(&t->lock);
	return c;
}
