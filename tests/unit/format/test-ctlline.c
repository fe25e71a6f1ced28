/*
 * test-ctlline.c - the syntax of ctl's command lines (ctlline.h): every
 * verb with and without its argument, spaces, tabs and CR around words,
 * the refusals with their reasons (empty, unknown verb, arguments missing
 * or extra, control bytes, too long), the fragments a flush keeps or
 * refuses, and the shown form of a line.
 */
#include <errno.h>
#include <string.h>

#include "ctlline.h"
#include "test.h"

static struct ctl_line l;
static char why[256];

static int parse(const char *s)
{
	why[0] = '\0';
	return ctl_line_parse(s, strlen(s), &l, why, sizeof(why));
}

/* The line s is refused with the reason want. */
static void refused(const char *s, const char *want)
{
	ASSERT_EQ(parse(s), -EINVAL);
	ASSERT_STREQ(why, want);
}

static enum ctl_prefix prefix(const char *s)
{
	return ctl_line_prefix(s, strlen(s), &l);
}

TEST(lines)
{
	static const char *const plain[] = {"advance", "cancel", "approve", "hold", "release",
					    "archive"};
	char longline[CTL_LINE_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		ASSERT_EQ(parse(plain[i]), 0);
		ASSERT_STREQ(l.verb, plain[i]);
		ASSERT_EQ(l.kind, CTL_ARG_NONE);
	}
	ASSERT_EQ(parse(" \thold \r"), 0);
	ASSERT_STREQ(l.verb, "hold");
	ASSERT_EQ(parse("run  review"), 0);
	ASSERT_EQ(l.kind, CTL_ARG_STAGE);
	ASSERT_EQ(l.arg_len, 6);
	ASSERT(memcmp(l.arg, "review", 6) == 0);
	ASSERT_EQ(parse("rerun 01-build\r"), 0);
	ASSERT_EQ(l.kind, CTL_ARG_RECIPE);
	ASSERT_EQ(l.arg_len, 8);

	refused("", "empty command");
	ASSERT_EQ(parse(" \t "), -EINVAL);
	refused("advanc", "unknown verb (did you mean \"advance\"?)");
	refused("advanz", "unknown verb (did you mean \"advance\"?)");
	refused("hodl", "unknown verb (did you mean \"hold\"?)");
	refused("frobnicate", "unknown verb");
	refused("hold now", "hold takes no argument");
	refused("run", "run needs a stage name");
	refused("rerun a b", "rerun takes one recipe name, not more");
	ASSERT_EQ(ctl_line_parse("hold\0x", 6, &l, why, sizeof(why)), -EINVAL);
	ASSERT_STREQ(why, "control character (byte 0x00) in the line");
	ASSERT_EQ(parse("run \x7f"), -EINVAL);
	memset(longline, ' ', sizeof(longline));
	memcpy(longline, "hold", 4);
	ASSERT_EQ(ctl_line_parse(longline, CTL_LINE_MAX, &l, why, sizeof(why)), 0);
	ASSERT_EQ(ctl_line_parse(longline, CTL_LINE_MAX + 1, &l, why, sizeof(why)), -EINVAL);
	ASSERT_STREQ(why, "line too long (4097 bytes, at most 4096)");
	ASSERT_EQ(ctl_line_parse("hold x", 6, &l, NULL, 0), -EINVAL);
}

TEST(prefixes)
{
	ASSERT_EQ(prefix(""), CTL_PREFIX_YES);
	ASSERT_EQ(prefix("  "), CTL_PREFIX_YES);
	ASSERT_EQ(prefix("re"), CTL_PREFIX_YES);
	ASSERT_EQ(prefix("adv"), CTL_PREFIX_YES);
	ASSERT_EQ(prefix("run"), CTL_PREFIX_YES);
	ASSERT_EQ(prefix("rerun "), CTL_PREFIX_YES);
	ASSERT_EQ(prefix("run pl"), CTL_PREFIX_NAME);
	ASSERT_EQ(l.kind, CTL_ARG_STAGE);
	ASSERT_EQ(l.arg_len, 2);
	ASSERT(memcmp(l.arg, "pl", 2) == 0);
	ASSERT_EQ(prefix("rerun 01"), CTL_PREFIX_NAME);
	ASSERT_EQ(l.kind, CTL_ARG_RECIPE);
	ASSERT_EQ(prefix("run plan "), CTL_PREFIX_NO);
	ASSERT_EQ(prefix("run a b"), CTL_PREFIX_NO);
	ASSERT_EQ(prefix("adv "), CTL_PREFIX_NO);
	ASSERT_EQ(prefix("hold"), CTL_PREFIX_NO); /* whole: the flush applies it */
	ASSERT_EQ(prefix("x"), CTL_PREFIX_NO);
	ASSERT_EQ(prefix("ho\x01"), CTL_PREFIX_NO);
	ASSERT(ctl_line_blank(" \t\r", 3));
	ASSERT(ctl_line_blank("", 0));
	ASSERT(!ctl_line_blank(" x", 2));
}

TEST(shown)
{
	char out[80];
	char line[100];

	ctl_line_shown("  run\x01 plan \r", 13, out, sizeof(out));
	ASSERT_STREQ(out, "run? plan");
	memset(line, 'a', sizeof(line));
	ctl_line_shown(line, sizeof(line), out, sizeof(out));
	ASSERT_EQ(strlen(out), 63);
	ASSERT_STREQ(out + 60, "...");
	ctl_line_shown(line, sizeof(line), out, 8);
	ASSERT_STREQ(out, "aaaa...");
}

int main(void)
{
	RUN(lines);
	RUN(prefixes);
	RUN(shown);
	return 0;
}
