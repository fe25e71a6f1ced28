/*
 * fuzz-plan.c - the Markdown that the pipeline reads (recipe.h,
 * engine/format/recipe.c): plan.md's ```validation-recipes block
 * (recipe_plan_names) and disposition (recipe_plan_disposition), and the
 * markers of change-validation.md and review.md (recipe_doc_marker), each
 * on the whole input.
 *
 * Contract checked: names are non-empty, never repeated, hold no newline
 * and no NUL; a disposition is one word of [a-z0-9._-]; a marker is one
 * word without blanks, '*' or '`'.
 */
#include <errno.h>

#include "fuzz.h"
#include "recipe.h"
#include "util.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char **names = NULL, **sorted, word[DISPOSITION_MAX], marker[32];
	size_t i, n;
	int rc;

	rc = recipe_plan_names(text, size, &names);
	CHECK(rc == 0 || rc == -ENOENT || rc == -ENOMEM);
	CHECK(rc == 0 ? names != NULL : names == NULL);
	if (rc == 0) {
		n = strv_len(names);
		for (i = 0; i < n; i++) {
			CHECK(names[i][0] && !strchr(names[i], '\n'));
			CHECK(names[i][0] != ' ' && names[i][0] != '\t' && names[i][0] != '#');
		}
		sorted = malloc((n + 1) * sizeof(*sorted));
		if (sorted) {
			memcpy(sorted, names, n * sizeof(*sorted));
			qsort(sorted, n, sizeof(*sorted), cmp);
			for (i = 1; i < n; i++)
				CHECK(strcmp(sorted[i - 1], sorted[i]) != 0);
			free(sorted);
		}
		strv_free(names);
	}

	rc = recipe_plan_disposition(text, size, word, sizeof(word));
	CHECK(rc == 0 || rc == 1 || rc == -EINVAL);
	if (rc == 1) {
		CHECK(word[0] && strlen(word) < sizeof(word));
		CHECK(strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(word));
	}

	recipe_doc_marker(text, size, "Verdict", marker, sizeof(marker));
	CHECK(strlen(marker) < sizeof(marker) && !strpbrk(marker, " \t\r\n*`"));
	recipe_doc_marker(text, size, "Assessment", marker, 1);
	CHECK(marker[0] == '\0');
	return 0;
}
