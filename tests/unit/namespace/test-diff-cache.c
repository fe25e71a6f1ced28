/*
 * test-diff-cache.c - the change.diff cache (engine/namespace/view_diff.c):
 * one entry per item however many items a sweep touches, found only with
 * the commits it was made from, replaced by a newer rendering, and the
 * least recently used dropped first when the content passes the cache's
 * 32 MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namespace.h"
#include "test.h"

static const char *REPO = "/srv/repo";
static const char *BASE = "1111111111111111111111111111111111111111";
static const char *HEAD = "2222222222222222222222222222222222222222";
static const char *HEAD2 = "3333333333333333333333333333333333333333";

/* Whether item's diff base..head is cached, its content in *out (static). */
static int cached(int64_t item, const char *base, const char *head, const char **out)
{
	static struct buf b;
	int rc;

	buf_free(&b);
	buf_init(&b);
	rc = view_diff_cached(REPO, item, base, head, &b);
	ASSERT(rc == 0 || rc == 1);
	if (out)
		*out = b.data ? b.data : "";
	return rc;
}

TEST(sweep_keeps_every_item)
{
	char diff[64];
	const char *got;
	int64_t i;

	/* A sweep over 10,000 items, then a second one: every item hits. */
	for (i = 1; i <= 10000; i++) {
		snprintf(diff, sizeof(diff), "diff of item %lld\n", (long long)i);
		ASSERT_EQ(0, cached(i, BASE, HEAD, NULL));
		view_diff_keep(REPO, i, BASE, HEAD, diff, strlen(diff));
	}
	for (i = 1; i <= 10000; i++) {
		snprintf(diff, sizeof(diff), "diff of item %lld\n", (long long)i);
		ASSERT_EQ(1, cached(i, BASE, HEAD, &got));
		ASSERT_STREQ(diff, got);
	}
}

TEST(commits_and_repository_must_match)
{
	const char *got;
	struct buf b;

	view_diff_keep(REPO, 20001, BASE, HEAD, "x\n", 2);
	ASSERT_EQ(0, cached(20001, BASE, HEAD2, NULL));
	ASSERT_EQ(0, cached(20001, HEAD, HEAD, NULL));
	buf_init(&b);
	ASSERT_EQ(0, view_diff_cached("/srv/other", 20001, BASE, HEAD, &b));
	buf_free(&b);
	/* A newer rendering replaces the entry. */
	view_diff_keep(REPO, 20001, BASE, HEAD2, "y\n", 2);
	ASSERT_EQ(0, cached(20001, BASE, HEAD, NULL));
	ASSERT_EQ(1, cached(20001, BASE, HEAD2, &got));
	ASSERT_STREQ("y\n", got);
	/* An empty diff is an entry too. */
	view_diff_keep(REPO, 20002, BASE, HEAD, "", 0);
	ASSERT_EQ(1, cached(20002, BASE, HEAD, &got));
	ASSERT_STREQ("", got);
}

TEST(least_recently_used_dropped_first)
{
	size_t mib = (size_t)1 << 20;
	char *big = malloc(mib);
	int64_t i;

	ASSERT(big != NULL);
	memset(big, 'd', mib);
	/* 40 diffs of 1 MiB into 32 MiB, item 30001 looked up after each
	 * keep: it stays, the oldest others go. */
	view_diff_keep(REPO, 30001, BASE, HEAD, big, mib);
	for (i = 30002; i <= 30040; i++) {
		ASSERT_EQ(1, cached(30001, BASE, HEAD, NULL));
		view_diff_keep(REPO, i, BASE, HEAD, big, mib);
	}
	ASSERT_EQ(1, cached(30001, BASE, HEAD, NULL));
	ASSERT_EQ(1, cached(30040, BASE, HEAD, NULL));
	ASSERT_EQ(0, cached(30002, BASE, HEAD, NULL));
	ASSERT_EQ(0, cached(30009, BASE, HEAD, NULL));
	/* A diff larger than the whole cache is not kept, and the item's
	 * older entry goes. */
	free(big);
	big = malloc(33 * mib);
	ASSERT(big != NULL);
	memset(big, 'e', 33 * mib);
	view_diff_keep(REPO, 30040, BASE, HEAD2, big, 33 * mib);
	ASSERT_EQ(0, cached(30040, BASE, HEAD2, NULL));
	ASSERT_EQ(0, cached(30040, BASE, HEAD, NULL));
	free(big);
}

int main(void)
{
	RUN(sweep_keeps_every_item);
	RUN(commits_and_repository_must_match);
	RUN(least_recently_used_dropped_first);
	return 0;
}
