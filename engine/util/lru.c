/*
 * lru.c - the least-recently-used table of lru.h: chained hash buckets by
 * key, doubled as the entries outnumber them, and a doubly linked list in
 * order of use.
 */
#include <stdlib.h>

#include "lru.h"

void lru_init(struct lru *l, size_t max_n, size_t max_bytes,
	      void (*free_entry)(struct lru_node *node))
{
	*l = (struct lru){ .max_n = max_n, .max_bytes = max_bytes, .free_entry = free_entry };
}

static size_t bucket_of(int64_t key, size_t nbucket)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (nbucket - 1);
}

/* The bucket slot that points to the node of key, or to NULL at the end of
 * its chain. nbucket > 0. */
static struct lru_node **find_slot(struct lru *l, int64_t key)
{
	struct lru_node **p = &l->bucket[bucket_of(key, l->nbucket)];

	while (*p && (*p)->key != key)
		p = &(*p)->chain;
	return p;
}

static void unlink_node(struct lru *l, struct lru_node *d)
{
	if (d->newer)
		d->newer->older = d->older;
	else
		l->newest = d->older;
	if (d->older)
		d->older->newer = d->newer;
	else
		l->oldest = d->newer;
	d->newer = d->older = NULL;
}

static void push_node(struct lru *l, struct lru_node *d)
{
	d->older = l->newest;
	d->newer = NULL;
	if (l->newest)
		l->newest->newer = d;
	l->newest = d;
	if (!l->oldest)
		l->oldest = d;
}

/* Drops d, found at *slot, and frees it. */
static void drop(struct lru *l, struct lru_node **slot, struct lru_node *d)
{
	*slot = d->chain;
	unlink_node(l, d);
	l->n--;
	l->bytes -= d->bytes;
	l->free_entry(d);
}

/* Doubles the buckets when the entries outnumber them; on allocation
 * failure the chains grow longer (0), unless there are none yet (-1). */
static int grow(struct lru *l)
{
	size_t n = l->nbucket ? 2 * l->nbucket : 256, i;
	struct lru_node **b;

	if (l->n < l->nbucket)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return l->nbucket ? 0 : -1;
	for (i = 0; i < l->nbucket; i++) {
		struct lru_node *d = l->bucket[i], *next;

		for (; d; d = next) {
			size_t k = bucket_of(d->key, n);

			next = d->chain;
			d->chain = b[k];
			b[k] = d;
		}
	}
	free(l->bucket);
	l->bucket = b;
	l->nbucket = n;
	return 0;
}

struct lru_node *lru_get(struct lru *l, int64_t key)
{
	struct lru_node *d = l->nbucket ? *find_slot(l, key) : NULL;

	if (d) {
		unlink_node(l, d);
		push_node(l, d);
	}
	return d;
}

struct lru_node *lru_put(struct lru *l, struct lru_node *node)
{
	struct lru_node **slot;

	lru_remove(l, node->key);
	if (node->bytes > l->max_bytes || l->max_n == 0) {
		l->free_entry(node);
		return NULL;
	}
	while (l->oldest && (l->bytes + node->bytes > l->max_bytes || l->n + 1 > l->max_n))
		drop(l, find_slot(l, l->oldest->key), l->oldest);
	if (grow(l) < 0) {
		l->free_entry(node);
		return NULL;
	}
	slot = &l->bucket[bucket_of(node->key, l->nbucket)];
	node->chain = *slot;
	*slot = node;
	push_node(l, node);
	l->n++;
	l->bytes += node->bytes;
	return node;
}

void lru_remove(struct lru *l, int64_t key)
{
	struct lru_node **slot;

	if (l->nbucket && *(slot = find_slot(l, key)))
		drop(l, slot, *slot);
}

void lru_clear(struct lru *l)
{
	while (l->oldest)
		drop(l, find_slot(l, l->oldest->key), l->oldest);
	free(l->bucket);
	l->bucket = NULL;
	l->nbucket = 0;
}
