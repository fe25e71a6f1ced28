/*
 * test-scope.c - the plan's scope (engine/format/scope.c, scope.h): the
 * ```scope block and its malformed lines (with their line numbers), the
 * keep patterns against git's :(glob) pathspec semantics, and the
 * comparison with a change: scope.md's sections and the summary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope.h"
#include "test.h"
#include "util.h"

/* The block of text as "verb:path,...", or the error. */
static void expect_parse(const char *text, int want_rc, const char *want)
{
	struct scope sc;
	struct buf got;
	char err[256] = "";
	size_t i;
	int rc = scope_parse(text, strlen(text), &sc, err, sizeof(err));

	ASSERT_EQ(rc, want_rc);
	if (rc < 0) {
		ASSERT_STREQ(err, want);
		scope_free(&sc);
		return;
	}
	buf_init(&got);
	for (i = 0; i < sc.n; i++)
		ASSERT_EQ(buf_printf(&got, "%s%d:%s@%d", i ? "," : "", (int)sc.v[i].verb, sc.v[i].path,
				     sc.v[i].line), 0);
	ASSERT_STREQ(got.data ? got.data : "", want);
	buf_free(&got);
	scope_free(&sc);
}

TEST(parse)
{
	expect_parse("# Plan\n\n```scope\nedit src/a.c\nadd src/new.c\ndelete old.c\n"
		     "keep docs/**/*.svg\n```\n",
		     1, "0:src/a.c@4,1:src/new.c@5,2:old.c@6,3:docs/**/*.svg@7");
	expect_parse("```scope\n\n  edit   a b.c  \r\n# a comment\n\tkeep\tCHANGELOG.md\n```\n", 1,
		     "0:a b.c@3,3:CHANGELOG.md@5");
	expect_parse("```scope\n```\n", 1, "");
	expect_parse("no block here\n```sh\nedit x\n```\n", 0, "");
	/* Only the first block; a quoted one does not count. */
	expect_parse("````md\n```scope\nedit quoted\n```\n````\n```scope\nedit a\n```\n"
		     "```scope\nedit b\n```\n", 1, "0:a@7");
	expect_parse("```scope\nkeep build/\nkeep [ab]*.c\nkeep \\[x\n```\n", 1,
		     "3:build/@2,3:[ab]*.c@3,3:\\[x@4");
}

TEST(parse_malformed)
{
	expect_parse("x\n```scope\nedit a\nmodify b\n```\n", -EINVAL,
		     "plan.md: line 4: \"modify\" is not edit, add, delete or keep");
	expect_parse("```scope\nedit\n```\n", -EINVAL, "plan.md: line 2: edit a path is missing");
	expect_parse("```scope\nadd /etc/passwd\n```\n", -EINVAL,
		     "plan.md: line 2: add an absolute path (paths are relative to the repository root)");
	expect_parse("```scope\ndelete a/../b\n```\n", -EINVAL,
		     "plan.md: line 2: delete a \".\" or \"..\" component");
	expect_parse("```scope\nedit ./a\n```\n", -EINVAL,
		     "plan.md: line 2: edit a \".\" or \"..\" component");
	expect_parse("```scope\nedit a//b\n```\n", -EINVAL,
		     "plan.md: line 2: edit an empty path component");
	expect_parse("```scope\nedit src/*.c\n```\n", -EINVAL,
		     "plan.md: line 2: edit a glob character in a path (only keep takes patterns)");
	expect_parse("```scope\nkeep src/[ab.c\n```\n", -EINVAL,
		     "plan.md: line 2: keep an unclosed '[' in the pattern");
	expect_parse("```scope\nkeep ../x\n```\n", -EINVAL,
		     "plan.md: line 2: keep a \".\" or \"..\" component");
	expect_parse("```scope\nedit a\n\nadd a\n```\n", -EINVAL,
		     "plan.md: line 4: a is already planned on line 2");
	expect_parse("```scope\nedit a\tb\x01\n```\n", -EINVAL,
		     "plan.md: line 2: edit a control character in the path");
	{
		static const char nul[] = "```scope\nedit a\0b\n```\n";
		struct scope sc;
		char err[128];

		ASSERT_EQ(scope_parse(nul, sizeof(nul) - 1, &sc, err, sizeof(err)), -EINVAL);
		ASSERT_STREQ(err, "plan.md: line 2: edit a NUL byte in the path");
		scope_free(&sc);
	}
}

#define M(pat, path, want) ASSERT_EQ(scope_match(pat, path), want)

TEST(match)
{
	/* A plain path: itself and what is under it. */
	M("src/old", "src/old", 1);
	M("src/old", "src/old/a.c", 1);
	M("src/old", "src/oldx", 0);
	M("src/old/", "src/old/a.c", 1);
	M("CHANGELOG.md", "x/CHANGELOG.md", 0);
	/* '*' stays in its component. */
	M("docs/*.svg", "docs/a.svg", 1);
	M("docs/*.svg", "docs/x/a.svg", 0);
	M("*.svg", "d/a.svg", 0);
	M("*", "a", 1);
	M("*", "a/b", 0);
	/* "**" crosses components, zero or more. */
	M("docs/**/*.svg", "docs/a.svg", 1);
	M("docs/**/*.svg", "docs/x/y/a.svg", 1);
	M("docs/**/*.svg", "docs/x/y/a.png", 0);
	M("docs/**", "docs/a", 1);
	M("docs/**", "docs/a/b/c", 1);
	M("docs/**", "docsx/a", 0);
	M("**/diagrams/**", "diagrams/y.svg", 1);
	M("**/diagrams/**", "a/b/diagrams/y.svg", 1);
	M("**/*.svg", "a.svg", 1);
	M("**", "any/thing", 1);
	M("a**b", "axxb", 1);
	M("a**b", "ax/xb", 0);
	/* ?, brackets, escapes. */
	M("fig?.png", "fig1.png", 1);
	M("fig?.png", "fig/.png", 0);
	M("fig[0-9].png", "fig7.png", 1);
	M("fig[!0-9].png", "fig7.png", 0);
	M("fig[!0-9].png", "figa.png", 1);
	M("[]x]", "]", 1);
	M("\\*.md", "*.md", 1);
	M("\\*.md", "a.md", 0);
	/* A glob directory with a trailing slash: what it holds. */
	M("build*/", "build-1/x.o", 1);
	M("build*/", "build-1", 0);
	/* Bounded work on a pattern made to backtrack. */
	M("a*a*a*a*a*a*a*a*a*a*a*a*a*b",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0);
	M("**/**/**/**/**/**/**/**/**/x",
	  "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/y", 0);
}
#undef M

static void check(const char *plan, const struct scope_change *ch, size_t n, const char *summary,
		  const char *kept_want, const char *md_has)
{
	struct scope sc;
	struct scope_result res;
	struct buf md, kept;
	char err[128], got[96];

	ASSERT_EQ(scope_parse(plan, strlen(plan), &sc, err, sizeof(err)), 1);
	buf_init(&md);
	buf_init(&kept);
	ASSERT_EQ(scope_check(&sc, ch, n, "0123456789012345678901234567890123456789", &md, &kept,
			      &res), 0);
	scope_summary(&res, got, sizeof(got));
	ASSERT_STREQ(got, summary);
	ASSERT_STREQ(kept.data ? kept.data : "", kept_want);
	if (md_has)
		ASSERT_CONTAINS(md.data, md_has);
	ASSERT_CONTAINS(md.data, "# Scope [");
	ASSERT_CONTAINS(md.data, "Head: 0123456789012345678901234567890123456789\n");
	buf_free(&md);
	buf_free(&kept);
	scope_free(&sc);
}

TEST(compare)
{
	static const char plan[] = "```scope\nedit src/a.c\nadd src/b.c\ndelete src/c.c\n"
				   "edit src/never.c\nkeep docs/**/*.svg\nkeep CHANGELOG.md\n```\n";
	struct scope_change clean[] = { { 'M', "src/a.c", NULL }, { 'A', "src/b.c", NULL },
					{ 'D', "src/c.c", NULL } };
	struct scope_change outside[] = { { 'M', "src/a.c", NULL }, { 'M', "README.md", NULL } };
	struct scope_change kept[] = { { 'M', "src/a.c", NULL }, { 'M', "docs/x/d.svg", NULL },
				       { 'M', "CHANGELOG.md", NULL } };
	/* A rename out of a kept directory: both paths. */
	struct scope_change renamed[] = { { 'D', "docs/old.svg", "src/old.svg" },
					  { 'A', "src/old.svg", "docs/old.svg" } };

	check(plan, clean, 3, "clean", "", "- edit `src/never.c`: untouched\n");
	check(plan, clean, 3, "clean", "", "- add `src/b.c`: added\n");
	check(plan, clean, 3, "clean", "", "## Outside the plan\n\nNone.\n");
	check(plan, clean, 3, "clean", "", "- `CHANGELOG.md`: untouched\n");
	check(plan, outside, 2, "1 outside the plan", "", "- `README.md`: edited\n");
	check(plan, kept, 3, "2 kept paths touched, 2 outside the plan", "docs/x/d.svg, CHANGELOG.md",
	      "- `docs/**/*.svg`: TOUCHED `docs/x/d.svg` (edited)\n");
	check(plan, renamed, 2, "1 kept path touched, 2 outside the plan", "docs/old.svg",
	      "- `docs/old.svg`: deleted (renamed to `src/old.svg`)\n");
	check(plan, renamed, 2, "1 kept path touched, 2 outside the plan", "docs/old.svg",
	      "- `src/old.svg`: added (renamed from `docs/old.svg`)\n");
	{
		/* A path named by two changes is one kept path. */
		struct scope_change twice[] = { { 'D', "CHANGELOG.md", "x" }, { 'M', "src/a.c", NULL },
						{ 'A', "CHANGELOG.md", "y" } };

		check(plan, twice, 3, "1 kept path touched, 2 outside the plan", "CHANGELOG.md",
		      "- `CHANGELOG.md`: TOUCHED `CHANGELOG.md` (deleted), `CHANGELOG.md` (added)\n");
	}
	check("```scope\n```\n", NULL, 0, "clean", "", "## Planned paths\n\nNone.\n");
	check("```scope\nedit a`b\n```\n", NULL, 0, "clean", "", "- edit `` a`b ``: untouched\n");
}

/* Many planned paths, the changes in another order: each found. */
TEST(compare_many)
{
	enum { N = 3000 };
	static char names[N][16];
	static struct scope_change ch[N];
	struct scope sc;
	struct scope_result res;
	struct buf plan, md;
	char err[128];
	size_t i;

	buf_init(&plan);
	buf_init(&md);
	ASSERT_EQ(buf_puts(&plan, "```scope\n"), 0);
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "src/f%zu.c", i);
		ASSERT_EQ(buf_printf(&plan, "edit %s\n", names[i]), 0);
		ch[N - 1 - i] = (struct scope_change){ 'M', names[i], NULL };
	}
	ASSERT_EQ(buf_puts(&plan, "keep src/f7.c\n```\n"), 0);
	ASSERT_EQ(scope_parse(plan.data, plan.len, &sc, err, sizeof(err)), 1);
	ASSERT_EQ(scope_check(&sc, ch, N - 1, "", &md, NULL, &res), 0);
	ASSERT_EQ(res.outside, 0);
	ASSERT_EQ(res.kept, 1);
	ASSERT_CONTAINS(md.data, "- edit `src/f0.c`: untouched\n");
	ASSERT_CONTAINS(md.data, "- edit `src/f2999.c`: edited\n");
	buf_free(&plan);
	buf_free(&md);
	scope_free(&sc);
}

int main(void)
{
	RUN(parse);
	RUN(parse_malformed);
	RUN(match);
	RUN(compare);
	RUN(compare_many);
	return 0;
}
