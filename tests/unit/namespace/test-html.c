/*
 * test-html.c - what the HTML pages share (engine/namespace/view_html.c,
 * view_timeline.c, view_html.h): text is escaped and kept valid UTF-8 and
 * XML, links are percent-encoded, and the timeline draws one linked bar
 * per run, at least MIN_BAR wide, grouped by iteration, with rounds
 * labelled; the strip shows the last 40 runs; a run shown as more than
 * its status (a validating stage whose batch failed) wears failing.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util.h"
#include "view_html.h"

/* html_text_n of in[len] into a static buffer. */
static const char *escaped(const char *in, size_t len)
{
	static struct buf b;

	buf_free(&b);
	buf_init(&b);
	ASSERT_EQ(0, html_text_n(&b, in, len));
	return b.data ? b.data : "";
}

/* The same of the string in. */
static const char *escaped_s(const char *in)
{
	return escaped(in, strlen(in));
}

TEST(escape)
{
	ASSERT_STREQ("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;",
		     escaped_s("<script>alert(\"x\")</script> & 'y'"));
	ASSERT_STREQ("plain text\twith\nlines\r", escaped_s("plain text\twith\nlines\r"));
	/* Control characters XML forbids, and NUL, read as U+FFFD. */
	ASSERT_STREQ("a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd", escaped("a\x01" "b\x7f" "c\0", 6));
	/* UTF-8 is kept: 2, 3 and 4 bytes. */
	ASSERT_STREQ("\xc3\xbc \xe2\x80\x94 \xf0\x9f\x98\x80",
		     escaped_s("\xc3\xbc \xe2\x80\x94 \xf0\x9f\x98\x80"));
	/* Not UTF-8: a Latin-1 byte, a cut sequence, an overlong form, a
	 * surrogate, past U+10FFFF. */
	ASSERT_STREQ("caf\xef\xbf\xbd", escaped("caf\xe9", 4));
	ASSERT_STREQ("\xef\xbf\xbd\xef\xbf\xbdx", escaped("\xe2\x80x", 3));
	ASSERT_STREQ("\xef\xbf\xbd\xef\xbf\xbd", escaped("\xc0\xaf", 2));
	ASSERT_STREQ("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", escaped("\xed\xa0\x80", 3));
	ASSERT_STREQ("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", escaped("\xf4\x90\x80\x80", 4));
}

TEST(url)
{
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(0, html_url(&b, "validation/logs/2026-12-02T05-54-51Z-01-build-1.log"));
	ASSERT_STREQ("validation/logs/2026-12-02T05-54-51Z-01-build-1.log", b.data);
	b.len = 0;
	ASSERT_EQ(0, html_url(&b, "javascript:x\"<a b>&#?%"));
	ASSERT_STREQ("javascript%3Ax%22%3Ca%20b%3E%26%23%3F%25", b.data);
	buf_free(&b);
}

TEST(status_names)
{
	char cls[32], d[32];

	html_status_class("timed_out", cls);
	ASSERT_STREQ("s-timed_out", cls);
	html_status_class("\"><x y=", cls);
	ASSERT_STREQ("s-xy", cls);
	html_status_class("", cls);
	ASSERT_STREQ("s-x", cls);
	ASSERT_STREQ("#2e9d4f", html_status_colour("validated"));
	ASSERT_STREQ("#d93f3f", html_status_colour("failing"));
	ASSERT_STREQ("#555b66", html_status_colour("made-up"));
	html_duration(0.44, d, sizeof(d));
	ASSERT_STREQ("0.4 s", d);
	html_duration(185, d, sizeof(d));
	ASSERT_STREQ("3 m 05 s", d);
	html_duration(7260, d, sizeof(d));
	ASSERT_STREQ("2 h 01 m", d);
}

/* Adds a run to tl. */
static void add(struct timeline *tl, int no, int stage, const char *name, const char *status,
		int iteration, int round, double start, double end)
{
	struct tl_run *t;
	char log[64];

	tl->v = realloc(tl->v, (tl->n + 1) * sizeof(*tl->v));
	ASSERT(tl->v);
	t = &tl->v[tl->n++];
	memset(t, 0, sizeof(*t));
	t->run_no = no;
	t->stage = stage;
	t->name = strdup(name);
	snprintf(t->status, sizeof(t->status), "%s", status);
	t->iteration = iteration;
	t->round = round;
	if (stage)
		snprintf(log, sizeof(log), "stages/%d-%s.log", no, name);
	else
		snprintf(log, sizeof(log), "validation/logs/x-%s-%d.log", name, no);
	t->log_path = strdup(log);
	t->started = 1;
	t->start = start;
	t->end = end;
}

/* How many times needle occurs in hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

TEST(timeline)
{
	struct timeline tl = {0};
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(0, timeline_svg(&tl, &b));
	ASSERT_CONTAINS(b.data, "No runs yet.");
	b.len = 0;
	add(&tl, 1, 1, "plan", "succeeded", 1, 0, 1000, 1000.06);
	add(&tl, 2, 0, "01-build", "validated", 1, 0, 1001, 1031);
	add(&tl, 3, 0, "03-<fail>", "failing", 1, 0, 1001, 1002);
	add(&tl, 4, 1, "print", "succeeded", 2, 0, 1040, 1050);
	add(&tl, 5, 1, "babysit", "failed", 2, 2, 1050, 1060);
	ASSERT_EQ(0, timeline_svg(&tl, &b));
	ASSERT_EQ(5, count(b.data, "<rect class=\"bar "));
	ASSERT_EQ(5, count(b.data, "<a href=\""));
	ASSERT_CONTAINS(b.data, "<a href=\"stages/1-plan.log\"><title>stage plan (run 1, iteration 1): "
				"succeeded, 0.1 s</title><rect class=\"bar s-succeeded\" data-run=\"1\" "
				"x=\"310.0\" y=\"52\" width=\"6.0\"");
	ASSERT_CONTAINS(b.data, "<a href=\"validation/logs/x-03-%3Cfail%3E-3.log\"><title>recipe "
				"03-&lt;fail&gt; (run 3, iteration 1): failing");
	ASSERT_CONTAINS(b.data, "fill=\"#d93f3f\"");
	ASSERT_EQ(1, count(b.data, ">iteration 1</text>"));
	ASSERT_EQ(1, count(b.data, ">iteration 2</text>"));
	ASSERT_CONTAINS(b.data, "#5 babysit round 2 \xc2\xb7 failed</text>");
	ASSERT_CONTAINS(b.data, "stage babysit round 2 (run 5, iteration 2)");
	/* The axis: 60 s in steps of 10 s. */
	ASSERT_CONTAINS(b.data, ">+0 s</text>");
	ASSERT_CONTAINS(b.data, ">+1 m</text>");
	ASSERT(!strstr(b.data, "<script"));
	b.len = 0;
	ASSERT_EQ(0, timeline_strip(&tl, &b));
	ASSERT_EQ(5, count(b.data, "<rect class=\"run "));
	timeline_free(&tl);
	for (int i = 1; i <= 45; i++)
		add(&tl, i, 0, "01-build", i == 45 ? "failing" : "validated", 1, 0, 1000 + i, 1001 + i);
	b.len = 0;
	ASSERT_EQ(0, timeline_strip(&tl, &b));
	ASSERT_EQ(40, count(b.data, "<rect class=\"run "));
	ASSERT(!strstr(b.data, "<title>#5 "));
	ASSERT_CONTAINS(b.data, "<title>#6 recipe 01-build: validated</title>");
	ASSERT_CONTAINS(b.data, "<title>#45 recipe 01-build: failing</title>");
	timeline_free(&tl);
	buf_free(&b);
}

/* A run whose shown status is more than its status (a validating stage
 * whose batch did not validate) shows that text and wears failing. */
TEST(timeline_shown)
{
	struct timeline tl = {0};
	struct buf b;

	buf_init(&b);
	add(&tl, 3, 1, "validate", "succeeded", 1, 0, 1000, 1003);
	snprintf(tl.v[0].shown, sizeof(tl.v[0].shown), "succeeded; 1 recipe timed out: 07-slow");
	add(&tl, 4, 1, "plan", "succeeded", 1, 0, 1003, 1004);
	ASSERT_STREQ("failing", tl_run_tone(&tl.v[0]));
	ASSERT_STREQ("succeeded", tl_run_tone(&tl.v[1]));
	ASSERT_STREQ("succeeded", tl_run_shown(&tl.v[1]));
	ASSERT_EQ(0, timeline_svg(&tl, &b));
	ASSERT_CONTAINS(b.data, "<title>stage validate (run 3, iteration 1): succeeded; 1 recipe "
				"timed out: 07-slow, 3.0 s</title><rect class=\"bar s-failing\" "
				"data-run=\"3\"");
	ASSERT_CONTAINS(b.data, "#3 validate \xc2\xb7 succeeded; 1 recipe timed \xe2\x80\xa6</text>");
	ASSERT_EQ(1, count(b.data, "fill=\"#d93f3f\""));
	b.len = 0;
	ASSERT_EQ(0, timeline_strip(&tl, &b));
	ASSERT_CONTAINS(b.data, "<rect class=\"run s-failing\" x=\"0\" y=\"0\" width=\"6\" "
				"height=\"12\" fill=\"#d93f3f\"><title>#3 stage validate: succeeded; 1 "
				"recipe timed out: 07-slow</title>");
	ASSERT_CONTAINS(b.data, "<title>#4 stage plan: succeeded</title>");
	timeline_free(&tl);
	buf_free(&b);
}

int main(void)
{
	RUN(escape);
	RUN(url);
	RUN(status_names);
	RUN(timeline);
	RUN(timeline_shown);
	return 0;
}
