/*
 * test-recipe.c - the recipe catalog (engine/format/recipe.c;
 * test-recipe-plan.c has plan.md). The catalog cases build a real recipes directory in a
 * temporary directory (executable and non-executable files, names that are
 * and are not recipes, headers early and late, procedures, needs and
 * versions) and remove it afterwards. The freshness case waits once for
 * the files it made to be older than the racy window (two seconds), then
 * changes one directory per kind of change.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recipe.h"
#include "test.h"
#include "util.h"

static char dir[PATH_MAX];

static void put(const char *name, int mode, const char *text)
{
	char path[PATH_MAX + 256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
	ASSERT_EQ(fchmod(fd, (mode_t)mode), 0);
	close(fd);
}

/* Writes the script dir/name (mode 0755) with the header lines header
 * after 29 lines of filler: too late to count (recipe.c reads the first 30
 * lines). */
static void put_late(const char *name, const char *header)
{
	char text[4096] = "#!/bin/sh\n";
	int i;

	for (i = 0; i < 29; i++)
		strcat(text, "echo filler\n");
	strcat(text, header);
	put(name, 0755, text);
}

/* Makes dir, a new empty temporary directory. */
static void new_dir(void)
{
	int n;

	/* mkdtemp wants a name ending in six 'X' */
	n = snprintf(dir, sizeof(dir), "%s/packetfs-recipe-......",
		     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(n > 6 && (size_t)n < sizeof(dir));
	memset(dir + n - 6, 'X', 6);
	ASSERT(mkdtemp(dir) != NULL);
}

static void make_dir(void)
{
	char path[PATH_MAX + 256];

	new_dir();

	put("01-build.sh", 0755, "#!/bin/sh\n# summary: Build the project\n# gpus: 0\n"
	    "# timeout: 600\nmake\n");
	put("02-gpu-smoke", 0700, "#!/usr/bin/env python3\r\n#summary:  CUDA smoke test  \r\n"
	    "#  gpus : 2 \r\n# timeout: 90s\r\n# timeout: 5\r\n");
	put("03-not-exec.sh", 0644, "#!/bin/sh\n# summary: never listed\n");
	put("README.md", 0755, "# summary: not a recipe\n");
	put("4-short", 0755, "#!/bin/sh\n");
	put("05-Upper", 0755, "#!/bin/sh\n");
	put("06-", 0755, "#!/bin/sh\n");
	put("07-dup.sh", 0755, "#!/bin/sh\n# summary: the shell one\n");
	put("07-dup.py", 0755, "#!/usr/bin/env python3\n# summary: the python one\n");
	put("08-data.tar.gz", 0755, "#!/bin/sh\n");
	put("09-empty", 0755, "");
	put("10-bad-values", 0755, "#!/bin/sh\n# gpus: many\n# timeout: -3\n# summary:\n"
	    "# summary: second summary\n# gpus: 99999999999999\n");
	put_late("11-late-header", "# summary: too late\n# gpus: 4\n");
	put("12-gpu-header.bash", 0755, "#!/bin/bash\n# gpus: 1\n# summary: x | y\n");
	snprintf(path, sizeof(path), "%s/13-subdir", dir);
	ASSERT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/14-link", dir);
	ASSERT_EQ(symlink("01-build.sh", path), 0);
	snprintf(path, sizeof(path), "%s/15-dangling", dir);
	ASSERT_EQ(symlink("no-such-file", path), 0);
}

static void remove_dir(void)
{
	ASSERT_EQ(test_rmtree(dir), 0);
}

static void check_catalog(const struct recipe_catalog *cat)
{
	static const char *const names[] = { "01-build", "02-gpu-smoke", "07-dup", "08-data.tar",
		"09-empty", "10-bad-values", "11-late-header", "12-gpu-header", "14-link" };
	const struct recipe *r;
	char path[PATH_MAX + 256];
	size_t i;

	ASSERT_EQ(cat->n, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < cat->n; i++) {
		ASSERT_STREQ(cat->v[i].name, names[i]);
		ASSERT(recipe_find(cat, names[i]) == &cat->v[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, cat->v[i].file);
		ASSERT_STREQ(cat->v[i].path, path);
		ASSERT(cat->v[i].summary != NULL);
	}

	r = recipe_find(cat, "01-build");
	ASSERT_STREQ(r->file, "01-build.sh");
	ASSERT_STREQ(r->summary, "Build the project");
	ASSERT_EQ(r->gpus, 0);
	ASSERT_EQ(r->timeout_s, 600);

	r = recipe_find(cat, "02-gpu-smoke");
	ASSERT_STREQ(r->file, "02-gpu-smoke");
	ASSERT_STREQ(r->summary, "CUDA smoke test");
	ASSERT_EQ(r->gpus, 2);
	ASSERT_EQ(r->timeout_s, 90);

	r = recipe_find(cat, "07-dup");
	ASSERT_STREQ(r->file, "07-dup.py");
	ASSERT_STREQ(r->summary, "the python one");

	r = recipe_find(cat, "08-data.tar");
	ASSERT_STREQ(r->file, "08-data.tar.gz");

	r = recipe_find(cat, "09-empty");
	ASSERT_STREQ(r->summary, "");
	ASSERT_EQ(r->gpus, 0);
	ASSERT_EQ(r->timeout_s, 0);

	r = recipe_find(cat, "10-bad-values");
	ASSERT_STREQ(r->summary, "");
	ASSERT_EQ(r->gpus, 0);
	ASSERT_EQ(r->timeout_s, 0);

	r = recipe_find(cat, "11-late-header");
	ASSERT_STREQ(r->summary, "");
	ASSERT_EQ(r->gpus, 0);

	r = recipe_find(cat, "12-gpu-header");
	ASSERT_STREQ(r->file, "12-gpu-header.bash");
	ASSERT_EQ(r->gpus, 1);
	ASSERT_STREQ(r->summary, "x | y");

	r = recipe_find(cat, "14-link");
	ASSERT_STREQ(r->summary, "Build the project");

	ASSERT(recipe_find(cat, "03-not-exec") == NULL);
	ASSERT(recipe_find(cat, "03-not-exec.sh") == NULL);
	ASSERT(recipe_find(cat, "01-build.sh") == NULL);
	ASSERT(recipe_find(cat, "README") == NULL);
	ASSERT(recipe_find(cat, "13-subdir") == NULL);
	ASSERT(recipe_find(cat, "15-dangling") == NULL);
	ASSERT(recipe_find(cat, "00-nothing") == NULL);
	ASSERT(recipe_find(cat, "99-zzz") == NULL);
}

TEST(catalog)
{
	struct recipe_catalog cat;
	char with_slash[PATH_MAX + 2];

	make_dir();
	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	check_catalog(&cat);
	recipe_catalog_free(&cat);
	ASSERT(cat.v == NULL);
	ASSERT_EQ(cat.n, 0);
	recipe_catalog_free(&cat);

	snprintf(with_slash, sizeof(with_slash), "%s/", dir);
	ASSERT_EQ(recipe_catalog_load(with_slash, &cat), 0);
	check_catalog(&cat);
	recipe_catalog_free(&cat);
	remove_dir();
}

TEST(catalog_relative_dir)
{
	struct recipe_catalog cat;
	char cwd[PATH_MAX], *slash;

	make_dir();
	ASSERT(getcwd(cwd, sizeof(cwd)) != NULL);
	slash = strrchr(dir, '/');
	*slash = '\0';
	ASSERT_EQ(chdir(dir), 0);
	*slash = '/';
	ASSERT_EQ(recipe_catalog_load(slash + 1, &cat), 0);
	ASSERT_EQ(chdir(cwd), 0);
	check_catalog(&cat);
	recipe_catalog_free(&cat);
	remove_dir();
}

TEST(catalog_missing)
{
	struct recipe_catalog cat = { (struct recipe *)&cat, 7, (struct recipe_stamp *)&cat };
	char path[PATH_MAX + 256];

	ASSERT_EQ(recipe_catalog_load(NULL, &cat), 0);
	ASSERT_EQ(cat.n, 0);
	ASSERT(cat.v == NULL);
	ASSERT(recipe_find(&cat, "01-build") == NULL);
	recipe_catalog_free(&cat);

	make_dir();
	snprintf(path, sizeof(path), "%s/no-such-dir", dir);
	ASSERT_EQ(recipe_catalog_load(path, &cat), 0);
	ASSERT_EQ(cat.n, 0);
	recipe_catalog_free(&cat);
	snprintf(path, sizeof(path), "%s/01-build.sh", dir);
	ASSERT_EQ(recipe_catalog_load(path, &cat), -ENOTDIR);
	ASSERT_EQ(cat.n, 0);
	ASSERT(cat.v == NULL);
	ASSERT(cat.stamp == NULL);
	ASSERT_EQ(recipe_catalog_fresh(path, &cat), 0);
	remove_dir();
}

/* The entries of the list v joined with ',' ("(null)" for NULL). */
static void expect_list(char **v, const char *joined)
{
	char *got;

	if (!v) {
		ASSERT_STREQ("(null)", joined);
		return;
	}
	got = strv_join(v, ",", 0);
	ASSERT_STREQ(got, joined);
	free(got);
}

TEST(procedures)
{
	struct recipe_catalog cat;
	const struct recipe *r;
	char path[PATH_MAX + 256];

	new_dir();
	put("01-build.sh", 0755, "#!/bin/sh\n# summary: build\nmake\n");
	put("02-check.md", 0644, "# summary: The API is documented\n# timeout: 120\n"
	    "# gpus: 1\n# version: doxygen --version\n\n## What to prove\n\nEvery header...\n");
	put("03-exec-proc.md", 0755, "<!--\n# summary: in a comment block\n# needs: none\n"
	    "-->\n# Heading\n\nProse.\n");
	put("04-inline.md", 0600, "Title\n<!-- # summary: inline comment -->\n"
	    "  <!--# version: nvcc --version-->\r\n<!-- # gpus: 2\n");
	put("05-prose.md", 0400, "# Summary: not a header (case)\n# summaryx: no\nText.\n");
	put("README.md", 0644, "# summary: not a recipe\n");
	put("6-short.md", 0644, "# summary: bad name\n");
	put("07-Upper.md", 0644, "# summary: bad name\n");
	put("08-.md", 0644, "# summary: bad name\n");
	put("09-notes.txt", 0644, "# summary: not executable, not .md\n");
	put("10-plain", 0644, "# summary: not executable\n");
	put("11-dup.md", 0644, "# summary: the procedure\n");
	put("11-dup.sh", 0755, "#!/bin/sh\n# summary: the script\n");
	put("12-notes.txt.md", 0644, "# summary: double extension\n");
	snprintf(path, sizeof(path), "%s/13-dir.md", dir);
	ASSERT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/14-link.md", dir);
	ASSERT_EQ(symlink("02-check.md", path), 0);
	put("15-script-comment.sh", 0755, "#!/bin/sh\n<!-- # summary: only in procedures -->\n");

	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	ASSERT_EQ(cat.n, 9);

	r = recipe_find(&cat, "01-build");
	ASSERT(r && !r->procedure);

	r = recipe_find(&cat, "02-check");
	ASSERT(r != NULL);
	ASSERT_STREQ(r->file, "02-check.md");
	ASSERT_EQ(r->procedure, 1);
	ASSERT_STREQ(r->summary, "The API is documented");
	ASSERT_EQ(r->timeout_s, 120);
	ASSERT_EQ(r->gpus, 1);
	expect_list(r->versions, "doxygen --version");
	ASSERT_EQ(r->needs_default, 1);

	r = recipe_find(&cat, "03-exec-proc");
	ASSERT(r && r->procedure);
	ASSERT_STREQ(r->summary, "in a comment block");
	ASSERT_EQ(r->needs_default, 0);
	expect_list(r->needs, "");

	r = recipe_find(&cat, "04-inline");
	ASSERT(r && r->procedure);
	ASSERT_STREQ(r->summary, "inline comment");
	expect_list(r->versions, "nvcc --version");
	ASSERT_EQ(r->gpus, 2);

	r = recipe_find(&cat, "05-prose");
	ASSERT(r && r->procedure);
	ASSERT_STREQ(r->summary, "");

	r = recipe_find(&cat, "11-dup");
	ASSERT_STREQ(r->file, "11-dup.md");
	ASSERT_EQ(r->procedure, 1);

	r = recipe_find(&cat, "12-notes.txt");
	ASSERT_STREQ(r->file, "12-notes.txt.md");
	ASSERT_EQ(r->procedure, 1);

	r = recipe_find(&cat, "14-link");
	ASSERT(r && r->procedure);
	ASSERT_STREQ(r->summary, "The API is documented");

	r = recipe_find(&cat, "15-script-comment");
	ASSERT(r && !r->procedure);
	ASSERT_STREQ(r->summary, "");

	ASSERT(recipe_find(&cat, "README") == NULL);
	ASSERT(recipe_find(&cat, "6-short") == NULL);
	ASSERT(recipe_find(&cat, "07-Upper") == NULL);
	ASSERT(recipe_find(&cat, "08-") == NULL);
	ASSERT(recipe_find(&cat, "09-notes") == NULL);
	ASSERT(recipe_find(&cat, "10-plain") == NULL);
	ASSERT(recipe_find(&cat, "13-dir") == NULL);
	recipe_catalog_free(&cat);
	remove_dir();
}

/*
 * Needs: bad words (not NN-name), the recipe's own name and repeats are
 * ignored; a needs line that names nothing valid (and not "none") counts
 * as absent, so that a typo does not let the recipe start at once.
 */
TEST(needs)
{
	struct recipe_catalog cat;

	new_dir();
	put("01-a.sh", 0755, "#!/bin/sh\n");
	put("02-b.sh", 0755, "#!/bin/sh\n# needs: none\n");
	put("03-c.sh", 0755, "#!/bin/sh\n# needs: 01-a, 02-b\n");
	put("04-d.sh", 0755, "#!/bin/sh\n#needs:01-a,02-b   ,  03-c\t01-a,,\r\n");
	put("05-e.sh", 0755, "#!/bin/sh\n# needs: build 01_a 01-A 1-a 04-d 05-e ../01-a\n");
	put("06-f.sh", 0755, "#!/bin/sh\n# needs: build\n");
	put("07-g.sh", 0755, "#!/bin/sh\n# needs:\n");
	put("08-h.sh", 0755, "#!/bin/sh\n# needs: 01-a\n# summary: two lines\n# needs: 02-b 01-a\n");
	put("09-i.sh", 0755, "#!/bin/sh\n# needs: none, 01-a\n");
	put("10-j.md", 0644, "<!--\n# needs: 99-not-in-catalog 08-data.tar\n-->\n");
	put("11-k.sh", 0755, "#!/bin/sh\n# needs: 05-e\n# needs: none\n");
	put_late("12-late.sh", "# needs: none\n");

	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	ASSERT_EQ(cat.n, 12);
#define NEEDS(name, dflt, joined)                                        \
	do {                                                             \
		const struct recipe *r_ = recipe_find(&cat, name);       \
		ASSERT(r_ != NULL);                                      \
		ASSERT_EQ(r_->needs_default, dflt);                      \
		expect_list(r_->needs, joined);                          \
	} while (0)
	NEEDS("01-a", 1, "(null)");
	NEEDS("02-b", 0, "");
	NEEDS("03-c", 0, "01-a,02-b");
	NEEDS("04-d", 0, "01-a,02-b,03-c");
	NEEDS("05-e", 0, "04-d");
	NEEDS("06-f", 1, "(null)");
	NEEDS("07-g", 1, "(null)");
	NEEDS("08-h", 0, "01-a,02-b");
	NEEDS("09-i", 0, "01-a");
	NEEDS("10-j", 0, "99-not-in-catalog,08-data.tar");
	NEEDS("11-k", 0, "05-e");
	NEEDS("12-late", 1, "(null)");
#undef NEEDS
	ASSERT_STREQ(recipe_find(&cat, "08-h")->summary, "two lines");
	recipe_catalog_free(&cat);
	remove_dir();
}

/* A needs line of 3,000 names, each given twice, keeps them once, in order
 * (repeats are found by sorting, not by comparing each with all before). */
TEST(needs_many)
{
	enum { N = 3000 };
	struct recipe_catalog cat;
	const struct recipe *r;
	struct buf text = { 0 };
	char want[32];
	size_t i;

	new_dir();
	ASSERT_EQ(buf_puts(&text, "#!/bin/sh\n# needs:"), 0);
	for (i = 0; i < 2 * N; i++)
		ASSERT_EQ(buf_printf(&text, " %02zu-n%zu", i % N % 100, i % N), 0);
	ASSERT_EQ(buf_puts(&text, "\n"), 0);
	put("99-many.sh", 0755, text.data);
	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	r = recipe_find(&cat, "99-many");
	ASSERT(r != NULL);
	ASSERT_EQ(r->needs_default, 0);
	ASSERT_EQ(strv_len(r->needs), N);
	for (i = 0; i < N; i += 97) {
		snprintf(want, sizeof(want), "%02zu-n%zu", i % 100, i);
		ASSERT_STREQ(r->needs[i], want);
	}
	recipe_catalog_free(&cat);
	buf_free(&text);
	remove_dir();
}

TEST(versions)
{
	struct recipe_catalog cat;
	const struct recipe *r;

	new_dir();
	put("01-none.sh", 0755, "#!/bin/sh\n# summary: no versions\n");
	put("02-several.sh", 0755, "#!/bin/sh\n# version: cmake --version\n"
	    "#version:  gcc --version | head -1  \r\n# version:\n# summary: s\n"
	    "# version: cmake --version\n# versions: not this\n# version: python3 -V\n");
	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	ASSERT_EQ(cat.n, 2);
	r = recipe_find(&cat, "01-none");
	ASSERT(r->versions != NULL);
	ASSERT(r->versions[0] == NULL);
	r = recipe_find(&cat, "02-several");
	/* In order, repeats kept, empty ones left out. */
	expect_list(r->versions, "cmake --version,gcc --version | head -1,cmake --version,"
		    "python3 -V");
	ASSERT_STREQ(r->summary, "s");
	recipe_catalog_free(&cat);
	remove_dir();
}

/* "# requires:": every line's words, blanks and commas between, in order,
 * repeats dropped, any spelling kept (cut to 64 bytes); in a procedure's
 * HTML comment too; past the 30th line not read. */
TEST(requires)
{
	struct recipe_catalog cat;
	struct recipe copy;
	const struct recipe *r;

	new_dir();
	put("01-none.sh", 0755, "#!/bin/sh\n# summary: no requires\n");
	put("02-some.sh", 0755, "#!/bin/sh\n# requires: torch, docker\r\n#requires:\n"
	    "#  requires :  vllm torch\t Bad_Name\n# require: not-this\n"
	    "# requires: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaTAIL\n");
	put("03-proc.md", 0644, "<!-- # requires: docker -->\nProve it.\n");
	put_late("04-late", "# requires: torch\n");
	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	ASSERT_EQ(cat.n, 4);
	r = recipe_find(&cat, "01-none");
	ASSERT(r->requires != NULL && r->requires[0] == NULL);
	r = recipe_find(&cat, "02-some");
	expect_list(r->requires, "torch,docker,vllm,Bad_Name,"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	ASSERT_EQ(recipe_copy(&copy, r), 0);
	ASSERT(copy.requires != r->requires);
	expect_list(copy.requires, "torch,docker,vllm,Bad_Name,"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	recipe_clear(&copy);
	expect_list(recipe_find(&cat, "03-proc")->requires, "docker");
	expect_list(recipe_find(&cat, "04-late")->requires, "");
	recipe_catalog_free(&cat);
	remove_dir();
}

/* The measure lines as the catalog reads them (measure.c's cases are in
 * test-measure.c): good ones, a bad one's reason, and a copy's own. */
TEST(measure)
{
	struct recipe_catalog cat;
	struct recipe copy;
	const struct recipe *r;

	new_dir();
	put("01-plain.sh", 0755, "#!/bin/sh\n# summary: not measured\n");
	put("02-bench.sh", 0755, "#!/bin/sh\n# measure: base\n# repeat: 7\r\n#  warmup : 2\n"
	    "# budget: wall_s +2%\n# budget: rps +0.5%\n");
	put("03-bad.sh", 0755, "#!/bin/sh\n# measure: base\n# repeat: 0\n# repeat: x\n");
	put("04-alone.sh", 0755, "#!/bin/sh\n# warmup: 1\n");
	put_late("05-late", "# measure: base\n");
	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	r = recipe_find(&cat, "01-plain");
	ASSERT(r->measure.measured == 0 && r->measure.error == NULL);
	ASSERT_EQ(measure_repeat(&r->measure), 5);
	r = recipe_find(&cat, "02-bench");
	ASSERT(r->measure.measured == 1 && r->measure.error == NULL);
	ASSERT_EQ(measure_repeat(&r->measure), 7);
	ASSERT_EQ(r->measure.warmup, 2);
	ASSERT_EQ(r->measure.nbudgets, 2);
	ASSERT_STREQ(r->measure.budgets[1].metric, "rps");
	ASSERT(r->measure.budgets[1].percent == 0.5);
	ASSERT_EQ(recipe_copy(&copy, r), 0);
	ASSERT(copy.measure.budgets != r->measure.budgets);
	ASSERT_STREQ(copy.measure.budgets[0].metric, "wall_s");
	recipe_clear(&copy);
	r = recipe_find(&cat, "03-bad");
	ASSERT_STREQ(r->measure.error, "# repeat: 0: not a whole number from 1 to 1000");
	ASSERT_EQ(recipe_copy(&copy, r), 0);
	ASSERT(copy.measure.error != r->measure.error);
	ASSERT_STREQ(copy.measure.error, r->measure.error);
	recipe_clear(&copy);
	ASSERT_STREQ(recipe_find(&cat, "04-alone")->measure.error,
		     "# warmup: needs \"# measure: base\"");
	ASSERT_EQ(recipe_find(&cat, "05-late")->measure.measured, 0);
	recipe_catalog_free(&cat);
	remove_dir();
}

static void expect_same(const struct recipe *a, const struct recipe *b)
{
	ASSERT_STREQ(a->name, b->name);
	ASSERT_STREQ(a->file, b->file);
	ASSERT_STREQ(a->path, b->path);
	ASSERT_STREQ(a->summary, b->summary);
	ASSERT_EQ(a->gpus, b->gpus);
	ASSERT_EQ(a->timeout_s, b->timeout_s);
	ASSERT_EQ(a->procedure, b->procedure);
	ASSERT_EQ(a->needs_default, b->needs_default);
	ASSERT_EQ(!a->needs, !b->needs);
	if (a->needs) {
		char *x = strv_join(a->needs, ",", 0), *y = strv_join(b->needs, ",", 0);

		ASSERT(a->needs != b->needs);
		ASSERT_STREQ(x, y);
		free(x);
		free(y);
	}
	{
		char *x = strv_join(a->versions, ",", 0), *y = strv_join(b->versions, ",", 0);

		ASSERT(a->versions != b->versions);
		ASSERT_STREQ(x, y);
		free(x);
		free(y);
	}
	ASSERT(a->name != b->name && a->summary != b->summary);
}

TEST(copy_clear)
{
	static const struct recipe zero;
	struct recipe_catalog cat;
	struct recipe copies[4], empty, r;
	size_t i;

	new_dir();
	put("01-a.sh", 0755, "#!/bin/sh\n# summary: a\n# gpus: 3\n# timeout: 9\n");
	put("02-b.md", 0644, "# needs: none\n# version: x --version\n# version: y -V\n");
	put("03-c.sh", 0755, "#!/bin/sh\n# needs: 01-a 02-b\n");
	put("04-d.md", 0644, "# needs: 03-c\n");
	ASSERT_EQ(recipe_catalog_load(dir, &cat), 0);
	ASSERT_EQ(cat.n, 4);
	for (i = 0; i < cat.n; i++) {
		memset(&copies[i], 0x5a, sizeof(copies[i]));
		ASSERT_EQ(recipe_copy(&copies[i], &cat.v[i]), 0);
		expect_same(&copies[i], &cat.v[i]);
	}
	recipe_catalog_free(&cat);
	/* The copies own their strings: still whole after the catalog went. */
	ASSERT_STREQ(copies[0].summary, "a");
	ASSERT_EQ(copies[0].gpus, 3);
	ASSERT_EQ(copies[0].timeout_s, 9);
	expect_list(copies[1].versions, "x --version,y -V");
	expect_list(copies[1].needs, "");
	expect_list(copies[2].needs, "01-a,02-b");
	ASSERT_EQ(copies[3].procedure, 1);
	for (i = 0; i < 4; i++) {
		recipe_clear(&copies[i]);
		ASSERT(memcmp(&copies[i], &zero, sizeof(zero)) == 0);
		recipe_clear(&copies[i]);
	}

	/* A zeroed recipe: NULL stays NULL, versions becomes an empty list. */
	memset(&r, 0, sizeof(r));
	r.gpus = 1;
	ASSERT_EQ(recipe_copy(&empty, &r), 0);
	ASSERT(empty.name == NULL && empty.summary == NULL && empty.needs == NULL);
	ASSERT(empty.versions != NULL && empty.versions[0] == NULL);
	ASSERT_EQ(empty.gpus, 1);
	recipe_clear(&empty);
	recipe_clear(NULL);
	remove_dir();
}

/* Sets the times of dir/name to an hour ago (mtime only; ctime moves). */
static void age(const char *name)
{
	char path[PATH_MAX + 256];
	struct timespec t[2];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 3600;
	t[1] = t[0];
	ASSERT_EQ(utimensat(AT_FDCWD, path, t, 0), 0);
}

TEST(fresh)
{
	static const char *const subs[] = { "add", "remove", "rewrite", "chmod", "chmod-skipped",
		"rename", "touch", "untouched", "retarget" };
	enum { NSUB = sizeof(subs) / sizeof(subs[0]) };
	struct recipe_catalog cat[NSUB], none, missing, racy, zero = { NULL, 0, NULL };
	char path[PATH_MAX + 256], other[PATH_MAX + 256], sub[2 * PATH_MAX + 512];
	struct stat before, after;
	size_t i;

	new_dir();
	for (i = 0; i < NSUB; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, subs[i]);
		ASSERT_EQ(mkdir(sub, 0755), 0);
		snprintf(path, sizeof(path), "%s/01-x.sh", subs[i]);
		put(path, 0755, "#!/bin/sh\n# summary: one\nexit 0\n");
		snprintf(path, sizeof(path), "%s/02-y.md", subs[i]);
		put(path, 0644, "# summary: procedure\n");
		snprintf(path, sizeof(path), "%s/03-skipped.sh", subs[i]);
		put(path, 0644, "#!/bin/sh\n");
		snprintf(path, sizeof(path), "%s/README", subs[i]);
		put(path, 0644, "not a recipe\n");
		snprintf(path, sizeof(path), "%s/04-link.sh", subs[i]);
		snprintf(sub, sizeof(sub), "%s/%s", dir, path);
		ASSERT_EQ(symlink("01-x.sh", sub), 0);
	}

	/* Never loaded, loaded without a directory, a missing directory. */
	ASSERT_EQ(recipe_catalog_fresh(dir, &zero), 0);
	ASSERT_EQ(recipe_catalog_fresh(NULL, &zero), 0);
	ASSERT_EQ(recipe_catalog_fresh(NULL, NULL), 0);
	ASSERT_EQ(recipe_catalog_load(NULL, &none), 0);
	ASSERT_EQ(recipe_catalog_fresh(NULL, &none), 1);
	ASSERT_EQ(recipe_catalog_fresh(dir, &none), 0);
	recipe_catalog_free(&none);
	snprintf(path, sizeof(path), "%s/missing", dir);
	ASSERT_EQ(recipe_catalog_load(path, &missing), 0);
	ASSERT_EQ(missing.n, 0);
	ASSERT_EQ(recipe_catalog_fresh(path, &missing), 1);
	ASSERT_EQ(recipe_catalog_fresh(dir, &missing), 0);
	ASSERT_EQ(recipe_catalog_fresh(NULL, &missing), 0);
	ASSERT_EQ(mkdir(path, 0755), 0);
	ASSERT_EQ(recipe_catalog_fresh(path, &missing), 0);
	recipe_catalog_free(&missing);

	/* Just written: racy, never fresh, even with the mtimes made old
	 * (their ctimes are new). */
	snprintf(sub, sizeof(sub), "%s/untouched", dir);
	ASSERT_EQ(recipe_catalog_load(sub, &racy), 0);
	ASSERT_EQ(racy.n, 3);
	ASSERT_EQ(recipe_catalog_fresh(sub, &racy), 0);
	recipe_catalog_free(&racy);
	age("untouched/01-x.sh");
	ASSERT_EQ(recipe_catalog_load(sub, &racy), 0);
	ASSERT_EQ(recipe_catalog_fresh(sub, &racy), 0);
	recipe_catalog_free(&racy);

	/* Past the racy window every catalog is fresh. */
	sleep(3);
	for (i = 0; i < NSUB; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, subs[i]);
		ASSERT_EQ(recipe_catalog_load(sub, &cat[i]), 0);
		ASSERT_EQ(cat[i].n, 3);
		ASSERT_EQ(recipe_catalog_fresh(sub, &cat[i]), 1);
	}

	put("add/05-new.sh", 0755, "#!/bin/sh\n");
	snprintf(path, sizeof(path), "%s/remove/02-y.md", dir);
	ASSERT_EQ(unlink(path), 0);
	/* Same size, same inode: only the times tell. */
	snprintf(path, sizeof(path), "%s/rewrite/01-x.sh", dir);
	ASSERT_EQ(stat(path, &before), 0);
	put("rewrite/01-x.sh", 0755, "#!/bin/sh\n# summary: two\nexit 1\n");
	ASSERT_EQ(stat(path, &after), 0);
	ASSERT_EQ(before.st_ino, after.st_ino);
	ASSERT_EQ(before.st_size, after.st_size);
	snprintf(path, sizeof(path), "%s/chmod/01-x.sh", dir);
	ASSERT_EQ(chmod(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/chmod-skipped/03-skipped.sh", dir);
	ASSERT_EQ(chmod(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/rename/02-y.md", dir);
	snprintf(other, sizeof(other), "%s/rename/02-z.md", dir);
	ASSERT_EQ(rename(path, other), 0);
	snprintf(path, sizeof(path), "%s/touch/02-y.md", dir);
	ASSERT_EQ(utimensat(AT_FDCWD, path, NULL, 0), 0);
	/* A link now names another file: the link is replaced (the
	 * directory moves) and so is what a stat through it sees. */
	snprintf(path, sizeof(path), "%s/retarget/04-link.sh.tmp", dir);
	snprintf(other, sizeof(other), "%s/retarget/04-link.sh", dir);
	ASSERT_EQ(symlink("03-skipped.sh", path), 0);
	ASSERT_EQ(rename(path, other), 0);
	/* Reading a recipe changes nothing. */
	snprintf(path, sizeof(path), "%s/untouched/01-x.sh", dir);
	{
		char *data = NULL;
		size_t len;

		ASSERT_EQ(util_read_file(path, 4096, &data, &len), 0);
		free(data);
	}

	for (i = 0; i < NSUB; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, subs[i]);
		ASSERT_EQ(recipe_catalog_fresh(sub, &cat[i]), strcmp(subs[i], "untouched") == 0);
		recipe_catalog_free(&cat[i]);
		ASSERT(cat[i].stamp == NULL);
		ASSERT_EQ(recipe_catalog_fresh(sub, &cat[i]), 0);
	}
	remove_dir();
}

int main(void)
{
	RUN(catalog);
	RUN(catalog_relative_dir);
	RUN(catalog_missing);
	RUN(procedures);
	RUN(needs);
	RUN(needs_many);
	RUN(versions);
	RUN(requires);
	RUN(measure);
	RUN(copy_clear);
	RUN(fresh);
	return 0;
}
