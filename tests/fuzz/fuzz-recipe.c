/*
 * fuzz-recipe.c - recipe header lines (recipe.h, engine/format/recipe.c):
 * the input is written as two recipes of a catalog directory, a script
 * "01-fuzz.sh" and a procedure "02-fuzz.md", and the catalog is loaded as
 * the engine loads it (recipe_catalog_load), so that the headers are read
 * from the file as they are in use. The directory lies under $TMPDIR and
 * is removed at exit.
 *
 * Contract checked: both recipes are listed; numbers are >= 0; needs,
 * when given, are recipe names (NN-name), never the recipe itself, never
 * repeated; versions are non-empty; a copy equals its original.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "recipe.h"
#include "util.h"

static char dir[4096], script[4200], procedure[4200];

static void cleanup(void)
{
	unlink(script);
	unlink(procedure);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/packetfs-fuzz-recipe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(1);
	}
	snprintf(script, sizeof(script), "%s/01-fuzz.sh", dir);
	snprintf(procedure, sizeof(procedure), "%s/02-fuzz.md", dir);
	atexit(cleanup);
	return 0;
}

static void put(const char *path, mode_t mode, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	CHECK(close(fd) == 0);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_recipe(const struct recipe *r)
{
	struct recipe copy;
	char **sorted;
	size_t i, n = strv_len(r->needs);

	CHECK(r->summary && r->versions && r->gpus >= 0 && r->timeout_s >= 0);
	CHECK(r->needs_default ? r->needs == NULL : r->needs != NULL);
	for (i = 0; r->needs && r->needs[i]; i++) {
		const char *w = r->needs[i];

		CHECK(strlen(w) >= 4 && w[0] >= '0' && w[0] <= '9' && w[1] >= '0' &&
		      w[1] <= '9' && w[2] == '-' && strcmp(w, r->name) != 0);
		CHECK(strspn(w + 3, "abcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(w + 3));
	}
	sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	if (sorted) {
		memcpy(sorted, r->needs, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp);
		for (i = 1; i < n; i++)
			CHECK(strcmp(sorted[i - 1], sorted[i]) != 0);
		free(sorted);
	}
	for (i = 0; r->versions[i]; i++)
		CHECK(r->versions[i][0]);
	if (recipe_copy(&copy, r) == 0) {
		CHECK(!strcmp(copy.name, r->name) && !strcmp(copy.summary, r->summary));
		CHECK(copy.gpus == r->gpus && copy.timeout_s == r->timeout_s);
		CHECK(strv_len(copy.needs) == strv_len(r->needs));
		CHECK(strv_len(copy.versions) == strv_len(r->versions));
		recipe_clear(&copy);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recipe_catalog cat;
	const struct recipe *r;

	put(script, 0755, data, size);
	put(procedure, 0644, data, size);
	if (recipe_catalog_load(dir, &cat) != 0) {
		recipe_catalog_free(&cat);
		return 0;
	}
	CHECK(cat.n == 2);
	r = recipe_find(&cat, "01-fuzz");
	CHECK(r && !r->procedure);
	check_recipe(r);
	r = recipe_find(&cat, "02-fuzz");
	CHECK(r && r->procedure);
	check_recipe(r);
	recipe_catalog_free(&cat);
	return 0;
}
