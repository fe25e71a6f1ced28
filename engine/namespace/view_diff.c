/*
 * view_diff.c - the change.diff cache: the last rendering of each item's
 * change.diff, kept with the two commit ids it was made from (view.c
 * serves it while both are still what base and branch resolve to).
 *
 * DESIGN
 *
 * A sweep of the mount (find, grep -r, an indexer) stats and reads the
 * change.diff of every item in turn, so the cache must hold one entry per
 * item however many items there are, not a fixed number of slots (a
 * direct-mapped table of 256 slots missed on every item of a sweep over
 * more than 256 items). Entries are found by item id in a chained hash
 * table and kept in least-recently-used order; the least recently used
 * are dropped when the content passes DIFF_CACHE_BYTES or the entries
 * DIFF_CACHE_ENTRIES. The table doubles its buckets as it grows. One lock
 * guards everything: every operation is a probe and a copy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namespace.h"

#define DIFF_CACHE_BYTES (32u << 20)
#define DIFF_CACHE_ENTRIES 65536

struct diff_entry {
	struct diff_entry *chain;      /* the next entry of the bucket */
	struct diff_entry *newer, *older; /* the LRU list */
	int64_t item_id;
	char *repo;
	char base[41]; /* the commits the diff was made from */
	char head[41];
	size_t len;
	char diff[]; /* len bytes */
};

static struct {
	pthread_mutex_t lock;
	struct diff_entry **bucket; /* protected by lock; nbucket heads */
	size_t nbucket;             /* protected by lock; a power of two, or 0 */
	struct diff_entry *newest;  /* protected by lock */
	struct diff_entry *oldest;  /* protected by lock */
	size_t n;                   /* protected by lock; entries */
	size_t bytes;               /* protected by lock; content of all entries */
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t bucket_of(int64_t item, size_t nbucket)
{
	uint64_t h = (uint64_t)item * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (nbucket - 1);
}

/* The bucket slot whose pointer is the entry of item (or NULL at the end
 * of the chain). Lock held, nbucket > 0. */
static struct diff_entry **find_slot(int64_t item)
{
	struct diff_entry **p = &cache.bucket[bucket_of(item, cache.nbucket)];

	while (*p && (*p)->item_id != item)
		p = &(*p)->chain;
	return p;
}

static void lru_unlink(struct diff_entry *d)
{
	if (d->newer)
		d->newer->older = d->older;
	else
		cache.newest = d->older;
	if (d->older)
		d->older->newer = d->newer;
	else
		cache.oldest = d->newer;
	d->newer = d->older = NULL;
}

static void lru_push(struct diff_entry *d)
{
	d->older = cache.newest;
	d->newer = NULL;
	if (cache.newest)
		cache.newest->newer = d;
	cache.newest = d;
	if (!cache.oldest)
		cache.oldest = d;
}

/* Drops d (found at *slot) from the table and the list, and frees it. */
static void drop(struct diff_entry **slot, struct diff_entry *d)
{
	*slot = d->chain;
	lru_unlink(d);
	cache.n--;
	cache.bytes -= d->len;
	free(d->repo);
	free(d);
}

/* Doubles the buckets when the entries outnumber them (lock held); on
 * allocation failure the chains just grow longer. */
static void grow(void)
{
	size_t n = cache.nbucket ? 2 * cache.nbucket : 256, i;
	struct diff_entry **b;

	if (cache.n < cache.nbucket)
		return;
	b = calloc(n, sizeof(*b));
	if (!b)
		return;
	for (i = 0; i < cache.nbucket; i++) {
		struct diff_entry *d = cache.bucket[i], *next;

		for (; d; d = next) {
			size_t k = bucket_of(d->item_id, n);

			next = d->chain;
			d->chain = b[k];
			b[k] = d;
		}
	}
	free(cache.bucket);
	cache.bucket = b;
	cache.nbucket = n;
}

int view_diff_cached(const char *repo, int64_t item, const char *base, const char *head,
		     struct buf *out)
{
	struct diff_entry *d;
	int rc = 0;

	pthread_mutex_lock(&cache.lock);
	d = cache.nbucket ? *find_slot(item) : NULL;
	if (d && strcmp(d->repo, repo) == 0 && strcmp(d->base, base) == 0 &&
	    strcmp(d->head, head) == 0) {
		lru_unlink(d);
		lru_push(d);
		rc = d->len ? buf_append(out, d->diff, d->len) : 0;
		rc = rc < 0 ? rc : 1;
	}
	pthread_mutex_unlock(&cache.lock);
	return rc;
}

void view_diff_keep(const char *repo, int64_t item, const char *base, const char *head,
		    const char *diff, size_t len)
{
	struct diff_entry *d, **slot;

	if (len > DIFF_CACHE_BYTES)
		len = 0, diff = NULL; /* not kept; drops the old entry below */
	d = diff ? malloc(sizeof(*d) + len) : NULL;
	if (d) {
		memset(d, 0, sizeof(*d));
		d->repo = strdup(repo);
		if (!d->repo) {
			free(d);
			d = NULL;
		}
	}
	pthread_mutex_lock(&cache.lock);
	if (cache.nbucket && *(slot = find_slot(item)))
		drop(slot, *slot);
	if (d) {
		d->item_id = item;
		snprintf(d->base, sizeof(d->base), "%s", base);
		snprintf(d->head, sizeof(d->head), "%s", head);
		d->len = len;
		memcpy(d->diff, diff, len);
		while (cache.oldest && (cache.bytes + len > DIFF_CACHE_BYTES ||
					cache.n + 1 > DIFF_CACHE_ENTRIES))
			drop(find_slot(cache.oldest->item_id), cache.oldest);
		grow();
		if (cache.nbucket) {
			slot = &cache.bucket[bucket_of(item, cache.nbucket)];
			d->chain = *slot;
			*slot = d;
			lru_push(d);
			cache.n++;
			cache.bytes += len;
			d = NULL;
		}
	}
	pthread_mutex_unlock(&cache.lock);
	if (d) {
		free(d->repo);
		free(d);
	}
}
