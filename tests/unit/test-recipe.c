/*
 * test-recipe.c - the recipe catalog and plan.md's recipe list
 * (engine/recipe.c). The catalog cases build a real recipes directory in a
 * temporary directory (executable and non-executable files, names that are
 * and are not recipes, headers early and late) and remove it afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static void make_dir(void)
{
	char path[PATH_MAX + 256], late[4096];
	int i, n;

	/* mkdtemp wants a name ending in six 'X' */
	n = snprintf(dir, sizeof(dir), "%s/packetfs-recipe-......",
		     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(n > 6 && (size_t)n < sizeof(dir));
	memset(dir + n - 6, 'X', 6);
	ASSERT(mkdtemp(dir) != NULL);

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
	late[0] = '\0';
	strcat(late, "#!/bin/sh\n");
	for (i = 0; i < 29; i++)
		strcat(late, "echo filler\n");
	strcat(late, "# summary: too late\n# gpus: 4\n");
	put("11-late-header", 0755, late);
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
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
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
	struct recipe_catalog cat = { (struct recipe *)&cat, 7 };
	char path[PATH_MAX + 256];

	ASSERT_EQ(recipe_catalog_load(NULL, &cat), 0);
	ASSERT_EQ(cat.n, 0);
	ASSERT(cat.v == NULL);
	ASSERT(recipe_find(&cat, "01-build") == NULL);

	make_dir();
	snprintf(path, sizeof(path), "%s/no-such-dir", dir);
	ASSERT_EQ(recipe_catalog_load(path, &cat), 0);
	ASSERT_EQ(cat.n, 0);
	snprintf(path, sizeof(path), "%s/01-build.sh", dir);
	ASSERT_EQ(recipe_catalog_load(path, &cat), -ENOTDIR);
	ASSERT_EQ(cat.n, 0);
	ASSERT(cat.v == NULL);
	remove_dir();
}

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

int main(void)
{
	RUN(catalog);
	RUN(catalog_relative_dir);
	RUN(catalog_missing);
	RUN(plan_names);
	RUN(plan_no_block);
	RUN(plan_length);
	return 0;
}
