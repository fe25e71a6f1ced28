/*
 * inode.c - the inode table: inode number <-> paths, with lookup counts.
 *
 * Design: each inode is a node with a list of names (its paths: one, or
 * more for a file with hard links). Nodes are chained into a hash table
 * keyed by number and, when they stand for a file of the engine's (struct
 * pfs_stat file_id), one keyed by that; names into one keyed by path
 * (FNV-1a). All three have the same power-of-two size and double when the
 * nodes or the names pass it. Renames and unlinks of a directory touch
 * every name below it; they walk the path table, which is proportional to
 * the names the kernel holds, not to the store. Those of a node known to
 * be no directory (inode_set_leaf) touch that name alone.
 *
 * Invariants: a name is in the path table and in its node's list, or
 * freed (its node's first, cleared); a node is in the file table exactly when its file is not 0;
 * next_ino only grows; the root node is created with the table and freed
 * only with it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h" /* util_mutex_held (util.h) */
#include "inode.h"

#define INITIAL_BUCKETS 64

struct inode;

struct name {
	char *path;
	struct inode *node;
	struct name *path_next; /* the path table's chain */
	struct name *sibling;   /* the next name of node */
};

struct inode {
	uint64_t ino;
	uint64_t nlookup;       /* protected by inode_table.lock */
	uint64_t file;          /* protected by inode_table.lock: the file it stands
	                         * for (inode_ref), or 0 */
	struct name *names;     /* protected by inode_table.lock; NULL once unlinked */
	struct name first;      /* protected by inode_table.lock: a name kept in the
	                         * node itself (most have one), in use when its
	                         * node is set */
	int cached;             /* protected by inode_table.lock: see inode_set_cached */
	int leaf;               /* protected by inode_table.lock: see inode_set_leaf */
	int removed;            /* protected by inode_table.lock: a directory whose last name
	                         * an unlink or rmdir took (inode_removed) */
	char *replaced;         /* protected by inode_table.lock: where its content can
	                         * still be read once a rename over its last name took
	                         * that (inode_replaced), or NULL */
	struct inode *ino_next; /* protected by inode_table.lock */
	struct inode *file_next;
};

struct inode_table {
	pthread_mutex_t lock;
	struct inode **by_ino;  /* protected by lock */
	struct inode **by_file; /* protected by lock */
	struct name **by_path;  /* protected by lock */
	size_t nbuckets;        /* protected by lock; a power of two */
	size_t count;           /* protected by lock: nodes */
	size_t nnames;          /* protected by lock */
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
	struct inode *n;

	assert(util_mutex_held(&t->lock));
	n = t->by_ino[hash_ino(ino) & (t->nbuckets - 1)];
	while (n && n->ino != ino)
		n = n->ino_next;
	return n;
}

static struct inode *find_file(struct inode_table *t, uint64_t file)
{
	struct inode *n;

	assert(util_mutex_held(&t->lock));
	n = t->by_file[hash_ino(file) & (t->nbuckets - 1)];
	while (n && n->file != file)
		n = n->file_next;
	return n;
}

static struct name *find_name(struct inode_table *t, const char *path)
{
	struct name *m;

	assert(util_mutex_held(&t->lock));
	m = t->by_path[hash_path(path) & (t->nbuckets - 1)];
	while (m && strcmp(m->path, path) != 0)
		m = m->path_next;
	return m;
}

static void link_ino(struct inode_table *t, struct inode *n)
{
	struct inode **b = &t->by_ino[hash_ino(n->ino) & (t->nbuckets - 1)];

	n->ino_next = *b;
	*b = n;
}

static void link_file(struct inode_table *t, struct inode *n)
{
	struct inode **b = &t->by_file[hash_ino(n->file) & (t->nbuckets - 1)];

	n->file_next = *b;
	*b = n;
}

static void link_path(struct inode_table *t, struct name *m)
{
	struct name **b = &t->by_path[hash_path(m->path) & (t->nbuckets - 1)];

	m->path_next = *b;
	*b = m;
}

static void unlink_ino(struct inode_table *t, struct inode *n)
{
	struct inode **p = &t->by_ino[hash_ino(n->ino) & (t->nbuckets - 1)];

	while (*p != n)
		p = &(*p)->ino_next;
	*p = n->ino_next;
}

static void unlink_file(struct inode_table *t, struct inode *n)
{
	struct inode **p = &t->by_file[hash_ino(n->file) & (t->nbuckets - 1)];

	while (*p != n)
		p = &(*p)->file_next;
	*p = n->file_next;
}

static void unlink_path(struct inode_table *t, struct name *m)
{
	struct name **p = &t->by_path[hash_path(m->path) & (t->nbuckets - 1)];

	while (*p != m)
		p = &(*p)->path_next;
	*p = m->path_next;
}

/* Takes name m out of the path table and its node's list, and frees it. */
static void drop_name(struct inode_table *t, struct name *m)
{
	struct inode *n = m->node;
	struct name **p = &n->names;

	unlink_path(t, m);
	while (*p != m)
		p = &(*p)->sibling;
	*p = m->sibling;
	free(m->path);
	if (m == &n->first)
		memset(m, 0, sizeof(*m));
	else
		free(m);
	t->nnames--;
}

/* Doubles the tables. Returns 0 or -ENOMEM (the tables stay as they were). */
static int grow(struct inode_table *t)
{
	size_t nb = t->nbuckets * 2, ob = t->nbuckets, i;
	struct inode **bi = calloc(nb, sizeof(*bi)), **bf = calloc(nb, sizeof(*bf));
	struct name **bp = calloc(nb, sizeof(*bp));
	struct inode **old = t->by_ino;

	if (bi == NULL || bf == NULL || bp == NULL) {
		free(bi);
		free(bf);
		free(bp);
		return -ENOMEM;
	}
	free(t->by_path);
	free(t->by_file);
	t->by_ino = bi;
	t->by_file = bf;
	t->by_path = bp;
	t->nbuckets = nb;
	for (i = 0; i < ob; i++) {
		struct inode *n = old[i], *next;
		struct name *m;

		for (; n; n = next) {
			next = n->ino_next;
			link_ino(t, n);
			if (n->file)
				link_file(t, n);
			for (m = n->names; m; m = m->sibling)
				link_path(t, m);
		}
	}
	free(old);
	return 0;
}

/* Gives node n the name path (a copy), after its others. 0 or -ENOMEM. */
static int add_name(struct inode_table *t, struct inode *n, const char *path)
{
	struct name *m = n->first.node ? calloc(1, sizeof(*m)) : &n->first, **p;
	char *copy = m ? strdup(path) : NULL;

	if (copy == NULL) {
		if (m != &n->first)
			free(m);
		return -ENOMEM;
	}
	m->path = copy;
	m->node = n;
	for (p = &n->names; *p; p = &(*p)->sibling)
		;
	*p = m;
	link_path(t, m);
	t->nnames++;
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
	t->by_file = calloc(t->nbuckets, sizeof(*t->by_file));
	t->by_path = calloc(t->nbuckets, sizeof(*t->by_path));
	if (t->by_ino == NULL || t->by_file == NULL || t->by_path == NULL ||
	    add_name(t, root, "/") < 0)
		goto fail_arrays;
	pthread_mutex_init(&t->lock, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	t->generation = (uint64_t)ts.tv_sec;
	root->ino = INODE_ROOT;
	root->nlookup = 1;
	link_ino(t, root);
	t->count = 1;
	t->next_ino = INODE_ROOT + 1;
	*out = t;
	return 0;

fail_arrays:
	free(t->by_ino);
	free(t->by_file);
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
			while (n->names)
				drop_name(t, n->names);
			free(n->replaced);
			free(n);
		}
	}
	free(t->by_ino);
	free(t->by_file);
	free(t->by_path);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

uint64_t inode_generation(const struct inode_table *t)
{
	return t->generation;
}

/* inode_set_file of node n, the table locked. */
static void set_file(struct inode_table *t, struct inode *n, uint64_t file)
{
	if (file && n->file == 0 && find_file(t, file) == NULL) {
		n->file = file;
		link_file(t, n);
	}
}

int inode_ref(struct inode_table *t, const char *path, uint64_t file, uint64_t *ino)
{
	struct name *m;
	struct inode *n = NULL;
	int r = 0;

	pthread_mutex_lock(&t->lock);
	m = find_name(t, path);
	if (m) {
		n = m->node;
	} else {
		if ((t->count >= t->nbuckets || t->nnames >= t->nbuckets) && grow(t) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if (file)
			n = find_file(t, file);
		if (n) {
			r = add_name(t, n, path);
			if (r < 0)
				goto out;
		} else {
			n = calloc(1, sizeof(*n));
			if (n == NULL || add_name(t, n, path) < 0) {
				free(n);
				r = -ENOMEM;
				goto out;
			}
			n->ino = t->next_ino++;
			link_ino(t, n);
			t->count++;
		}
	}
	set_file(t, n, file);
	n->removed = 0;
	n->nlookup++;
	*ino = n->ino;
out:
	pthread_mutex_unlock(&t->lock);
	return r;
}

uint64_t inode_peek(struct inode_table *t, const char *path)
{
	struct name *m;
	uint64_t ino;

	pthread_mutex_lock(&t->lock);
	m = find_name(t, path);
	ino = m ? m->node->ino : 0;
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

int inode_is_leaf(struct inode_table *t, uint64_t ino)
{
	struct inode *n;
	int leaf;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	leaf = n && n->leaf;
	pthread_mutex_unlock(&t->lock);
	return leaf;
}

void inode_set_file(struct inode_table *t, uint64_t ino, uint64_t file)
{
	struct inode *n;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	if (n)
		set_file(t, n, file);
	pthread_mutex_unlock(&t->lock);
}

uint64_t inode_peek_cached(struct inode_table *t, const char *path)
{
	struct name *m;
	uint64_t ino;

	pthread_mutex_lock(&t->lock);
	m = find_name(t, path);
	ino = m && m->node->cached ? m->node->ino : 0;
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
	/* The kernel forgets no more lookups than it was given (each entry
	 * reply counted one: inode_lookup). */
	assert(count <= n->nlookup);
	n->nlookup = count < n->nlookup ? n->nlookup - count : 0;
	if (n->nlookup == 0) {
		while (n->names)
			drop_name(t, n->names);
		unlink_ino(t, n);
		if (n->file)
			unlink_file(t, n);
		t->count--;
		free(n->replaced);
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
	if (n == NULL || n->names == NULL)
		r = -ENOENT;
	else if ((*out = strdup(n->names->path)) == NULL)
		r = -ENOMEM;
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* Drops name m; when removed (an unlink or rmdir took it, not a rename),
 * a node left without names is marked removed. */
static void drop_removed(struct inode_table *t, struct name *m, int removed)
{
	struct inode *n = m->node;

	drop_name(t, m);
	if (removed && n->names == NULL)
		n->removed = 1;
}

int inode_replaced(struct inode_table *t, uint64_t ino, char **out)
{
	struct inode *n;
	int r = 0;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	if (n == NULL || n->names != NULL || n->replaced == NULL)
		r = -ENOENT;
	else if ((*out = strdup(n->replaced)) == NULL)
		r = -ENOMEM;
	pthread_mutex_unlock(&t->lock);
	return r;
}

int inode_removed(struct inode_table *t, uint64_t ino)
{
	struct inode *n;
	int r;

	pthread_mutex_lock(&t->lock);
	n = find_ino(t, ino);
	r = n != NULL && n->names == NULL && n->removed;
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* Drops the name path and every name below it; removed: see
 * drop_removed. */
static void unlink_locked(struct inode_table *t, const char *path, int removed)
{
	size_t len = strlen(path), i;
	struct name *m = find_name(t, path), *next;

	if (m && m->node->leaf) {
		drop_name(t, m);
		return;
	}
	for (i = 0; i < t->nbuckets; i++) {
		for (m = t->by_path[i]; m; m = next) {
			next = m->path_next;
			if (m->node->ino != INODE_ROOT && is_below(m->path, path, len))
				drop_removed(t, m, removed);
		}
	}
	m = find_name(t, path);
	if (m && m->node->ino != INODE_ROOT)
		drop_removed(t, m, removed);
}

void inode_unlink(struct inode_table *t, const char *path)
{
	pthread_mutex_lock(&t->lock);
	unlink_locked(t, path, 1);
	pthread_mutex_unlock(&t->lock);
}

/* Gives name m the path to (made already; the table takes it). */
static void rekey(struct inode_table *t, struct name *m, char *to)
{
	unlink_path(t, m);
	free(m->path);
	m->path = to;
	link_path(t, m);
}

/* A name to re-key in a rename, with its new path made in advance. */
struct rekey {
	struct name *name;
	char *path;
};

/* Node n, which held the name to before a rename, keeps where its content
 * can still be read when the rename left it no name: a copy of replaced
 * (without memory, none: inode_replaced then finds nothing). */
static void keep_replaced(struct inode *n, const char *replaced)
{
	if (n == NULL || replaced == NULL || n->names != NULL)
		return;
	free(n->replaced);
	n->replaced = strdup(replaced);
}

int inode_rename(struct inode_table *t, const char *from, const char *to, const char *replaced)
{
	size_t flen = strlen(from), tlen = strlen(to), n = 0, cap = 8, i;
	struct rekey *v = NULL;
	struct inode *over = NULL;
	struct name *m, *old;
	int r = 0;

	if (strcmp(from, to) == 0)
		return 0;
	pthread_mutex_lock(&t->lock);
	old = find_name(t, to);
	if (old && old->node->ino != INODE_ROOT)
		over = old->node;
	m = find_name(t, from);
	if (m && m->node->leaf) {
		/* Nothing can be below either path (a rename never puts a file
		 * over a directory): only to's own name goes, whether or not
		 * the table holds it (a new name, as most renames of a temp
		 * file give, must not walk the table). */
		char *path = strdup(to);

		if (over)
			drop_name(t, old);
		if (path == NULL) {
			drop_name(t, m);
			r = -ENOMEM;
		} else {
			rekey(t, m, path);
			keep_replaced(over, replaced);
		}
		goto out;
	}
	/* Make every new path first, so that a failed allocation changes
	 * nothing but the names of the renamed subtree. */
	v = malloc(cap * sizeof(*v));
	if (v == NULL)
		goto nomem;
	for (i = 0; i < t->nbuckets; i++) {
		for (m = t->by_path[i]; m; m = m->path_next) {
			size_t plen;

			if (m->node->ino == INODE_ROOT)
				continue;
			if (strcmp(m->path, from) != 0 && !is_below(m->path, from, flen))
				continue;
			if (n == cap) {
				struct rekey *nv = realloc(v, 2 * cap * sizeof(*v));

				if (nv == NULL)
					goto nomem;
				v = nv;
				cap *= 2;
			}
			plen = strlen(m->path);
			v[n].name = m;
			v[n].path = malloc(tlen + plen - flen + 1);
			if (v[n].path == NULL)
				goto nomem;
			memcpy(v[n].path, to, tlen);
			memcpy(v[n].path + tlen, m->path + flen, plen - flen + 1);
			n++;
		}
	}
	unlink_locked(t, to, 0);
	for (i = 0; i < n; i++)
		rekey(t, v[i].name, v[i].path);
	keep_replaced(over, replaced);
	goto out;

nomem:
	for (i = 0; i < n; i++)
		free(v[i].path);
	unlink_locked(t, from, 0);
	unlink_locked(t, to, 0);
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
