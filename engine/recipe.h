/*
 * recipe.h - the recipe catalog (SPEC §6) and the plan's recipe list.
 *
 * A recipe is an executable regular file "NN-name" or "NN-name.ext" in the
 * recipes directory; its name is the file name without extension. Header
 * lines within its first 30 lines: "# summary: text", "# gpus: N",
 * "# timeout: SECONDS". Files that do not match NN-name or are not
 * executable are skipped. Thread-safe (no shared state).
 */
#ifndef PACKETFS_RECIPE_H
#define PACKETFS_RECIPE_H

#include <stddef.h>

struct recipe {
	char *name;    /* "03-unit-tests" */
	char *file;    /* "03-unit-tests.sh" */
	char *path;    /* absolute path */
	char *summary; /* "" when absent */
	int gpus;      /* default 0 */
	int timeout_s; /* 0 = none */
	int procedure;   /* 1 for a procedure "NN-name.md": header lines then prose, no command; it is
	                  * run only through the recorder (packetfs record) */
	int needs_default; /* 1 when there is no "# needs:" line: the recipe needs every
	                    * lower-numbered recipe of its batch */
	char **needs;    /* NULL-terminated recipe names of "# needs: A B" (words separated by blanks
	                  * or commas); an empty list (non-NULL, first element NULL) for "# needs: none";
	                  * NULL when needs_default */
	char **versions; /* the "# version: COMMAND" lines' commands, in order, NULL-terminated, never
	                  * NULL (empty list when none) */
};

struct recipe_catalog {
	struct recipe *v; /* sorted by name */
	size_t n;
};

/* Loads dir (NULL or missing dir gives an empty catalog and 0). Returns 0,
 * -ENOMEM, or -errno of opendir for errors other than ENOENT. */
int recipe_catalog_load(const char *dir, struct recipe_catalog *out);
void recipe_catalog_free(struct recipe_catalog *cat);
const struct recipe *recipe_find(const struct recipe_catalog *cat, const char *name);

/*
 * Parses the first ```validation-recipes fenced block of a plan.md text:
 * one recipe name per line, blank lines and lines starting with '#'
 * ignored, surrounding spaces and a leading "- " stripped. On success
 * returns 0 and a NULL-terminated, de-duplicated list in *names (caller
 * frees with strv_free; may be empty). Returns -ENOENT when the plan has no
 * such block, -ENOMEM on allocation failure.
 */
int recipe_plan_names(const char *plan, size_t len, char ***names);

#endif
