/*
 * test-view-size.c - the remembered sizes of views (engine/namespace/
 * view_size.c): a size is found only under a stamp equal in every part
 * (store commits, configuration, head, base) and for the kind kept; a new
 * stamp drops the item's other sizes; without head and base, only while the
 * refs' change count is the one at which they were last looked up, and
 * never when it is 0 or the base is no ref; a lookup that finds them unchanged moves the item to
 * the new count; a sweep of more items than fit drops the least recently
 * used.
 */
#include <string.h>

#include "namespace.h"
#include "test.h"

/* A stamp with head and base (exact) or without them (head NULL). */
static struct view_stamp stamp(uint64_t commits, const void *cfg, uint64_t refs,
			       const char *head, const char *base)
{
	struct view_stamp st;

	memset(&st, 0, sizeof(st));
	st.commits = commits;
	st.cfg = cfg;
	st.refs = refs;
	if (head) {
		st.exact = 1;
		st.by_refs = 1;
		strcpy(st.head, head);
		strcpy(st.base, base);
	}
	return st;
}

TEST(every_part_of_the_stamp_counts)
{
	static struct engine e;
	int cfg_a = 0, cfg_b = 0;
	struct view_stamp st = stamp(7, &cfg_a, 3, "1111", "2222"), other;
	uint64_t size = 0;

	view_sizes_init(&e);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	view_size_keep(&e, 1, VIEW_SIZE_STATUS, &st, 295);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	ASSERT_EQ(295, (long long)size);
	/* Another kind, another item: not kept. */
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_REPORT, &st, &size));
	ASSERT_EQ(0, view_size_get(&e, 2, VIEW_SIZE_STATUS, &st, &size));
	other = stamp(8, &cfg_a, 3, "1111", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	other = stamp(7, &cfg_b, 3, "1111", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	other = stamp(7, &cfg_a, 3, "3333", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	other = stamp(7, &cfg_a, 3, "1111", "4444");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	/* A size kept under a new stamp drops the sizes of the old one. */
	view_size_keep(&e, 1, VIEW_SIZE_REPORT, &st, 3865);
	other = stamp(9, &cfg_a, 3, "1111", "2222");
	view_size_keep(&e, 1, VIEW_SIZE_EVIDENCE, &other, 175);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_EVIDENCE, &other, &size));
	ASSERT_EQ(175, (long long)size);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &other, &size));
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_REPORT, &other, &size));
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	view_sizes_free(&e);
}

TEST(the_refs_count_stands_for_head_and_base)
{
	static struct engine e;
	int cfg = 0;
	struct view_stamp st = stamp(7, &cfg, 3, "1111", "2222"), now;
	uint64_t size = 0;

	view_sizes_init(&e);
	view_size_keep(&e, 1, VIEW_SIZE_STATUS, &st, 295);
	view_size_keep(&e, 1, VIEW_SIZE_DIFF, &st, 1200);
	/* The count the commits were looked up at: found without them. */
	now = stamp(7, &cfg, 3, NULL, NULL);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	ASSERT_EQ(295, (long long)size);
	/* But not at another store, nor when the count moved. */
	now = stamp(8, &cfg, 3, NULL, NULL);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	now = stamp(7, &cfg, 4, NULL, NULL);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	/* Looked up at count 4 and unchanged: found, and the item moves to 4,
	 * for every kind it keeps. */
	now = stamp(7, &cfg, 4, "1111", "2222");
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	now = stamp(7, &cfg, 4, NULL, NULL);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_DIFF, &now, &size));
	ASSERT_EQ(1200, (long long)size);
	now = stamp(7, &cfg, 3, NULL, NULL);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	/* Looked up at count 5 and the head moved: not found, and the item
	 * stays at 4. */
	now = stamp(7, &cfg, 5, "5555", "2222");
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	now = stamp(7, &cfg, 5, NULL, NULL);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	now = stamp(7, &cfg, 4, NULL, NULL);
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	/* A base that is no ref (main@{1}): found by a lookup, never by the
	 * count alone. */
	st = stamp(7, &cfg, 6, "1111", "2222");
	st.by_refs = 0;
	ASSERT_EQ(1, view_size_get(&e, 1, VIEW_SIZE_STATUS, &st, &size));
	now = stamp(7, &cfg, 6, NULL, NULL);
	ASSERT_EQ(0, view_size_get(&e, 1, VIEW_SIZE_STATUS, &now, &size));
	/* Refs that cannot be watched (0): only a lookup finds a size. */
	st = stamp(9, &cfg, 0, "1111", "2222");
	view_size_keep(&e, 2, VIEW_SIZE_STATUS, &st, 300);
	now = stamp(9, &cfg, 0, NULL, NULL);
	ASSERT_EQ(0, view_size_get(&e, 2, VIEW_SIZE_STATUS, &now, &size));
	ASSERT_EQ(1, view_size_get(&e, 2, VIEW_SIZE_STATUS, &st, &size));
	ASSERT_EQ(300, (long long)size);
	view_sizes_free(&e);
}

TEST(a_sweep_past_the_bound_drops_the_oldest)
{
	static struct engine e;
	int cfg = 0;
	struct view_stamp st = stamp(1, &cfg, 1, "1111", "2222");
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
	RUN(the_refs_count_stands_for_head_and_base);
	RUN(a_sweep_past_the_bound_drops_the_oldest);
	return 0;
}
