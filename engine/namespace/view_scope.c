/*
 * view_scope.c - validation/scope.md and the scope line of status (SPEC §6
 * "Scope"): plan.md's scope block compared with the change at the branch
 * head as it is when the view is rendered, so a head that moves gives a
 * new comparison (plan_scope.h). Reads only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "namespace.h"

static const char footer[] = "\nGenerated from plan.md's scope block and change.diff — do not "
			     "edit by hand.\n";

int view_scope(struct engine *e, const struct item *it, struct buf *out)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	struct scope_result res;
	char head[41], err[320];
	int rc;

	if (!cfg->repo || view_head(e, it, head))
		return buf_printf(out, "# Scope\n\nThe branch %s has no head to compare.\n%s",
				  it->branch, footer);
	rc = plan_scope(e->store, it->id, cfg->repo, it->base, head, out, NULL, &res, err,
			sizeof(err));
	if (rc == 0)
		return buf_printf(out, "# Scope\n\nHead: %s\n\nplan.md has no ```scope block: "
				  "nothing is checked.\n%s", head, footer);
	if (rc == -EINVAL || rc == -ENOENT)
		return buf_printf(out, "# Scope [invalid]\n\nHead: %s\n\n%s\n%s", head, err, footer);
	return rc < 0 ? rc : 0;
}

void view_scope_summary(struct engine *e, const struct item *it, const char *head, char *out,
			size_t size)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	struct scope_result res;
	char err[320];
	int rc;

	out[0] = '\0';
	if (!cfg->repo || !head[0])
		return;
	rc = plan_scope(e->store, it->id, cfg->repo, it->base, head, NULL, NULL, &res, err,
			sizeof(err));
	if (rc == 1)
		scope_summary(&res, out, size);
	else if (rc == -EINVAL || rc == -ENOENT)
		snprintf(out, size, "invalid: %s", err);
}
