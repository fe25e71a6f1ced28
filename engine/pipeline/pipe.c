/*
 * pipe.c - the pipeline engine (SPEC §4, §5, §6): stages and recipes of
 * every item, run on the libuv loop thread. This file holds stages and
 * the engine's lifecycle; pipe_job.c the jobs; pipe_state.c the item
 * state machine (which state may follow which: every state change goes
 * through it), pipe_command.c the ctl commands,
 * pipe_gate.c the gates, pipe_push.c a publish's push, pipe_recipe.c,
 * pipe_queue.c and pipe_batch.c the recipes, pipe_record.c recorded runs,
 * pipe_recover.c crash recovery (pipe_int.h is what they share).
 *
 * DESIGN. Item progress lives in the items table: `stage` is the stage
 * that runs or ran last and `stage_ok` whether that run succeeded, so
 * `advance` means "the stage after it" (or it again, after a failure).
 * Gates are checked when a stage is about to start; a refused gate leaves
 * the item at the previous stage with state blocked (or waiting, for an
 * approve gate) and the reason in last_error. The evidence half of a gate
 * (registry_gate) believes only the latest engine run of each recipe at
 * the branch's current head. Starting a stage clears the results of it and
 * every later stage (verdict, assessment): they are stale. `approve` counts
 * only when given after the last print ended (a print drops it when it
 * starts and when it ends) and is used up by the run of the gated stage it
 * lets through.
 *
 * Processes are jobs: one stage program or one recipe, each a run row
 * whose log is streamed into the store as output arrives. The validate
 * stage is a batch of recipes (pipe_recipe.c); when the batch is empty the
 * validator program runs, or the engine writes change-validation.md
 * itself.
 *
 * Everything here runs on the loop thread; the only state shared with
 * FUSE threads is the store and the engine's active-run table.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pipe_int.h"

void pipe__item_set(char **field, const char *value)
{
	char *v = strdup(value);

	if (v) {
		free(*field);
		*field = v;
	}
}

void pipe__event(struct pipe *p, const struct item *it, const char *type, const char *fmt, ...)
{
	char extra[1024] = "";
	va_list ap;

	ASSERT_LOOP_THREAD(p->pl);
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(extra, sizeof(extra), fmt, ap);
		va_end(ap);
	}
	pipeline_event(p->pl, it->id, it->name, type, extra);
}

char *pipe__json_string(const char *s)
{
	cJSON *j = cJSON_CreateString(s ? s : "");
	char *out = j ? cJSON_PrintUnformatted(j) : NULL;

	cJSON_Delete(j);
	return out;
}

/* Moves the item to state (and sets last_error), writes it and records an
 * event. */
int pipe__state_write(struct pipe *p, struct item *it, enum item_state state, const char *error)
{
	char *q;
	int rc;

	ASSERT_LOOP_THREAD(p->pl);
	rc = pipe__state_move(it, state);
	if (rc)
		return rc;
	/* A warning (uncommitted changes left by print) outlives the states
	 * that follow; only an error replaces it. */
	if (error && !(error[0] == '\0' && strncmp(it->last_error, "warning: ", 9) == 0))
		pipe__item_set(&it->last_error, error);
	rc = pipe__item_write(p, it);
	if (rc)
		return rc;
	pipe__unstored_drop(p, it->id);
	q = pipe__json_string(it->last_error);
	pipe__event(p, it, "state", ",\"state\":\"%s\",\"stage\":\"%s\",\"last_error\":%s",
		    item_state_name(state), it->stage, q ? q : "\"\"");
	free(q);
	return 0;
}

void pipe__set_state(struct pipe *p, struct item *it, enum item_state state, const char *error)
{
	int rc = pipe__state_write(p, it, state, error);

	/* Written again until the store takes it (pipe_full.c); a move the
	 * state machine refuses (-EINVAL) is not retried. */
	if (rc && rc != -EINVAL)
		pipe__unstored_keep(p, it);
}

void pipe__item_written(struct pipe *p, const struct item *it)
{
	/* The item's fixed directories are dated by its updated time
	 * (packet__node_stat). */
	static const char *const dated[] = { "stages", "validation", "validation/logs", ".history" };
	size_t i;

	pipe__changed(p->pl, it->name, "status", PIPELINE_MODIFIED);
	pipe__changed(p->pl, it->name, "status.json", PIPELINE_MODIFIED);
	for (i = 0; i < sizeof(dated) / sizeof(dated[0]); i++)
		pipe__changed(p->pl, it->name, dated[i], PIPELINE_TIMES);
}

int pipe__item_write(struct pipe *p, struct item *it)
{
	int rc;

	ASSERT_LOOP_THREAD(p->pl);
	rc = store_item_update(p->pl->store, it);
	if (rc == 0)
		pipe__item_written(p, it);
	return rc;
}

void pipe__log_append(struct pipe *p, struct job *j, const void *data, size_t len)
{
	int rc = store_log_append(p->pl->store, j->run.id, data, len);

	if (rc == 0) {
		pipe__changed(p->pl, j->item, j->run.log_path, PIPELINE_MODIFIED);
	} else {
		/* The run cannot count as whole: its end says so (pipe_stage.c,
		 * pipe_recipe.c). */
		j->log_lost += len;
		j->log_errno = -rc;
	}
}

int pipe__log_lost(const struct job *j, char *out, size_t size)
{
	if (!j->log_lost)
		return 0;
	snprintf(out, size, "%s: %llu bytes of its output were not stored (%s)",
		 j->log_errno == ENOSPC || j->log_errno == EDQUOT ? "the disk was full"
								  : "the store failed",
		 (unsigned long long)j->log_lost, strerror(j->log_errno));
	return 1;
}

size_t pipe__line_vformat(char *line, const char *fmt, va_list ap)
{
	int n = vsnprintf(line, PIPE_LINE_SIZE, fmt, ap);

	if (n <= 0)
		return 0;
	return (size_t)n < PIPE_LINE_SIZE ? (size_t)n : PIPE_LINE_SIZE - 1;
}

void pipe__log_line(struct pipe *p, struct job *j, const char *fmt, ...)
{
	char line[PIPE_LINE_SIZE];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = pipe__line_vformat(line, fmt, ap);
	va_end(ap);
	if (n)
		pipe__log_append(p, j, line, n);
}

int pipe__id_add(int64_t *set, int *n, int max, int64_t id)
{
	int i;

	for (i = 0; i < *n; i++)
		if (set[i] == id)
			return 1;
	if (*n >= max)
		return 0;
	set[(*n)++] = id;
	return 1;
}

int pipe__id_has(const int64_t *set, int n, int64_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == id)
			return 1;
	return 0;
}

/* Items with a process, a queued recipe or a validation in progress. */
static int running_items(struct pipe *p)
{
	struct batch *b;
	struct job *j;
	int64_t seen[256];
	int n = 0;

	for (j = p->jobs; j; j = j->next)
		pipe__id_add(seen, &n, 256, j->item_id);
	for (j = p->queue; j; j = j->next)
		pipe__id_add(seen, &n, 256, j->item_id);
	for (b = p->batches; b; b = b->next)
		pipe__id_add(seen, &n, 256, b->item_id);
	return n;
}

int pipe__item_busy(struct pipe *p, int64_t id)
{
	struct job *j;
	struct batch *b;

	for (j = p->jobs; j; j = j->next)
		if (j->item_id == id)
			return 1;
	for (j = p->queue; j; j = j->next)
		if (j->item_id == id)
			return 1;
	for (b = p->batches; b; b = b->next)
		if (b->item_id == id)
			return 1;
	return 0;
}

/* ---- stages ---- */

/*
 * Starts stage i of an item (checking gates when check_gates). Returns 0
 * when the stage started (or the item now waits/blocks at a gate: the
 * outcome is in the item), -EBUSY when the parallel-items limit queues it,
 * or another negative errno.
 */
int pipe__start_stage(struct pipe *p, struct item *it, size_t i, int check_gates)
{
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	const struct pfs_stage *st = &cfg->stages[i];
	char why[768];
	struct job *j;
	int rc, approve_wait;

	if (check_gates && pipe__gate_check(p, it, i, why, sizeof(why), &approve_wait)) {
		/* The item stands at the gated stage, which has not run. */
		pipe__item_set(&it->stage, st->name);
		it->stage_ok = 0;
		pipe__set_state(p, it, approve_wait ? ITEM_WAITING : ITEM_BLOCKED, why);
		return 0;
	}
	if (cfg->max_parallel_items > 0 && !pipe__item_busy(p, it->id) &&
	    running_items(p) >= cfg->max_parallel_items) {
		pipe__item_set(&it->stage, i > 0 ? cfg->stages[i - 1].name : "");
		it->stage_ok = i > 0;
		if (i == 0)
			pipe__item_set(&it->stage, "");
		pipe__set_state(p, it, ITEM_QUEUED, "");
		return -EBUSY;
	}
	/* Nothing of the start is stored unless all of it is (a run row, the
	 * item running the stage, its stage_started event), in one
	 * transaction: on a failure (a full disk) the item stays as it was,
	 * in the store and in *it. */
	{
		struct item before;
		size_t k;

		if (item_copy(&before, it))
			return -ENOMEM;
		for (k = i; k < cfg->nstages; k++) {
			/* Later stages' results are stale from here on. */
			if (cfg->stages[k].recipes_from_plan)
				pipe__set_verdict(it, "", NULL);
			if (config_stage_reviews(&cfg->stages[k]))
				pipe__set_assessment(it, "", NULL);
		}
		pipe__item_set(&it->stage, st->name);
		it->stage_ok = 0;
		pipe__item_set(&it->disposition, ""); /* a new plan may end it again */
		if (st->rounds_max)
			pipe__round_begin(p, it, st);
		if (pipe__is_print_stage(cfg, st)) {
			pipe__item_set(&it->last_error, ""); /* its old warning goes with the new run */
			it->approved = 0;                     /* a new change needs a new approve */
		}
		rc = pipe__state_move(it, ITEM_RUNNING);
		if (rc) {
			item_clear(it);
			*it = before;
			return rc;
		}
		if (strncmp(it->last_error, "warning: ", 9) != 0)
			pipe__item_set(&it->last_error, "");
		j = calloc(1, sizeof(*j));
		rc = j ? 0 : -ENOMEM;
		if (j) {
			j->p = p;
			j->item_id = it->id;
			snprintf(j->item, sizeof(j->item), "%s", it->name);
			j->is_stage = 1;
			j->stage_index = (int)i;
			j->cfg = cfg;
			rc = pipe__job_begin(p, j, it, it, "stage", st->name, RUN_RUNNING);
		}
		if (rc) {
			pipe__job_free(j);
			item_clear(it);
			*it = before;
			return rc;
		}
		if (before.approved && !it->approved)
			pipe__event(p, it, "approve_dropped", ",\"stage\":\"%s\"", st->name);
		item_clear(&before);
	}
	pipe__item_written(p, it);
	pipe__event_added(p->pl, it->name, "state");
	if (st->rounds_max)
		pipe__log_line(p, j, "[packetfs] stage %s, item %s, round %d of at most %d, run %d\n",
			       st->name, it->name, it->round, st->rounds_max, j->run.run_no);
	else
		pipe__log_line(p, j, "[packetfs] stage %s, item %s, iteration %d, run %d\n",
			       st->name, it->name, it->iteration, j->run.run_no);
	if (st->recipes_from_plan) {
		pipe__start_validation(p, it, j);
		return 0;
	}
	if (st->push_remote) {
		pipe__start_push(p, j, it, st);
		return 0;
	}
	if (!st->run) {
		struct runner_result res = {0};

		pipe__log_line(p, j, "[packetfs] no program configured for this stage\n");
		pipe__stage_done(p, j, &res);
		pipe__job_free(j);
		return 0;
	}
	pipe__spawn_stage(p, j, st, it);
	return 0;
}

void pipe__start_stage_auto(struct pipe *p, struct item *it, size_t i)
{
	const struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	char why[512];
	int rc = pipe__start_stage(p, it, i, 1);

	if (rc == 0 || rc == -EBUSY)
		return;
	it->stage_ok = 0;
	pipe__item_set(&it->stage, cfg->stages[i].name);
	snprintf(why, sizeof(why), "%s: cannot start: %s%s", cfg->stages[i].name, strerror(-rc),
		 rc == -ENOSPC || rc == -EDQUOT ? " (the store's disk is full; free space, then "
						  "advance)" : "");
	pipe__set_state(p, it, ITEM_FAILED, why);
}

/* ---- lifecycle ---- */

int pipe_new(struct pipeline *pl, struct pipe **out)
{
	struct pipe *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	p->pl = pl;
	rc = gpu_pool_new(pipeline_config_get(pl), &p->gpus);
	if (rc) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void pipe_free(struct pipe *p)
{
	struct job *j;

	if (!p)
		return;
	while ((j = p->queue)) {
		p->queue = j->next;
		pipe__job_free(j);
	}
	while (p->batches) {
		struct batch *b = p->batches;

		p->batches = b->next;
		pipe__job_free(b->stage_job);
		free(b->prev_error);
		free(b);
	}
	gpu_pool_free(p->gpus);
	free(p);
}

static int resume_one(void *arg, const struct item *it0)
{
	struct pipe *p = arg;
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	struct item it;
	char why[256];
	size_t i;

	pipe__round_resume(p, it0);
	if (it0->state != ITEM_QUEUED || it0->hold || pipe__item_busy(p, it0->id))
		return 0;
	if (cfg->max_parallel_items > 0 && running_items(p) >= cfg->max_parallel_items)
		return 1;
	if (store_item_get_id(p->pl->store, it0->id, &it))
		return 0;
	if (pipe__next_stage(p, &it, &i, why, sizeof(why)) == 0)
		pipe__start_stage_auto(p, &it, i);
	else
		pipe__set_state(p, &it, ITEM_FAILED, why);
	item_clear(&it);
	return 0;
}

void pipe_resume(struct pipe *p)
{
	/* resume_one never stops the walk; on a store error the items not reached are not
	 * resumed now. */
	(void)store_item_each(p->pl->store, 0, resume_one, p);
}

void pipe_shutdown(struct pipe *p)
{
	struct job *j, *next;

	ASSERT_LOOP_THREAD(p->pl);
	p->shutting_down = 1;
	pipe__gpu_stop(p);
	pipe__measure_gpu_recheck(p, 1); /* batches waiting for clean GPUs end */
	pipe__unstored_stop(p);
	pipe__round_shutdown(p);
	while ((j = p->queue)) {
		p->queue = j->next;
		if (j->batch)
			j->batch->pending--;
		pipe__job_free(j);
	}
	/* Slurm jobs go on in the cluster: their runs stay "running", and the
	 * next daemon follows them again (pipe_reattach); local runs end. */
	for (j = p->jobs; j; j = next) {
		next = j->next;
		if (j->sjob) {
			slurm_detach(j->sjob);
			j->sjob = NULL;
			pipe__job_unlink(&p->jobs, j);
			assert(p->running_recipes > 0);
			p->running_recipes--;
			if (j->measure_parent) /* its batch starts over after the next mount */
				pipe__measure_detached(j);
			pipe__job_free(j);
		} else {
			runner_cancel(j->proc);
		}
	}
	slurm_poller_close(p->slurm);
	p->slurm = NULL;
	/* Validations with nothing running end now; others when their last
	 * recipe's exit callback runs. */
	{
		struct batch *b, *next;

		for (b = p->batches; b; b = next) {
			next = b->next;
			if (b->pending == 0)
				pipe__validation_finish(p, b);
		}
	}
}
