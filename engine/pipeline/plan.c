/*
 * plan.c - the recipes an item's plan.md names (plan.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "plan.h"
#include "exec.h"
#include "format.h"
#include "git.h"

int plan_names(struct store *s, int64_t item_id, char ***names)
{
	char *plan = NULL;
	size_t len;
	int rc;

	rc = store_doc_read(s, item_id, "plan.md", &plan, &len);
	if (rc)
		return rc == -EISDIR ? -ENOENT : rc;
	rc = recipe_plan_names(plan, len, names);
	free(plan);
	return rc;
}
