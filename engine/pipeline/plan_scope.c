/*
 * plan_scope.c - plan.md's scope block against the change at a head
 * (plan_scope.h): the block from the store, the changed paths from git
 * (repo_changes: a rename is the pair of its paths), the comparison from
 * the format (scope_check).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_scope.h"
#include "exec.h"
#include "git.h"

int plan_scope_read(struct store *s, int64_t item_id, struct scope *sc, char *err, size_t size)
{
	char *plan = NULL;
	size_t len;
	int rc;

	sc->v = NULL;
	sc->n = 0;
	rc = store_doc_read(s, item_id, "plan.md", &plan, &len);
	if (rc == -ENOENT || rc == -EISDIR)
		return 0;
	if (rc)
		return rc;
	rc = scope_parse(plan, len, sc, err, size);
	free(plan);
	return rc;
}

int plan_scope(struct store *s, int64_t item_id, const char *repo, const char *base,
	       const char *head, struct buf *md, struct buf *kept, struct scope_result *res,
	       char *err, size_t size)
{
	struct scope sc;
	struct repo_change *rc_v = NULL;
	struct scope_change *ch = NULL;
	size_t n = 0, i, k = 0;
	int rc;

	res->outside = res->kept = 0;
	rc = plan_scope_read(s, item_id, &sc, err, size);
	if (rc <= 0) {
		scope_free(&sc);
		return rc;
	}
	rc = repo_changes(repo, base, head, &rc_v, &n);
	if (rc) {
		snprintf(err, size, "cannot read the change at %.12s: %s", head, strerror(-rc));
		scope_free(&sc);
		return rc;
	}
	/* A rename is both of its paths: the old one deleted, the new added. */
	ch = calloc(2 * n + 1, sizeof(*ch));
	if (!ch)
		rc = -ENOMEM;
	for (i = 0; ch && i < n; i++) {
		if (rc_v[i].status == 'R') {
			ch[k++] = (struct scope_change){ 'D', rc_v[i].old_path, rc_v[i].path };
			ch[k++] = (struct scope_change){ 'A', rc_v[i].path, rc_v[i].old_path };
		} else {
			ch[k++] = (struct scope_change){ rc_v[i].status, rc_v[i].path, NULL };
		}
	}
	if (rc == 0)
		rc = scope_check(&sc, ch, k, head, md, kept, res);
	free(ch);
	repo_changes_free(rc_v, n);
	scope_free(&sc);
	return rc ? rc : 1;
}
