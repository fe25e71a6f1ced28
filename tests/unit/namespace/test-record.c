/*
 * test-record.c - the lines of validation/record (engine/namespace/record.c,
 * record.h): every way a request can be wrong is refused with its reason,
 * good requests come out whole, and a flush keeps exactly the fragments
 * that can still become a line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "test.h"
#include "util.h"

/* record_parse refuses line with -EINVAL, a reason holding want. */
static void expect_refused(const char *line, const char *want)
{
	struct record_request r;
	char why[256] = "";
	int rc = record_parse(line, strlen(line), &r, why, sizeof(why));

	if (rc != -EINVAL)
		FAIL_AT("%s: got %d (%s), want %d", line, rc, why, -EINVAL);
	ASSERT(r.recipe == NULL && r.argv == NULL);
	ASSERT_CONTAINS(why, want);
}

TEST(refused)
{
	expect_refused("", "not JSON");
	expect_refused("make -j2", "not JSON (at byte 1)");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"]", "not JSON");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"]} x", "not JSON");
	expect_refused("[\"make\"]", "must be a JSON object");
	expect_refused("\"make\"", "must be a JSON object");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"], \"cwd\": \"/\"}",
		       "unknown member 'cwd'");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"], \"recipe\": \"02-x\"}",
		       "member 'recipe' given twice");
	expect_refused("{\"argv\": [\"make\"]}", "recipe missing");
	expect_refused("{\"recipe\": \"\", \"argv\": [\"make\"]}",
		       "recipe must be a non-empty string");
	expect_refused("{\"recipe\": 1, \"argv\": [\"make\"]}",
		       "recipe must be a non-empty string");
	expect_refused("{\"recipe\": \"01-build\"}", "argv missing");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": \"make\"}", "argv must be an array");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": []}", "argv is empty");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\", 2]}",
		       "argv[1] is not a string");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"\", \"x\"]}", "argv[0] is empty");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"a\\u0000b\"]}", "NUL");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"], \"gpus\": -1}",
		       "gpus must be a whole number");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"], \"gpus\": 1.5}",
		       "gpus must be a whole number");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"], \"gpus\": \"1\"}",
		       "gpus must be a whole number");
	expect_refused("{\"recipe\": \"01-build\", \"argv\": [\"make\"], \"timeout_s\": 1e99}",
		       "timeout_s must be a whole number");
}

TEST(nul_byte)
{
	static const char line[] = "{\"recipe\": \"01-build\", \"argv\": [\"make\"]}\0{}";
	struct record_request r;
	char why[256] = "";

	ASSERT_EQ(record_parse(line, sizeof(line) - 1, &r, why, sizeof(why)), -EINVAL);
	ASSERT_CONTAINS(why, "NUL byte");
}

TEST(too_long)
{
	size_t n = RECORD_LINE_MAX + 1;
	char *line = malloc(n), why[256] = "";
	struct record_request r;

	ASSERT(line != NULL);
	memset(line, ' ', n);
	line[0] = '{';
	ASSERT_EQ(record_parse(line, n, &r, why, sizeof(why)), -EFBIG);
	ASSERT_CONTAINS(why, "too long");
	free(line);
}

static int parse(const char *line, struct record_request *r)
{
	char why[256] = "";
	int rc = record_parse(line, strlen(line), r, why, sizeof(why));

	if (rc)
		fprintf(stderr, "refused (%d, %s): %s\n", rc, why, line);
	return rc;
}

TEST(accepted)
{
	static const char line[] = "{\"recipe\": \"01-build\", \"argv\": [\"sh\", \"-c\", \"echo \\\"hi\\\"; "
				   "exit 3\"], \"gpus\": 1, \"timeout_s\": 600}\nnext";
	struct record_request r;
	char why[256] = "";

	/* The line ends where its length says, not at a NUL. */
	ASSERT_EQ(record_parse(line, sizeof(line) - 6, &r, why, sizeof(why)), 0);
	ASSERT_STREQ(r.recipe, "01-build");
	ASSERT_EQ(strv_len(r.argv), 3);
	ASSERT_STREQ(r.argv[2], "echo \"hi\"; exit 3");
	ASSERT_EQ(r.gpus, 1);
	ASSERT_EQ(r.timeout_s, 600);
	record_request_clear(&r);
	record_request_clear(&r);

	ASSERT_EQ(parse("{\"argv\": [\"true\"], \"recipe\": \"02-x\", \"gpus\": null}", &r), 0);
	ASSERT_STREQ(r.argv[0], "true");
	ASSERT(r.argv[1] == NULL);
	ASSERT_EQ(r.gpus, -1);
	ASSERT_EQ(r.timeout_s, -1);
	record_request_clear(&r);

	/* A literal backslash before u0000 is no NUL. */
	ASSERT_EQ(parse("{\"recipe\": \"01\", \"argv\": [\"\\\\u0000\"]}", &r), 0);
	ASSERT_STREQ(r.argv[0], "\\u0000");
	record_request_clear(&r);
}

TEST(kinds)
{
	ASSERT_EQ(record_line_kind("", 0), RECORD_BLANK);
	ASSERT_EQ(record_line_kind(" \t\r", 3), RECORD_BLANK);
	ASSERT_EQ(record_line_kind("cancel", 6), RECORD_CANCEL);
	ASSERT_EQ(record_line_kind("  cancel\r", 9), RECORD_CANCEL);
	ASSERT_EQ(record_line_kind("cancel now", 10), RECORD_REQUEST);
	ASSERT_EQ(record_line_kind("cancelled", 9), RECORD_REQUEST);
	ASSERT_EQ(record_line_kind("{}", 2), RECORD_REQUEST);
}

static int open_frag(const char *s)
{
	return record_line_open(s, strlen(s));
}

TEST(open_fragments)
{
	ASSERT(open_frag(""));
	ASSERT(open_frag("  "));
	ASSERT(open_frag("canc"));
	ASSERT(!open_frag("cancel"));
	ASSERT(!open_frag("cancex"));
	ASSERT(open_frag("{"));
	ASSERT(open_frag("{\"recipe\": \"01-bu"));
	ASSERT(open_frag("{\"recipe\": \"a}b\", \"argv\": [\"x\""));
	ASSERT(open_frag("{\"recipe\": \"a\\\"}"));
	ASSERT(!open_frag("{\"recipe\": \"01\", \"argv\": [\"x\"]}"));
	ASSERT(!open_frag("{} x"));
	ASSERT(!open_frag("make"));
	ASSERT(!open_frag("[1"));
}

int main(void)
{
	RUN(refused);
	RUN(nul_byte);
	RUN(too_long);
	RUN(accepted);
	RUN(kinds);
	RUN(open_fragments);
	return 0;
}
