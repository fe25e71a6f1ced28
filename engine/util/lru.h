/*
 * lru.h - a table of entries found by a 64-bit key and dropped least
 * recently used first, past a number of entries or a number of bytes: the
 * memory of the view caches (view_diff.c, view_size.c).
 *
 * Entries are intrusive: the caller embeds a struct lru_node in its own
 * entry, allocates it, and hands it over at lru_put; the table frees it
 * through the free_entry callback when it drops it. The table takes no lock:
 * its owner serialises every call on one table.
 */
#ifndef PACKETFS_LRU_H
#define PACKETFS_LRU_H

#include <stddef.h>
#include <stdint.h>

struct lru_node {
	struct lru_node *chain;         /* the next node of the bucket */
	struct lru_node *newer, *older; /* the recency list */
	int64_t key;
	size_t bytes;                   /* what the entry counts against max_bytes */
};

struct lru {
	struct lru_node **bucket;       /* nbucket chains; NULL until the first put */
	size_t nbucket;                 /* a power of two, or 0 */
	struct lru_node *newest, *oldest;
	size_t n;                       /* entries */
	size_t bytes;                   /* the sum of their bytes */
	size_t max_n, max_bytes;
	void (*free_entry)(struct lru_node *node); /* frees the entry that embeds node */
};

/* An empty table of at most max_n entries and max_bytes bytes; free_entry
 * frees a dropped entry. Allocates nothing. */
void lru_init(struct lru *l, size_t max_n, size_t max_bytes,
	      void (*free_entry)(struct lru_node *node));
/* The entry of key, made the most recently used, or NULL. */
struct lru_node *lru_get(struct lru *l, int64_t key);
/* Puts node (node->key and node->bytes set by the caller) in the table in
 * place of the entry of the same key, which is freed, and drops the least
 * recently used entries until the table is within its bounds. The table
 * owns node from here: a node of more than max_bytes, or one that cannot be
 * placed (no memory for the buckets), is freed at once. Returns node when
 * it is in the table, else NULL. */
struct lru_node *lru_put(struct lru *l, struct lru_node *node);
/* Drops and frees the entry of key, if any. */
void lru_remove(struct lru *l, int64_t key);
/* Drops and frees every entry and the buckets; the table is empty and
 * usable again. */
void lru_clear(struct lru *l);

#endif
