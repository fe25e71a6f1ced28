/*
 * test-top.c - unit tests of `packetfs top`'s model and frames (top/top.h):
 * parsing status.json (what runs and since when, evidence counts), the
 * listing and reading of items from a directory laid out like a mount's
 * root, fitting text to display columns (control characters, invalid
 * bytes, double-width characters), elapsed times, and rows and headers at
 * widths down to none.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "top.h"

static const char *status_json(const char *state, const char *running, const char *error)
{
	static char text[1024];

	snprintf(text, sizeof(text),
		 "{\"item\":\"x\",\"state\":\"%s\",\"stage\":\"validate\",\"running\":\"%s\","
		 "\"evidence\":\"3/4 validated\",\"last_error\":\"%s\",\"hold\":true}\n",
		 state, running, error);
	return text;
}

TEST(parse)
{
	struct top_item it;

	memset(&it, 0, sizeof(it));
	ASSERT_EQ(0, top_item_parse(&it, status_json("running", "validate (75 s), 01-build (3 s)",
						     "boom"), 100000));
	ASSERT_STREQ("running", it.state);
	ASSERT_STREQ("validate", it.stage);
	ASSERT_STREQ("3/4", it.evidence);
	ASSERT_STREQ("boom", it.last_error);
	ASSERT_EQ(1, it.hold);
	ASSERT_EQ(2, it.nruns);
	ASSERT_STREQ("validate", it.runs[0].name);
	ASSERT_EQ(100000 - 75000, it.runs[0].start_ms);
	ASSERT_STREQ("01-build", it.runs[1].name);
	ASSERT_EQ(100000 - 3000, it.runs[1].start_ms);
	/* More runs than kept are counted. */
	ASSERT_EQ(0, top_item_parse(&it, status_json("running",
						     "a (1 s), b (2 s), c (3 s), d (4 s), e (5 s), f (6 s)",
						     ""), 0));
	ASSERT_EQ(TOP_MAX_RUNS, it.nruns);
	ASSERT_EQ(2, it.more_runs);
	/* Nothing runs. */
	ASSERT_EQ(0, top_item_parse(&it, status_json("done", "", ""), 0));
	ASSERT_EQ(0, it.nruns);
	ASSERT_STREQ("", it.last_error);
	/* No JSON object: refused, the item as it was. */
	ASSERT_EQ(-EINVAL, top_item_parse(&it, "[1,2]", 0));
	ASSERT_EQ(-EINVAL, top_item_parse(&it, "{\"state\":", 0));
	ASSERT_STREQ("done", it.state);
	free(it.last_error);
}

TEST(elapsed)
{
	char out[16];

	top_elapsed(out, 0);
	ASSERT_STREQ("0s", out);
	top_elapsed(out, -5);
	ASSERT_STREQ("0s", out);
	top_elapsed(out, 59);
	ASSERT_STREQ("59s", out);
	top_elapsed(out, 64);
	ASSERT_STREQ("1m04s", out);
	top_elapsed(out, 3600 + 5 * 60 + 9);
	ASSERT_STREQ("1h05m", out);
	top_elapsed(out, 3 * 86400 + 4 * 3600);
	ASSERT_STREQ("3d04h", out);
	top_elapsed(out, INT64_MAX);
	ASSERT_STREQ("9999d00h", out);
}

TEST(fit)
{
	char out[64];

	ASSERT_EQ(5, top_fit(out, sizeof(out), "hello world", 5, 0));
	ASSERT_STREQ("hello", out);
	ASSERT_EQ(6, top_fit(out, sizeof(out), "ab", 6, 1));
	ASSERT_STREQ("ab    ", out);
	ASSERT_EQ(0, top_fit(out, sizeof(out), "ab", 0, 1));
	ASSERT_STREQ("", out);
	/* Control characters never reach the terminal. */
	top_fit(out, sizeof(out), "a\tb\nc\033[2J", 20, 0);
	ASSERT_STREQ("a?b?c?[2J", out);
	/* The output buffer bounds it too. */
	ASSERT_EQ(3, top_fit(out, 4, "abcdef", 10, 1));
	ASSERT_STREQ("abc", out);
	if (setlocale(LC_ALL, "C.UTF-8") == NULL)
		return;
	/* Double-width characters count two columns and are not split. */
	ASSERT_EQ(4, top_fit(out, sizeof(out), "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, 0));
	ASSERT_STREQ("\xe6\x97\xa5\xe6\x9c\xac", out);
	ASSERT_EQ(4, top_fit(out, sizeof(out), "caf\xc3\xa9s", 4, 0));
	ASSERT_STREQ("caf\xc3\xa9", out);
	/* An invalid byte is one '?'. */
	top_fit(out, sizeof(out), "a\xff" "b", 10, 0);
	ASSERT_STREQ("a?b", out);
	setlocale(LC_ALL, "C");
}

/* Makes dir/name/status.json holding text (no file when text is NULL). */
static void make_item(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ASSERT_EQ(0, mkdir(path, 0700));
	if (!text)
		return;
	snprintf(path, sizeof(path), "%s/%s/status.json", dir, name);
	f = fopen(path, "w");
	ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
}

TEST(model)
{
	char dir[] = "/tmp/test-top.XXXXXX", path[PATH_MAX], line[512];
	struct top_model m;
	size_t counts[TOP_NSTATES], other;
	long i;
	FILE *f;

	ASSERT(mkdtemp(dir) != NULL);
	make_item(dir, "zeta", status_json("failed", "", "plan: exit code 1"));
	make_item(dir, "alpha", status_json("running", "plan (5 s)", ""));
	make_item(dir, "mid", status_json("new", "", ""));
	make_item(dir, "learnings", NULL);
	make_item(dir, "notes", NULL);
	make_item(dir, ".archive", status_json("done", "", ""));
	ASSERT_EQ(0, top_model_init(&m, dir));
	ASSERT_EQ(0, top_model_load(&m, 1));
	ASSERT_EQ(3, m.n);
	ASSERT_STREQ("alpha", m.items[0].name);
	ASSERT_STREQ("mid", m.items[1].name);
	ASSERT_STREQ("zeta", m.items[2].name);
	ASSERT_EQ(8, m.stage_w);
	top_model_counts(&m, counts, &other);
	ASSERT_EQ(1, counts[0]); /* running */
	ASSERT_EQ(1, counts[4]); /* failed */
	ASSERT_EQ(1, counts[5]); /* new */
	ASSERT_EQ(0, other);

	/* Unread, every one is marked, and no state is known yet. */
	ASSERT_EQ(0, top_model_load(&m, 0));
	ASSERT_EQ(4, m.n); /* notes/ is found out at its read */
	ASSERT_EQ(1, top_model_unread(&m));
	top_model_counts(&m, counts, &other);
	ASSERT_EQ(4, other);
	for (i = 0; i < (long)m.n;) {
		long k = top_model_refresh(&m, m.items[i].name);

		if (k == -ENOENT) {
			ASSERT_EQ(-1, top_model_drop(&m, m.items[i].name));
			continue;
		}
		ASSERT_EQ(i, k);
		i++;
	}
	ASSERT_EQ(3, m.n);
	ASSERT_EQ(0, top_model_unread(&m));

	/* A new item goes to its place; one gone is found gone at its read. */
	make_item(dir, "beta", status_json("queued", "", ""));
	ASSERT_EQ(1, top_model_refresh(&m, "beta"));
	ASSERT_EQ(4, m.n);
	ASSERT_EQ(-ENOENT, top_model_refresh(&m, "gone"));
	ASSERT_EQ(4, m.n);
	snprintf(path, sizeof(path), "%s/zeta/status.json", dir);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(-ENOENT, top_model_refresh(&m, "zeta"));
	m.items[3].wd = 7;
	ASSERT_EQ(3, top_model_find_wd(&m, 7));
	ASSERT_EQ(7, top_model_drop(&m, "zeta"));
	ASSERT_EQ(-1, top_model_find(&m, "zeta"));
	ASSERT_EQ(2, top_model_find(&m, "mid"));

	/* Rows keep their columns; the running time advances with now. The
	 * items are held (status_json): the state says so, in a column wide
	 * enough for "waiting (held)". */
	top_render_row(&m, 0, m.items[0].runs[0].start_ms + 65000, 100, 1, line, sizeof(line));
	ASSERT_STREQ("> alpha  running (held)  validate  plan 1m05s              3/4", line);
	top_render_columns(&m, 100, line, sizeof(line));
	ASSERT_STREQ("  ITEM   STATE           STAGE     RUNNING                 EVIDENCE  LAST ERROR",
		     line);
	for (i = 0; i < (long)m.n; i++)
		m.items[i].hold = 0;
	top_render_row(&m, 0, m.items[0].runs[0].start_ms + 65000, 100, 1, line, sizeof(line));
	ASSERT_STREQ("> alpha  running  validate  plan 1m05s              3/4", line);
	top_render_columns(&m, 100, line, sizeof(line));
	ASSERT_STREQ("  ITEM   STATE    STAGE     RUNNING                 EVIDENCE  LAST ERROR", line);
	top_render_row(&m, 0, 0, 12, 0, line, sizeof(line));
	ASSERT_STREQ("  alpha  run", line);
	top_render_row(&m, 0, 0, 0, 0, line, sizeof(line));
	ASSERT_STREQ("", line);
	top_render_header(&m, 0, 200, line, sizeof(line));
	ASSERT_CONTAINS(line, "3 items: 1 running, 1 queued, 1 new  /tmp/test-top.");
	top_render_header(&m, 0, 3, line, sizeof(line));
	ASSERT_EQ(3, strlen(line));

	/* An item on a template: a TEMPLATE column after STAGE, "-" for the
	 * items on none (SPEC §5 "Routes and templates"). */
	snprintf(path, sizeof(path), "%s/mid/status.json", dir);
	f = fopen(path, "w");
	ASSERT(f != NULL);
	fputs("{\"item\":\"mid\",\"state\":\"done\",\"stage\":\"investigate\","
	      "\"template\":\"debug-investigation\",\"evidence\":\"0/0 validated\"}\n", f);
	fclose(f);
	ASSERT_EQ(2, top_model_refresh(&m, "mid"));
	ASSERT_STREQ("debug-investigation", m.items[2].template);
	ASSERT_EQ(19, m.template_w);
	top_render_columns(&m, 100, line, sizeof(line));
	ASSERT_STREQ("  ITEM   STATE    STAGE        TEMPLATE          RUNNING                 EVIDENCE  "
		     "LAST ERROR", line);
	top_render_row(&m, 2, 0, 100, 0, line, sizeof(line));
	ASSERT_STREQ("  mid    done     investigate  debug-investigat  -                       0/0", line);
	top_render_row(&m, 0, m.items[0].runs[0].start_ms, 100, 0, line, sizeof(line));
	ASSERT_CONTAINS(line, "validate     -                 plan 0s");

	top_model_free(&m);
	ASSERT_EQ(test_rmtree(dir), 0);
}

int main(void)
{
	RUN(parse);
	RUN(elapsed);
	RUN(fit);
	RUN(model);
	return 0;
}
