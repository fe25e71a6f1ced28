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

int view_scope_get(struct engine *e, const struct item *it, const char *head, char *out,
		   size_t size, struct buf *kept)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	struct scope_result res;
	char err[320];
	int rc;

	out[0] = '\0';
	if (!cfg->repo || !head || !head[0])
		return 0;
	rc = plan_scope(e->store, it->id, cfg->repo, it->base, head, NULL, kept, &res, err,
			sizeof(err));
	if (rc == 1) {
		scope_summary(&res, out, size);
		return res.kept ? 2 : 1;
	}
	if (rc == -EINVAL || rc == -ENOENT) {
		snprintf(out, size, "invalid: %s", err);
		return -1;
	}
	return 0;
}

int view_scope_evidence(struct engine *e, const struct item *it, const char *head,
			struct buf *out, size_t start)
{
	static const char tail[] = "\nGenerated from validation/registry.jsonl";
	struct buf kept, line;
	char summary[400];
	size_t n = sizeof(tail) - 1, at, i;
	int rc, got;

	buf_init(&kept);
	got = view_scope_get(e, it, head, summary, sizeof(summary), &kept);
	if (!got) {
		buf_free(&kept);
		return 0;
	}
	buf_init(&line);
	rc = buf_printf(&line, "\nScope: %s%s%s (validation/scope.md)\n", summary,
			got == 2 ? " — kept paths touched: " : "", got == 2 ? kept.data : "");
	buf_free(&kept);
	/* Before the footer, which stays the last line. */
	at = out->len;
	if (out->len - start >= n)
		for (i = out->len - n + 1; i-- > start;)
			if (memcmp(out->data + i, tail, n) == 0) {
				at = i;
				break;
			}
	if (rc == 0)
		rc = buf_append(out, line.data, line.len);
	if (rc == 0 && at < out->len - line.len) {
		memmove(out->data + at + line.len, out->data + at, out->len - line.len - at);
		memcpy(out->data + at, line.data, line.len);
	}
	buf_free(&line);
	return rc;
}
