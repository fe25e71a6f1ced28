/*
 * pipe_batch.c - batches of recipe runs and the end of a validation (SPEC
 * §5), on the loop thread: the validate stage's batch of the plan's
 * recipes, a rerun's batch, a recorded run's batch of one.
 *
 * DESIGN. When a validation's batch is empty the validator program runs,
 * or the engine writes change-validation.md itself, counting only runs at
 * the branch's current head (registry.h: stale evidence). A rerun returns
 * the item to the state it had; a recorded run leaves it alone. Either
 * recomputes the verdict at the head, unless a stage of the item runs
 * (then that stage decides).
 *
 * Invariants: a batch's pending counts its recipes queued or running (one
 * more while they are being queued, or while a step pumps the queue);
 * pipe__batch_step runs whenever it drops, and the batch ends
 * (pipe__validation_finish frees it) at zero.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"
#include "plan.h"

/* Appends a line to lines as pipe__log_line would write it (at most
 * 2047 bytes). */
static void batch_line(struct buf *lines, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void batch_line(struct buf *lines, const char *fmt, ...)
{
	char line[PIPE_LINE_SIZE];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = pipe__line_vformat(line, fmt, ap);
	va_end(ap);
	if (n)
		buf_append(lines, line, n);
}

void pipe__batch_run_plan(struct pipe *p, struct item *it, struct batch *b)
{
	struct job *lj = b->stage_job;
	char **names = NULL;
	struct buf lines;
	size_t k;

	b->next = p->batches;
	p->batches = b;
	/* What the stage's log says of the plan's recipes, in one append
	 * before any of them starts. */
	buf_init(&lines);
	if (plan_names(p->pl->store, it->id, &names)) {
		batch_line(&lines, "[packetfs] plan.md has no ```validation-recipes block\n");
	} else {
		const struct recipe_catalog *cat = pipeline_recipes_hold(p->pl);

		pipe__order_names(cat, names);
		for (k = 0; names[k]; k++) {
			const struct recipe *r = recipe_find(cat, names[k]);

			if (!r) {
				batch_line(&lines, "[packetfs] plan.md names unknown recipe '%s'\n",
					   names[k]);
				continue;
			}
			if (r->procedure) {
				batch_line(&lines, "[packetfs] %s is a procedure: the validator "
					   "records its commands (packetfs record %s -- ...)\n",
					   r->name, r->name);
				continue;
			}
			batch_line(&lines, "[packetfs] queued %s\n", r->name);
			pipe__queue_recipe(p, it, r, b, NULL);
		}
		pipeline_recipes_release(p->pl);
	}
	strv_free(names);
	if (lj && lines.len)
		pipe__log_append(p, lj, lines.data, lines.len);
	buf_free(&lines);
	b->pending++; /* held until every recipe is queued */
	pipe__pump(p);
	b->pending--;
	pipe__batch_step(p, b);
}

void pipe__start_validation(struct pipe *p, struct item *it, struct job *sj)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (!b) {
		struct runner_result res = {0};

		res.exit_code = 1;
		pipe__stage_done(p, sj, &res);
		pipe__job_free(sj);
		return;
	}
	b->item_id = it->id;
	snprintf(b->item, sizeof(b->item), "%s", it->name);
	b->stage_job = sj;
	pipe__batch_run_plan(p, it, b);
}

void pipe__batch_free(struct pipe *p, struct batch *b)
{
	struct batch **pp;

	for (pp = &p->batches; *pp; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	free(b->prev_error);
	strv_free(b->names);
	free(b);
}

/* Writes change-validation.md from the registry; sets the verdict. */
static void write_validation(struct pipe *p, struct item *it)
{
	char **names = NULL, **lines = NULL;
	struct store_who who = {getuid(), getpid(), "packetfs", "validate"};
	const char *verdict = "blocked", *at;
	char head[41] = "";
	struct doc_meta m;
	struct buf doc, ev;
	int existed;
	size_t nl = 0;

	/* Runs at an older head are stale: they do not count (registry.h). */
	at = repo_branch_head(pipeline_config_get(p->pl)->repo, it->branch, head) == 0 ? head : NULL;
	if (plan_names(p->pl->store, it->id, &names) == 0 &&
	    store_registry_lines(p->pl->store, it->id, &lines, &nl) == 0)
		verdict = registry_verdict(names, lines, nl, at);
	buf_init(&doc);
	buf_init(&ev);
	registry_evidence_section(it->name, names ? names : (char *[]){NULL}, lines, nl, at, &ev);
	buf_printf(&doc, "# Change validation for %s\n\nIteration %d. Written by packetfs from "
			 "validation/registry.jsonl (no validator program is configured).\n\n%s\n"
			 "## Verdict: %s\n",
		   it->name, it->iteration, ev.data ? ev.data : "", verdict);
	existed = store_doc_stat(p->pl->store, it->id, "change-validation.md", &m) == 0;
	if (store_doc_write(p->pl->store, it->id, "change-validation.md", doc.data, doc.len,
			    (mode_t)-1, -1, "write", &who, NULL) == 0)
		pipe__doc_written(p->pl, it->id, it->name, "change-validation.md", !existed);
	pipe__set_verdict(it, verdict, at);
	buf_free(&doc);
	buf_free(&ev);
	strv_free(names);
	strv_free(lines);
}

void pipe__verdict_update(struct pipe *p, struct item *it)
{
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	const struct pfs_stage *vs = NULL;
	char **names = NULL, **lines = NULL, head[41] = "";
	size_t k, nl = 0;
	int known;

	for (k = 0; k < cfg->nstages; k++)
		if (cfg->stages[k].recipes_from_plan)
			vs = &cfg->stages[k];
	if (vs && !vs->run) {
		write_validation(p, it);
		return;
	}
	known = repo_branch_head(cfg->repo, it->branch, head) == 0;
	if (plan_names(p->pl->store, it->id, &names) == 0 &&
	    store_registry_lines(p->pl->store, it->id, &lines, &nl) == 0)
		pipe__set_verdict(it, registry_verdict(names, lines, nl, known ? head : NULL),
				  known ? head : NULL);
	strv_free(names);
	strv_free(lines);
}

/* Whether the item has a batch (a validation, a rerun, a recorded run). */
static int item_has_batch(struct pipe *p, int64_t item_id)
{
	struct batch *b;

	for (b = p->batches; b; b = b->next)
		if (b->item_id == item_id)
			return 1;
	return 0;
}

/* Called whenever a batch's pending count drops. */
void pipe__batch_step(struct pipe *p, struct batch *b)
{
	/* Held while the pump runs: a run of b that it records (blocked,
	 * cancelled) steps b again from inside, and b must outlive that. */
	b->pending++;
	pipe__pump(p);
	b->pending--;
	if (b->pending > 0)
		return;
	pipe__validation_finish(p, b);
}

void pipe__validation_finish(struct pipe *p, struct batch *b)
{
	struct job *sj = b->stage_job;
	struct item it;

	if (b->round) {
		pipe__round_validated(p, b);
		return;
	}
	if (store_item_get_id(p->pl->store, b->item_id, &it)) {
		pipe__job_free(sj);
		pipe__batch_free(p, b);
		return;
	}
	if (b->rerun) {
		pipe__verdict_update(p, &it);
		pipe__set_state(p, &it, b->prev_state,
				b->cancelled ? "rerun cancelled" : b->prev_error ? b->prev_error : "");
		item_clear(&it);
		pipe__batch_free(p, b);
		return;
	}
	if (b->record) {
		/* A validator's recorded run: its stage decides the verdict. */
		struct job *q;

		for (q = p->jobs; q && !(q->is_stage && q->item_id == it.id); q = q->next)
			;
		pipe__batch_free(p, b);
		if (!q && !item_has_batch(p, it.id)) {
			pipe__verdict_update(p, &it);
			pipe__item_write(p, &it);
		}
		item_clear(&it);
		return;
	}
	if (b->cancelled || p->shutting_down) {
		struct runner_result res = {0};

		res.cancelled = !p->shutting_down;
		res.term_signal = 15;
		pipe__batch_free(p, b);
		pipe__stage_done(p, sj, &res);
		pipe__job_free(sj);
		item_clear(&it);
		return;
	}
	pipe__batch_free(p, b);
	{
		const struct pfs_stage *st = &sj->cfg->stages[sj->stage_index];

		if (st->run) {
			pipe__spawn_stage(p, sj, st, &it);
			item_clear(&it);
			return;
		}
		write_validation(p, &it);
		pipe__item_write(p, &it);
		pipe__log_line(p, sj, "[packetfs] verdict: %s\n", it.verdict);
		item_clear(&it);
		{
			struct runner_result res = {0};

			pipe__stage_done(p, sj, &res);
		}
		pipe__job_free(sj);
	}
}
