/*
 * pipe_gate.c - customs (SPEC §5): the gates a stage passes before it
 * starts, and the verdict and assessment those gates read, each bound to
 * the commit it was made at. Loop thread only, like the rest of pipe*.c.
 *
 * DESIGN. A verdict and an assessment are facts about one commit: the item
 * keeps each with the head it was made at (items.verdict_head,
 * items.assessment_head). Every gate reads the branch head as it is on
 * disk at the moment it decides and accepts only results made at exactly
 * that commit, so a commit made by hand, by a later stage or by a round
 * after a review makes every earlier verdict and assessment stale without
 * anything having to notice the move. The gates, for stage i:
 *   - after a validate stage: the verdict is pass at the head, and every
 *     recipe the plan names has a validated engine run at the head
 *     (registry_gate);
 *   - after a reviewing stage (config_stage_reviews): the assessment is
 *     sound at the head;
 *   - after either: no path the plan's scope block keeps is touched at
 *     the head (pipe__scope_refused; a round's new head meets it too);
 *   - a stage with "gate": "approve": approve was given (pipe.c drops it
 *     whenever a print starts or ends, and when the gated stage succeeds).
 * A refused gate names what is missing; the caller sets the item blocked
 * (or waiting, for approve alone).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"
#include "plan.h"

void pipe__set_verdict(struct item *it, const char *verdict, const char *head)
{
	pipe__item_set(&it->verdict, verdict);
	snprintf(it->verdict_head, sizeof(it->verdict_head), "%s", verdict[0] && head ? head : "");
}

void pipe__set_assessment(struct item *it, const char *assessment, const char *head)
{
	pipe__item_set(&it->assessment, assessment);
	snprintf(it->assessment_head, sizeof(it->assessment_head), "%s",
		 assessment[0] && head ? head : "");
}

/*
 * Whether a judgment (what: "verdict" or "assessment") lets stage name
 * through: its value must be want and made at head (40 hex digits, as
 * judged_at is). 0, or -EAGAIN with why: a missing or other value, or a
 * stale one ("made at abc123456789, the head is def123456789 now", then
 * advice).
 */
static int judged(const char *name, const char *what, const char *value, const char *want,
		  const char *judged_at, const char *head, const char *advice, char *why,
		  size_t size)
{
	if (strcmp(value, want) != 0) {
		snprintf(why, size, "%s: gate refused: %s is %s, not %s", name, what,
			 value[0] ? value : "missing", want);
		return -EAGAIN;
	}
	if (strcmp(judged_at, head) != 0) {
		snprintf(why, size, "%s: gate refused: the %s %s is stale (made at %.12s, the head "
			 "is %.12s now): %s", name, what, want,
			 judged_at[0] ? judged_at : "an unknown commit", head, advice);
		return -EAGAIN;
	}
	return 0;
}

/* A change that touches a path the plan's scope block keeps is refused
 * like a failing recipe, naming the paths; paths outside the plan are only
 * reported (scope.md). No block, no refusal. */
int pipe__scope_refused(struct pipe *p, const struct item *it, const char *head, char *why,
			size_t size)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	struct scope_result res;
	struct buf kept;
	char err[320];
	int rc;

	buf_init(&kept);
	rc = plan_scope(p->pl->store, it->id, cfg->repo, it->base, head, NULL, &kept, &res, err,
			sizeof(err));
	if (rc < 0)
		snprintf(why, size, "plan.md's scope: %s",
			 rc == -EINVAL || rc == -ENOENT ? err : strerror(-rc));
	else if (rc == 1 && res.kept)
		snprintf(why, size, "the change touches %zu kept path%s (plan.md's scope): %s",
			 res.kept, res.kept == 1 ? "" : "s", kept.data);
	buf_free(&kept);
	return rc < 0 || (rc == 1 && res.kept) ? -EAGAIN : 0;
}

int pipe__gate_check(struct pipe *p, struct item *it, size_t i, char *why, size_t size,
		     int *approve_wait)
{
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	const char *name = cfg->stages[i].name;
	char head[41] = "";
	size_t k;
	int after_validate = 0, after_review = 0, rc;

	*approve_wait = 0;
	for (k = 0; k < i; k++) {
		if (cfg->stages[k].recipes_from_plan)
			after_validate = 1;
		if (config_stage_reviews(&cfg->stages[k]))
			after_review = 1;
	}
	if ((after_validate || after_review) &&
	    (rc = repo_branch_head(cfg->repo, it->branch, head)) != 0) {
		snprintf(why, size, "%s: gate refused: cannot read the head of %s: %s", name,
			 it->branch, strerror(-rc));
		return -EAGAIN;
	}
	if (after_validate || after_review) {
		char reason[768];

		if (pipe__scope_refused(p, it, head, reason, sizeof(reason))) {
			snprintf(why, size, "%s: gate refused: %s", name, reason);
			return -EAGAIN;
		}
	}
	if (after_validate) {
		char **names = NULL, **lines = NULL;
		size_t nl = 0;

		if (judged(name, "verdict", it->verdict, "pass", it->verdict_head, head,
			   "validate again", why, size)) {
			/* Which recipes made the verdict no pass, as the registry
			 * says (a stale one needs no more than its advice). */
			char reason[512];
			size_t len = strlen(why);

			if (strcmp(it->verdict, "pass") != 0 && plan_names(p->pl->store, it->id, &names) == 0 &&
			    store_registry_lines(p->pl->store, it->id, &lines, &nl) == 0 &&
			    registry_gate(names, lines, nl, head, reason, sizeof(reason)) &&
			    len < size)
				snprintf(why + len, size - len, " (%s)", reason);
			strv_free(names);
			strv_free(lines);
			return -EAGAIN;
		}
		rc = plan_names(p->pl->store, it->id, &names);
		if (rc == 0)
			rc = store_registry_lines(p->pl->store, it->id, &lines, &nl);
		if (rc == 0) {
			char reason[512];

			rc = registry_gate(names, lines, nl, head, reason, sizeof(reason));
			if (rc)
				snprintf(why, size, "%s: gate refused: %s", name, reason);
		} else {
			snprintf(why, size, "%s: gate refused: cannot read the evidence: %s", name,
				 strerror(-rc));
		}
		strv_free(names);
		strv_free(lines);
		if (rc)
			return -EAGAIN;
	}
	/* A round's own commits are judged by the plan's recipes at the new
	 * head (pipe_round.c), not by another review. */
	if (after_review && !cfg->stages[i].rounds_max) {
		if (judged(name, "assessment", it->assessment, "sound", it->assessment_head, head,
			   "no review judged this head; run review again", why, size))
			return -EAGAIN;
	}
	if (cfg->stages[i].gate_approve && !it->approved) {
		snprintf(why, size, "%s: waiting for approve", name);
		*approve_wait = 1;
		return -EAGAIN;
	}
	return 0;
}

void pipe__doc_marker(struct pipe *p, const struct item *it, const char *doc, const char *key,
		      char *out, size_t size)
{
	char *text = NULL;
	size_t len;

	out[0] = '\0';
	if (store_doc_read(p->pl->store, it->id, doc, &text, &len))
		return;
	recipe_doc_marker(text, len, key, out, size);
	free(text);
}
