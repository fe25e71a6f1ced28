/*
 * pipe_queue.c - the queue of recipe jobs (SPEC §6): which queued recipe
 * starts next, and the order of a batch's recipes. Loop thread only.
 *
 * DESIGN. Recipes wait in one FIFO queue, all items together. A queued
 * recipe is ready when what it needs (its "# needs:" line, or by default
 * every lower-numbered recipe of its batch) validated at the item's head;
 * it waits while a need still runs or is queued before it, and is recorded
 * blocked, naming the need, when a need ended otherwise. A batch is queued
 * in the order its needs give (pipe__order_names), so a need is always
 * queued before the recipe that needs it, and a need queued after a recipe
 * (a cycle) counts as not run. Ready recipes start in FIFO order while
 * fewer than max_parallel_recipes run; the first ready one waits for its
 * GPUs rather than being overtaken, so no recipe starves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"

/* Whether the job q (running, or queued before the job asking) runs one
 * of the needs of j: one of the names in needs, or (needs NULL: the
 * default) a lower-numbered recipe of j's batch. */
static int runs_a_need(const struct job *q, const struct job *j, char *const *needs)
{
	if (q->is_stage || q->item_id != j->item_id)
		return 0;
	if (!needs)
		return q->batch == j->batch && strcmp(q->recipe.name, j->recipe.name) < 0;
	for (; *needs; needs++)
		if (strcmp(q->recipe.name, *needs) == 0)
			return 1;
	return 0;
}

/*
 * Whether queued job j may start as far as its needs go (SPEC §6 "#
 * needs:"; without that line, every lower-numbered recipe of its batch):
 * 0 when every need validated at the head; 1 when one still runs or is
 * queued before j (it waits); -1 when one did not validate at the head
 * (failing, blocked, never ran, or ran at another commit): why names it.
 */
static int needs_met(struct pipe *p, const struct job *j, char *why, size_t size)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	char *const *mine = j->recipe.needs_default ? NULL : j->recipe.needs;
	char **names = NULL, **lines = NULL, head[41] = "", reason[512];
	const struct job *q;
	struct item it = {0};
	size_t k, nl = 0;
	int rc = 0;

	if (mine && !mine[0])
		return 0; /* "# needs: none" */
	for (q = p->jobs; q; q = q->next)
		if (runs_a_need(q, j, mine))
			return 1;
	for (q = p->queue; q && q != j; q = q->next)
		if (runs_a_need(q, j, mine))
			return 1;
	if (mine) {
		names = strv_dup(mine);
	} else {
		names = calloc(1, sizeof(char *));
		for (k = 0; names && j->batch && j->batch->names && j->batch->names[k]; k++)
			if (strcmp(j->batch->names[k], j->recipe.name) < 0 &&
			    strv_push(&names, j->batch->names[k]))
				break;
	}
	if (!names || !names[0]) {
		strv_free(names);
		return 0;
	}
	if (store_item_get_id(p->pl->store, j->item_id, &it) ||
	    repo_branch_head(cfg->repo, it.branch, head) ||
	    store_registry_lines(p->pl->store, j->item_id, &lines, &nl)) {
		snprintf(why, size, "cannot read the evidence of its needs (%s)", names[0]);
		rc = -1;
	} else if (registry_gate(names, lines, nl, head, reason, sizeof(reason))) {
		snprintf(why, size, "a recipe it needs did not validate: %s", reason);
		rc = -1;
	}
	if (it.name)
		item_clear(&it);
	strv_free(lines);
	strv_free(names);
	return rc;
}

/*
 * Starts what the queue allows. A queued recipe is ready when its needs
 * are met (needs_met); one whose need did not validate is recorded blocked
 * without running, naming the need; one whose need still runs or waits
 * ahead of it stays queued and does not hold up the recipes behind it.
 * Among ready recipes the policy is strict FIFO: they start in the order
 * they were queued, while fewer than max_parallel_recipes run and the
 * first ready one's GPUs can be granted; when they cannot (busy, or held
 * back after a leak), it waits and no ready recipe behind it starts, not
 * even one needing fewer GPUs or none. So a recipe needing 2 GPUs is never
 * overtaken by 1-GPU recipes queued after it: no starvation, at the cost
 * of idle GPUs while it waits. A recipe needing more GPUs than the pool
 * has (held-back devices count: they come back) is recorded blocked
 * without running, and so is one whose "# requires:" names a probe that
 * is absent or unknown (pipe_cenv.c), and one whose measure header lines
 * are bad, with their reason (measure.h); one whose probes' answers are not
 * in yet waits as for a need, without holding up the others. Called whenever GPUs or slots are freed or a run ends:
 * a recipe's exit, a batch step, a held-back device returning. Recording
 * a recipe that does not run pumps again (recursively), so the scan
 * restarts from the head after each.
 */
void pipe__pump(struct pipe *p)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	struct job *j, **pp = &p->queue;
	char note[768];

	while ((j = *pp) && !p->shutting_down) {
		int rc, slurm = cfg->executor.kind == EXECUTOR_SLURM;

		/* Under Slurm the cluster places GPU recipes: sbatch refuses one
		 * that no node of the partition can take (pipe_slurm.c). */
		if (!slurm && (j->recipe.gpus > gpu_pool_size(p->gpus) || j->recipe.gpus > 16)) {
			*pp = j->next;
			j->next = NULL;
			snprintf(note, sizeof(note), "needs %d GPU(s), the pool has %d", j->recipe.gpus,
				 gpu_pool_size(p->gpus));
			pipe__recipe_not_run(p, j, RUN_BLOCKED, note);
			pipe__job_free(j);
			pp = &p->queue;
			continue;
		}
		rc = needs_met(p, j, note, sizeof(note));
		if (rc == 0 && j->recipe.measure.error) {
			snprintf(note, sizeof(note), "%s", j->recipe.measure.error);
			rc = -EINVAL;
		}
		if (rc == 0)
			rc = pipe__cenv_requires(p->pl, cfg, j->recipe.requires, note, sizeof(note));
		if (rc > 0) {
			pp = &j->next;
			continue;
		}
		if (rc < 0) {
			*pp = j->next;
			j->next = NULL;
			pipe__recipe_not_run(p, j, RUN_BLOCKED, note);
			pipe__job_free(j);
			pp = &p->queue;
			continue;
		}
		if (p->running_recipes >= cfg->max_parallel_recipes)
			break;
		rc = slurm ? 0 : gpu_pool_acquire(p->gpus, j->recipe.gpus, j->gpus);
		if (rc == -EAGAIN)
			break;
		j->ngpus = slurm ? 0 : j->recipe.gpus;
		*pp = j->next;
		j->next = NULL;
		if (j->recipe.measure.measured && !j->argv)
			pipe__measure_start(p, j);
		else
			pipe__recipe_start(p, j);
		pp = &p->queue;
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name is one of v[0..n). */
static int among(char *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

void pipe__order_names(const struct recipe_catalog *cat, char **names)
{
	size_t n = strv_len(names), done = 0, i, k;
	char *pick;

	qsort(names, n, sizeof(char *), by_name);
	/* names[0..done) are placed; each round places the first of the
	 * rest whose needs in the batch are all placed. */
	while (done < n) {
		for (i = done; i < n; i++) {
			const struct recipe *r = recipe_find(cat, names[i]);
			int ready = 1;

			if (!r || r->needs_default || !r->needs) {
				ready = i == done; /* every lower-numbered one placed */
			} else {
				for (k = 0; r->needs[k] && ready; k++)
					if (among(names + done, n - done, r->needs[k]))
						ready = 0;
			}
			if (ready)
				break;
		}
		if (i == n)
			return; /* a cycle: the rest stays in numbered order */
		pick = names[i];
		memmove(names + done + 1, names + done, (i - done) * sizeof(char *));
		names[done++] = pick;
	}
}
