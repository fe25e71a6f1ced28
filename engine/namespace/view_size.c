/*
 * view_size.c - the sizes of rendered views remembered between stats.
 *
 * DESIGN
 *
 * A view's size is its rendering's length, and views are asked for their
 * attributes at every stat (their attribute timeout is 0: the kernel
 * cannot know when they change). A sweep of the mount (find, ls -lR, an
 * indexer) would render status, status.json, evidence.md, junit.xml,
 * report.html and change.diff of every item to give their sizes.
 *
 * Those views are functions of the item's row, the store's other rows, the
 * pipeline's configuration, the commits of the item's branch and base, and
 * the time (view.c, view_junit.c, view_report.c). The store's connection
 * is the daemon's only writer, and it counts its commits (store_commits);
 * a configuration is never freed nor reused while the engine is open; the
 * commits are read from git. So a size rendered under a stamp of those
 * (struct view_stamp) is the size of any rendering made under an equal
 * stamp, except one that depends on the time or on state kept in memory:
 * packet.c keeps nothing rendered while the item has a run going or a
 * state the store did not take (a full disk), nor a report.html with a
 * run not ended, nor a rendering during which the stamp moved.
 *
 * One entry per item (its stamp and a size per kind), least recently used
 * dropped first (lru.h), at most SIZE_ENTRIES: about 100 bytes each.
 */
#include <string.h>
#include <stdlib.h>

#include "namespace.h"

#define SIZE_ENTRIES 65536

struct size_entry {
	struct lru_node node; /* key: the item id */
	struct view_stamp stamp;
	unsigned have;        /* bit k: size[k] is kept */
	uint64_t size[VIEW_SIZE_KINDS];
};

static void free_entry(struct lru_node *node)
{
	free(node);
}

int view_stamp_equal(const struct view_stamp *a, const struct view_stamp *b)
{
	return a->commits == b->commits && a->cfg == b->cfg && strcmp(a->head, b->head) == 0 &&
	       strcmp(a->base, b->base) == 0;
}

void view_sizes_init(struct engine *e)
{
	pthread_mutex_init(&e->size_lock, NULL);
	lru_init(&e->sizes, SIZE_ENTRIES, SIZE_ENTRIES * sizeof(struct size_entry), free_entry);
}

void view_sizes_free(struct engine *e)
{
	lru_clear(&e->sizes);
	pthread_mutex_destroy(&e->size_lock);
}

int view_size_get(struct engine *e, int64_t item, int kind, const struct view_stamp *st,
		  uint64_t *size)
{
	struct size_entry *s;
	int hit = 0;

	pthread_mutex_lock(&e->size_lock);
	s = (struct size_entry *)lru_get(&e->sizes, item);
	if (s && (s->have & (1u << kind)) && view_stamp_equal(&s->stamp, st)) {
		*size = s->size[kind];
		hit = 1;
	}
	pthread_mutex_unlock(&e->size_lock);
	return hit;
}

void view_size_keep(struct engine *e, int64_t item, int kind, const struct view_stamp *st,
		    uint64_t size)
{
	struct size_entry *s;

	pthread_mutex_lock(&e->size_lock);
	s = (struct size_entry *)lru_get(&e->sizes, item);
	if (s && !view_stamp_equal(&s->stamp, st)) {
		s->stamp = *st;
		s->have = 0;
	}
	if (!s && (s = calloc(1, sizeof(*s)))) {
		s->node.key = item;
		s->node.bytes = sizeof(*s);
		s->stamp = *st;
		s = (struct size_entry *)lru_put(&e->sizes, &s->node);
	}
	if (s) {
		s->size[kind] = size;
		s->have |= 1u << kind;
	}
	pthread_mutex_unlock(&e->size_lock);
}
