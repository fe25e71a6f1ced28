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
 * more than 256 items). Entries are found by item id in a table (lru.h)
 * that drops the least recently used when the content passes
 * DIFF_CACHE_BYTES or the entries DIFF_CACHE_ENTRIES. One lock guards
 * it: every operation is a probe and a copy.
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
	struct lru_node node; /* key: the item id; bytes: len */
	char *repo;
	char base[41]; /* the commits the diff was made from */
	char head[41];
	size_t len;
	char diff[]; /* len bytes */
};

static void free_entry(struct lru_node *node)
{
	struct diff_entry *d = (struct diff_entry *)node;

	free(d->repo);
	free(d);
}

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lru cache = { .max_n = DIFF_CACHE_ENTRIES, .max_bytes = DIFF_CACHE_BYTES,
			    .free_entry = free_entry }; /* protected by cache_lock */

int view_diff_cached(const char *repo, int64_t item, const char *base, const char *head,
		     struct buf *out)
{
	struct diff_entry *d;
	int rc = 0;

	pthread_mutex_lock(&cache_lock);
	d = (struct diff_entry *)lru_get(&cache, item);
	if (d && strcmp(d->repo, repo) == 0 && strcmp(d->base, base) == 0 &&
	    strcmp(d->head, head) == 0) {
		rc = d->len ? buf_append(out, d->diff, d->len) : 0;
		rc = rc < 0 ? rc : 1;
	}
	pthread_mutex_unlock(&cache_lock);
	return rc;
}

void view_diff_keep(const char *repo, int64_t item, const char *base, const char *head,
		    const char *diff, size_t len)
{
	struct diff_entry *d = len <= DIFF_CACHE_BYTES ? malloc(sizeof(*d) + len) : NULL;

	if (d) {
		memset(d, 0, sizeof(*d));
		d->repo = strdup(repo);
		if (!d->repo) {
			free(d);
			d = NULL;
		}
	}
	pthread_mutex_lock(&cache_lock);
	if (d) {
		d->node.key = item;
		d->node.bytes = len;
		snprintf(d->base, sizeof(d->base), "%s", base);
		snprintf(d->head, sizeof(d->head), "%s", head);
		d->len = len;
		memcpy(d->diff, diff, len);
		lru_put(&cache, &d->node);
	} else {
		/* Not kept (too large, or no memory): the old diff goes. */
		lru_remove(&cache, item);
	}
	pthread_mutex_unlock(&cache_lock);
}
