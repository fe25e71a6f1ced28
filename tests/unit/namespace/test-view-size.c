/*
 * test-view-size.c - the remembered sizes of views (engine/namespace/
 * view_size.c): a size is found only under a stamp equal in every part
 * (store commits, configuration, head, base) and for the kind kept; a new
 * stamp drops the item's other sizes; a sweep of more items than fit drops
 * the least recently used.
 */
#include <string.h>

#include "namespace.h"
#include "test.h"

static struct view_stamp stamp(uint64_t commits, const void *cfg, const char *head,
			       const char *base)
{
	struct view_stamp st;

	memset(&st, 0, sizeof(st));
	st.commits = commits;
	st.cfg = cfg;
	strcpy(st.head, head);
	strcpy(st.base, base);
	return st;
}

TEST(every_part_of_the_stamp_counts)
{
	static struct engine e;
	int cfg_a = 0, cfg_b = 0;
	struct view_stamp st = stamp(7, &cfg_a, "1111", "2222"), other;
	uint64_t size = 0;

	view_sizes_init(&e);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	view_size_keep(&e, 1, VIEW_SIZE_STATUS, &st, 295);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	ASSERT_EQ(295, (long long)size);
	/* Another kind, another item: not kept. */
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_REPORT, &st, &size));
	ASSERT_EQ(0, view_size_get(&e, 2, VIEW_SIZE_STATUS, &st, &size));
	other = stamp(8, &cfg_a, "1111", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	other = stamp(7, &cfg_b, "1111", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	other = stamp(7, &cfg_a, "3333", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	other = stamp(7, &cfg_a, "1111", "4444");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	/* A size kept under a new stamp drops the sizes of the old one. */
	view_size_keep(&e, 1, VIEW_SIZE_REPORT, &st, 3865);
	other = stamp(9, &cfg_a, "1111", "2222");
	view_size_keep(&e, 1, VIEW_SIZE_EVIDENCE, &other, 175);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_EVIDENCE, &other, &size));
	ASSERT_EQ(175, (long long)size);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_REPORT, &other, &size));
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	view_sizes_free(&e);
}

TEST(a_sweep_past_the_bound_drops_the_oldest)
{
	static struct engine e;
	int cfg = 0;
	struct view_stamp st = stamp(1, &cfg, "1111", "2222");
	uint64_t size = 0;
	int64_t i;

	view_sizes_init(&e);
	for (i = 1; i <= 70000; i++)
		view_size_keep(&e, i, VIEW_SIZE_DIFF, &st, (uint64_t)i);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_DIFF, &st, &size));
	ASSERT_EQ(0, view_size_get(&e, 4464, VIEW_SIZE_DIFF, &st, &size));
	ASSERT_EQ(1, view_size_get(&e, 4465, VIEW_SIZE_DIFF, &st, &size));
	ASSERT_EQ(4465, (long long)size);
	ASSERT_EQ(1, view_size_get(&e, 70000, VIEW_SIZE_DIFF, &st, &size));
	view_sizes_free(&e);
}

int main(void)
{
	RUN(every_part_of_the_stamp_counts);
	RUN(a_sweep_past_the_bound_drops_the_oldest);
	return 0;
}
