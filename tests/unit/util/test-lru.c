/*
 * test-lru.c - the least-recently-used table (engine/util/lru.c): entries
 * found by key through bucket doublings, replaced in place, dropped least
 * recently used first past the entry and byte bounds, an entry larger
 * than the table refused, every dropped entry freed exactly once.
 */
#include <stdlib.h>

#include "lru.h"
#include "test.h"

struct entry {
	struct lru_node node;
	int value;
};

static int freed; /* entries freed so far */

static void free_entry(struct lru_node *node)
{
	freed++;
	free(node);
}

static struct entry *put(struct lru *l, int64_t key, int value, size_t bytes)
{
	struct entry *e = calloc(1, sizeof(*e));

	ASSERT(e != NULL);
	e->node.key = key;
	e->node.bytes = bytes;
	e->value = value;
	return (struct entry *)lru_put(l, &e->node);
}

static int value_of(struct lru *l, int64_t key)
{
	struct entry *e = (struct entry *)lru_get(l, key);

	return e ? e->value : -1;
}

TEST(found_through_growth)
{
	struct lru l;
	int64_t k;

	freed = 0;
	lru_init(&l, 100000, 100000, free_entry);
	ASSERT(lru_get(&l, 1) == NULL);
	for (k = 1; k <= 5000; k++)
		ASSERT(put(&l, k * 7919, (int)k, 1) != NULL);
	ASSERT_EQ(5000, (long long)l.n);
	ASSERT(l.nbucket >= 5000);
	for (k = 1; k <= 5000; k++)
		ASSERT_EQ((int)k, value_of(&l, k * 7919));
	ASSERT_EQ(-1, value_of(&l, 3));
	/* Replaced in place: the old entry is freed, the count stays. */
	ASSERT(put(&l, 7919, 42, 1) != NULL);
	ASSERT_EQ(42, value_of(&l, 7919));
	ASSERT_EQ(5000, (long long)l.n);
	ASSERT_EQ(1, freed);
	lru_remove(&l, 7919);
	ASSERT_EQ(-1, value_of(&l, 7919));
	ASSERT_EQ(2, freed);
	lru_clear(&l);
	ASSERT_EQ(5001, freed);
	ASSERT_EQ(0, (long long)l.n);
	ASSERT_EQ(0, (long long)l.bytes);
	/* Usable again after a clear. */
	ASSERT(put(&l, 5, 5, 1) != NULL);
	ASSERT_EQ(5, value_of(&l, 5));
	lru_clear(&l);
}

TEST(least_recently_used_dropped_first)
{
	struct lru l;

	freed = 0;
	lru_init(&l, 3, 1000, free_entry);
	put(&l, 1, 1, 10);
	put(&l, 2, 2, 10);
	put(&l, 3, 3, 10);
	ASSERT_EQ(1, value_of(&l, 1)); /* 2 is now the least recently used */
	put(&l, 4, 4, 10);
	ASSERT_EQ(-1, value_of(&l, 2));
	ASSERT_EQ(1, value_of(&l, 1));
	ASSERT_EQ(3, value_of(&l, 3));
	ASSERT_EQ(4, value_of(&l, 4));
	ASSERT_EQ(1, freed);
	/* The byte bound: 990 bytes more push out the two least recently
	 * used (1, then 3). */
	put(&l, 5, 5, 990);
	ASSERT_EQ(-1, value_of(&l, 1));
	ASSERT_EQ(-1, value_of(&l, 3));
	ASSERT_EQ(4, value_of(&l, 4));
	ASSERT_EQ(5, value_of(&l, 5));
	ASSERT_EQ(1000, (long long)l.bytes);
	/* Larger than the whole table: refused and freed, the old entry of
	 * its key gone too. */
	ASSERT(put(&l, 5, 6, 1001) == NULL);
	ASSERT_EQ(-1, value_of(&l, 5));
	ASSERT_EQ(4, value_of(&l, 4));
	ASSERT_EQ(10, (long long)l.bytes);
	lru_clear(&l);
	ASSERT_EQ(6, freed);
}

int main(void)
{
	RUN(found_through_growth);
	RUN(least_recently_used_dropped_first);
	return 0;
}
