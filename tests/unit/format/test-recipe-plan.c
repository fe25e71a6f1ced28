/*
 * test-recipe-plan.c - the Markdown the pipeline reads
 * (engine/format/recipe_plan.c, recipe.h): plan.md's ```validation-recipes
 * block (CommonMark fences, repeats, NUL bytes, a long list in time
 * proportional to its length), its disposition and header lines, and the "## Verdict:" and
 * "## Assessment:" markers of the stage documents, which count only
 * outside fenced code blocks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "test.h"
#include "util.h"

static char **plan(const char *text, int want_rc)
{
	char **names = NULL;

	ASSERT_EQ(recipe_plan_names(text, strlen(text), &names), want_rc);
	if (want_rc)
		ASSERT(names == NULL);
	else
		ASSERT(names != NULL);
	return names;
}

static void expect_names(const char *text, const char *joined)
{
	char **names = plan(text, 0);
	char *got = strv_join(names, ",", 0);

	ASSERT_STREQ(got, joined);
	free(got);
	strv_free(names);
}

TEST(plan_names)
{
	expect_names("# Plan\n\nSteps.\n\n```validation-recipes\n01-build\n02-lint\n"
		     "03-unit-tests\n```\n\nMore text.\n", "01-build,02-lint,03-unit-tests");
	expect_names("```validation-recipes\n\n  01-build  \n# a comment\n- 02-lint\n"
		     "  -   03-unit-tests\t\n01-build\n\t\n```\n",
		     "01-build,02-lint,03-unit-tests");
	expect_names("```validation-recipes\r\n01-build\r\n02-lint\r\n```\r\n", "01-build,02-lint");
	expect_names("```validation-recipes\n```\n", "");
	expect_names("``` validation-recipes\n01-a\n```\n", "01-a");
	expect_names("   ```validation-recipes\n01-a\n   ```\n", "01-a");
	expect_names("~~~validation-recipes\n01-a\n```\n02-b\n~~~\n", "01-a,```,02-b");
	expect_names("````validation-recipes\n01-a\n```\n02-b\n````\n03-c\n", "01-a,```,02-b");
	expect_names("```validation-recipes\n01-a\n02-b", "01-a,02-b");
	expect_names("```validation-recipes\n01-first\n```\n"
		     "```validation-recipes\n02-second\n```\n", "01-first");
	expect_names("Example of the format:\n````markdown\n```validation-recipes\n99-example\n"
		     "```\n````\n\nThe real list:\n```validation-recipes\n01-real\n```\n",
		     "01-real");
	expect_names("```sh\nmake\n```\n```validation-recipes\n01-a\n```\n", "01-a");
	/* A backtick after backticks makes no fence; a tilde fence may hold one. */
	expect_names("``` `x`\n```validation-recipes\n01-a\n```\n", "01-a");
	expect_names("```validation-recipes\n01-a\n``` `x`\n02-b\n```\n", "01-a,``` `x`,02-b");
	expect_names("~~~ `x`\n```validation-recipes\n~~~\n```validation-recipes\n01-a\n```\n",
		     "01-a");
}

/* A long list costs time in proportion to its length: 300,000 names, each
 * given twice (about 7 MB), keep their first places. Comparing each name
 * with every one before it took minutes; the suite's timeout catches that. */
TEST(plan_many_names)
{
	enum { N = 300000 };
	struct buf text = { 0 };
	char **names = NULL, want[32];
	size_t i;

	expect_names("```validation-recipes\n01-b\n01-a\n01-b\n01-c\n01-a\n01-b\n01-d\n```\n",
		     "01-b,01-a,01-c,01-d");
	ASSERT_EQ(buf_puts(&text, "```validation-recipes\n"), 0);
	for (i = 0; i < 2 * N; i++)
		ASSERT_EQ(buf_printf(&text, "%02zu-r%zu\n", i % N % 100, i % N), 0);
	ASSERT_EQ(buf_puts(&text, "```\n"), 0);
	ASSERT_EQ(recipe_plan_names(text.data, text.len, &names), 0);
	ASSERT_EQ(strv_len(names), N);
	for (i = 0; i < N; i += 997) {
		snprintf(want, sizeof(want), "%02zu-r%zu", i % 100, i);
		ASSERT_STREQ(names[i], want);
	}
	strv_free(names);
	buf_free(&text);
}

TEST(plan_no_block)
{
	plan("", -ENOENT);
	plan("# Plan\n\nNo recipes here.\n", -ENOENT);
	plan("```sh\nmake\n```\n", -ENOENT);
	plan("```validation-recipes-extra\n01-a\n```\n", -ENOENT);
	plan("```validation\n01-a\n```\n", -ENOENT);
	plan("    ```validation-recipes\n    01-a\n    ```\n", -ENOENT);
	plan("``validation-recipes\n01-a\n``\n", -ENOENT);
	plan("Mentions ```validation-recipes inline.\n01-a\n", -ENOENT);
	plan("```sh\n```validation-recipes\n01-a\n", -ENOENT);
}

/* A NUL byte neither ends a name early nor makes an empty one: it shows as
 * "\0", so the name matches no recipe; a disposition with one is refused
 * and shown without it. */
TEST(plan_nul)
{
	static const char text[] = "```validation-recipes\n01-a\0b\n\0\n01-a\n- \0\0\n```\n";
	static const char disp[] = "Disposition: dup\0licate\n";
	char **names = NULL, out[128];
	char *got;

	ASSERT_EQ(recipe_plan_names(text, sizeof(text) - 1, &names), 0);
	got = strv_join(names, ",", 0);
	ASSERT_STREQ(got, "01-a\\0b,\\0,01-a,\\0\\0");
	free(got);
	strv_free(names);
	ASSERT_EQ(recipe_plan_disposition(disp, sizeof(disp) - 1, out, sizeof(out)), -EINVAL);
	ASSERT_CONTAINS(out, "\"Disposition: dup?licate\" is not one word");
}

TEST(plan_length)
{
	static const char text[] = "```validation-recipes\n01-a\n02-b\n```\n";
	char **names = NULL;
	char *got;

	ASSERT_EQ(recipe_plan_names(text, strlen("```validation-recipes\n01-a\n02"), &names), 0);
	got = strv_join(names, ",", 0);
	ASSERT_STREQ(got, "01-a,02");
	free(got);
	strv_free(names);
	names = NULL;
	ASSERT_EQ(recipe_plan_names(text, 10, &names), -ENOENT);
	ASSERT(names == NULL);
}

/* "Disposition: WORD" outside fences ends an item after plan; a bad word is
 * refused with its reason; a fenced example does not count. */
TEST(plan_disposition)
{
	static const char ok[] = "# Plan\n\nThe bug was fixed in 1.2.\n\nDisposition: already-resolved  \n";
	static const char fenced[] = "```\nDisposition: duplicate\n```\nNo disposition here.\n";
	static const char none[] = "# Plan\nDispositions vary.\n disposition: x\n";
	static const char bad[] = "Disposition: Not Reproducible\n";
	static const char empty[] = "Disposition:   \n";
	char out[128];

	ASSERT_EQ(recipe_plan_disposition(ok, sizeof(ok) - 1, out, sizeof(out)), 1);
	ASSERT_STREQ(out, "already-resolved");
	ASSERT_EQ(recipe_plan_disposition(fenced, sizeof(fenced) - 1, out, sizeof(out)), 0);
	ASSERT_EQ(recipe_plan_disposition(none, sizeof(none) - 1, out, sizeof(out)), 0);
	ASSERT_EQ(recipe_plan_disposition(bad, sizeof(bad) - 1, out, sizeof(out)), -EINVAL);
	ASSERT(strstr(out, "Not Reproducible") != NULL);
	ASSERT_EQ(recipe_plan_disposition(empty, sizeof(empty) - 1, out, sizeof(out)), -EINVAL);
	ASSERT(strstr(out, "needs one word") != NULL);
	/* Without a trailing newline, and too long for out. */
	ASSERT_EQ(recipe_plan_disposition("Disposition: duplicate", 22, out, sizeof(out)), 1);
	ASSERT_STREQ(out, "duplicate");
	ASSERT_EQ(recipe_plan_disposition("Disposition: duplicate", 22, out, 5), -EINVAL);
}

/* recipe_doc_marker over text gives want (out of size bytes). */
static void expect_marker(const char *text, size_t len, const char *key, size_t size,
			  const char *want)
{
	char out[64];

	memset(out, 'x', sizeof(out));
	ASSERT(size <= sizeof(out));
	recipe_doc_marker(text, len, key, out, size);
	if (strcmp(out, want) != 0)
		FAIL_AT("marker %s of \"%s\": got \"%s\", want \"%s\"", key, text, out, want);
}

#define MARKER(text, want) expect_marker(text, sizeof(text) - 1, "Verdict", 32, want)

/* The last "## KEY: value" heading counts, and only outside fenced code
 * blocks (CommonMark: ``` or ~~~, at most three spaces in, closed by a
 * fence of the same character at least as long with nothing after it). */
TEST(doc_marker)
{
	MARKER("# Validation\n\n## Verdict: pass\n", "pass");
	MARKER("## Verdict: fail\n## verdict: **PASS**\n", "PASS");
	MARKER("## Verdict:`pass` at abc\r\n", "pass");
	MARKER("## Verdict: needs_changes\r\n", "needs_changes");
	MARKER("No verdict.\n##Verdict: pass\n## Verdicts: pass\n#### Verdict: pass\n", "");
	MARKER("   ## Verdict: pass\n", "pass");
	MARKER("    ## Verdict: pass\n", "");
	/* Fenced examples do not count, wherever they stand. */
	MARKER("```\n## Verdict: pass\n```\n## Verdict: fail\n", "fail");
	MARKER("## Verdict: fail\n```markdown\n## Verdict: pass\n```\n", "fail");
	MARKER("## Verdict: fail\n   ~~~\n## Verdict: pass\n~~~\n", "fail");
	MARKER("## Verdict: fail\n~~~~\n## Verdict: pass\n~~~\n## Verdict: pass\n", "fail");
	MARKER("## Verdict: fail\n````\n```\n## Verdict: pass\n````\n", "fail");
	MARKER("## Verdict: fail\n```\n## Verdict: pass\n``` x\n## Verdict: pass\n", "fail");
	MARKER("## Verdict: fail\n```sh\n## Verdict: pass", "fail");
	MARKER("## Verdict: fail\n~~~\n## Verdict: pass\n```\n## Verdict: pass\n", "fail");
	MARKER("```\n```\n## Verdict: pass\n", "pass");
	/* Not fences: four spaces in, two characters, a backtick after backticks. */
	MARKER("## Verdict: fail\n    ```\n## Verdict: pass\n", "pass");
	MARKER("## Verdict: fail\n``\n## Verdict: pass\n", "pass");
	MARKER("## Verdict: fail\n``` `x`\n## Verdict: pass\n", "pass");
	MARKER("~~~ `x`\n## Verdict: pass\n~~~\n## Verdict: fail\n", "fail");
	/* A NUL byte ends neither the text nor the word. */
	MARKER("## Verdict: fail\n\0\n## Verdict: pass\n", "pass");
	MARKER("## Verdict: pa\0ss\n", "pa?ss");
	MARKER("## Verd\0ct: pass\n## Verdict: fail\n", "fail");
	/* The word is cut to fit. */
	expect_marker("## Assessment: soundness\n", 24, "Assessment", 6, "sound");
	expect_marker("## Assessment: sound\n", 10, "Assessment", 32, "");
	expect_marker("## Assessment: sound\n", 0, "Assessment", 32, "");
}
#undef MARKER

/* The header lines that choose the path: first occurrence, outside fences,
 * trimmed; a line with no value or a control byte refused. */
TEST(plan_header)
{
	static const char text[] =
		"# Plan\n```\nTemplate: fenced\n```\nRoute:  implementation \r\n"
		"Template: change-build-deploy-measure\nEngine: vllm\nTemplate: second\n"
		"Review request: https://example.com/o/r/pull/7\n  Route: indented\n";
	struct plan_header h;
	char err[256] = "";
	char *big;

	memset(&h, 'x', sizeof(h));
	ASSERT_EQ(recipe_plan_header(text, strlen(text), &h, err, sizeof(err)), 0);
	ASSERT_STREQ(h.route, "implementation");
	ASSERT_STREQ(h.template, "change-build-deploy-measure");
	ASSERT_STREQ(h.engine, "vllm");
	ASSERT_STREQ(h.review_request, "https://example.com/o/r/pull/7");
	ASSERT_EQ(recipe_plan_header("Disposition: duplicate\n", 23, &h, err, sizeof(err)), 0);
	ASSERT_STREQ(h.route, "");
	ASSERT_STREQ(h.template, "");
	ASSERT_EQ(recipe_plan_header("Template:   \n", 13, &h, err, sizeof(err)), -EINVAL);
	ASSERT_STREQ(err, "plan.md: \"Template:\" needs a value");
	ASSERT_EQ(recipe_plan_header("Engine: a\001b\n", 12, &h, err, sizeof(err)), -EINVAL);
	ASSERT_CONTAINS(err, "holds a control character");
	big = malloc(400);
	ASSERT(big != NULL);
	memcpy(big, "Route: ", 7);
	memset(big + 7, 'r', 300);
	ASSERT_EQ(recipe_plan_header(big, 307, &h, err, sizeof(err)), -EINVAL);
	ASSERT_STREQ(err, "plan.md: \"Route:\" is longer than 255 bytes");
	free(big);
}

int main(void)
{
	RUN(plan_names);
	RUN(plan_many_names);
	RUN(plan_no_block);
	RUN(plan_nul);
	RUN(plan_length);
	RUN(plan_disposition);
	RUN(doc_marker);
	RUN(plan_header);
	return 0;
}
