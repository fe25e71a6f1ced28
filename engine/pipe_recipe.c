/*
 * pipe_recipe.c - the recipes of the pipeline engine (SPEC §5): the queue
 * of recipe jobs, batches and the end of a validation, run on the libuv
 * loop thread. pipe.c starts and ends stages; pipe_int.h is what the two
 * share.
 *
 * DESIGN. The validate stage is a batch: the plan's recipes are queued
 * (FIFO) and started while fewer than max_parallel_recipes run and their
 * GPUs can be granted; the head of the queue waits for GPUs rather than
 * being overtaken, so no recipe starves. A `rerun RECIPE` is a batch of
 * one with no stage run. Every recipe that ends (or cannot start) leaves a
 * sealed log and a line in the item's registry. When the batch is empty
 * the validator program runs, or the engine writes change-validation.md
 * itself.
 *
 * Invariants: a batch's pending counts its recipes queued or running (one
 * more while they are being queued); pipe__batch_step runs whenever it
 * drops, and the batch ends (pipe__validation_finish frees it) at zero.
 * GPUs granted to a job are released once, when it exits or fails to
 * start.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "pipe_int.h"
#include "registry.h"

/* Queues recipe r for item it in batch b. */
int pipe__queue_recipe(struct pipe *p, const struct item *it, const struct recipe *r,
		       struct batch *b)
{
	struct job *j = calloc(1, sizeof(*j)), **pp;

	if (!j)
		return -ENOMEM;
	j->p = p;
	j->item_id = it->id;
	snprintf(j->item, sizeof(j->item), "%s", it->name);
	j->recipe.name = strdup(r->name);
	j->recipe.file = strdup(r->file);
	j->recipe.path = strdup(r->path);
	j->recipe.summary = strdup(r->summary);
	j->recipe.gpus = r->gpus;
	j->recipe.timeout_s = r->timeout_s;
	j->batch = b;
	if (!j->recipe.name || !j->recipe.file || !j->recipe.path || !j->recipe.summary) {
		pipe__job_free(j);
		return -ENOMEM;
	}
	for (pp = &p->queue; *pp; pp = &(*pp)->next)
		;
	*pp = j;
	b->pending++;
	return 0;
}

/* Records a finished recipe run: log footer, registry line, batch. */
void pipe__recipe_done(struct pipe *p, struct job *j, const char *status, const char *note,
		       const struct runner_result *res)
{
	struct registry_run rr;
	char *line, host_note[512];
	struct item it;

	if (res) {
		if (res->term_signal)
			pipe__log_line(p, j,
				       "\n# packetfs: ended by signal %d after %.1f s\n",
				       res->term_signal, res->duration_s);
		else
			pipe__log_line(p, j, "\n# packetfs: exit code %d after %.1f s\n",
				       res->exit_code, res->duration_s);
		j->run.has_exit_code = res->spawn_error == 0 && res->term_signal == 0;
		j->run.exit_code = res->exit_code;
		j->run.signal = res->term_signal;
	}
	pipe__log_line(p, j, "# packetfs: status %s%s%s\n", status, note[0] ? ": " : "",
		       note);
	snprintf(j->run.status, sizeof(j->run.status), "%s", status);
	snprintf(host_note, sizeof(host_note), "%s", note);
	free(j->run.note);
	j->run.note = strdup(host_note);
	pipe__run_seal(p, &j->run, res ? res->duration_s : 0);
	memset(&rr, 0, sizeof(rr));
	rr.run = j->run.run_no;
	rr.recipe = j->recipe.name;
	rr.status = status;
	rr.command = j->run.command;
	rr.evidence = j->run.log_path;
	rr.note = j->run.note ? j->run.note : "";
	rr.has_exit_code = j->run.has_exit_code;
	rr.exit_code = j->run.exit_code;
	rr.started_at = j->run.started_at;
	rr.finished_at = j->run.finished_at;
	rr.duration_s = j->run.duration_s;
	rr.iteration = j->run.iteration;
	rr.head = j->run.head;
	rr.gpus = j->gpus;
	rr.ngpus = (size_t)j->ngpus;
	rr.log_sha256 = j->run.log_sha256;
	rr.executor = "local";
	line = registry_engine_line(&rr);
	if (line) {
		if (store_registry_append(p->e->store, j->item_id, line, "engine", j->run.id) == 0) {
			engine_changed(p->e, j->item, "validation/registry.jsonl", ENGINE_MODIFIED);
			engine_changed(p->e, j->item, "validation/evidence.md", ENGINE_MODIFIED);
		}
		free(line);
	}
	if (store_item_get_id(p->e->store, j->item_id, &it) == 0) {
		pipe__event(p, &it, "recipe_finished",
			    ",\"recipe\":\"%s\",\"run\":%d,\"status\":\"%s\",\"log\":\"%s\"",
			    j->recipe.name, j->run.run_no, status, j->run.log_path);
		pipe__item_write(p, &it); /* updated: the status view changed */
		item_clear(&it);
	}
	if (j->batch && j->batch->stage_job)
		pipe__log_line(p, j->batch->stage_job, "[packetfs] %s: %s%s%s\n",
			       j->recipe.name, status, note[0] ? " - " : "", note);
	if (j->batch) {
		j->batch->pending--;
		pipe__batch_step(p, j->batch);
	}
}

/* Notes compute processes left on the granted GPUs (when nvidia-smi works). */
static void leak_check(const int *gpus, int n, char *note, size_t size)
{
	char cmd[256], ids[128], line[256];
	int count = 0;
	FILE *f;

	if (n == 0)
		return;
	gpu_format_list(gpus, n, ids, sizeof(ids));
	snprintf(cmd, sizeof(cmd),
		 "nvidia-smi --query-compute-apps=pid --format=csv,noheader -i %s 2>/dev/null", ids);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strspn(line, "0123456789") > 0)
			count++;
	if (pclose(f) == 0 && count > 0)
		snprintf(note, size, "leak check: %d compute process(es) still on GPU %s", count, ids);
}

void pipe__recipe_exit(struct pipe *p, struct job *j, const struct runner_result *res)
{
	const char *status;
	char note[512] = "";

	if (j->ngpus) {
		leak_check(j->gpus, j->ngpus, note, sizeof(note));
		gpu_pool_release(p->gpus, j->gpus, j->ngpus);
	}
	p->running_recipes--;
	if (p->shutting_down)
		status = "interrupted", snprintf(note, sizeof(note), "the daemon stopped while this ran");
	else if (res->cancelled)
		status = "cancelled";
	else if (res->timed_out)
		status = "timed_out";
	else if (res->spawn_error)
		status = "failing", snprintf(note, sizeof(note), "cannot run: %s", strerror(-res->spawn_error));
	else if (res->term_signal)
		status = "failing";
	else if (res->exit_code == 0)
		status = "validated";
	else if (res->exit_code == 77)
		status = "blocked";
	else
		status = "failing";
	pipe__recipe_done(p, j, status, note, res);
}

/* Starts queued recipe j (GPUs already granted). */
static void recipe_start(struct pipe *p, struct job *j)
{
	char cuda[160] = "", host[256] = "", cwd[PATH_MAX];
	char *argv[2] = {j->recipe.path, NULL};
	struct item it;
	char **env;
	int rc;

	if (store_item_get_id(p->e->store, j->item_id, &it)) {
		if (j->ngpus)
			gpu_pool_release(p->gpus, j->gpus, j->ngpus);
		if (j->batch) {
			j->batch->pending--;
			pipe__batch_step(p, j->batch);
		}
		pipe__job_free(j);
		return;
	}
	rc = pipe__job_open_run(p, j, &it, "recipe", j->recipe.name, "running");
	if (rc) {
		if (j->ngpus)
			gpu_pool_release(p->gpus, j->gpus, j->ngpus);
		if (j->batch) {
			j->batch->pending--;
			pipe__batch_step(p, j->batch);
		}
		item_clear(&it);
		pipe__job_free(j);
		return;
	}
	free(j->run.command);
	j->run.command = strdup(j->recipe.path);
	gpu_format_list(j->gpus, j->ngpus, cuda, sizeof(cuda));
	{
		struct buf g;
		int k;

		buf_init(&g);
		buf_puts(&g, "[");
		for (k = 0; k < j->ngpus; k++)
			buf_printf(&g, "%s%d", k ? "," : "", j->gpus[k]);
		buf_puts(&g, "]");
		free(j->run.gpus);
		j->run.gpus = buf_steal(&g);
	}
	gethostname(host, sizeof(host) - 1);
	snprintf(cwd, sizeof(cwd), "%s/worktrees/%s", p->e->store_dir, it.name);
	pipe__log_line(p, j,
		       "# packetfs recipe log\n# recipe: %s\n# summary: %s\n# command: %s\n# cwd: %s\n"
		       "# host: %s\n# gpus: %s\n# head: %s\n# iteration: %d\n# started: %s\n\n",
		       j->recipe.name, j->recipe.summary, j->run.command, cwd, host,
		       cuda[0] ? cuda : "none", j->run.head, it.iteration, j->run.started_at);
	env = pipe__make_env(p, &it, "validate", j->recipe.name, cuda);
	pipe__event(p, &it, "recipe_started",
		    ",\"recipe\":\"%s\",\"run\":%d,\"gpus\":%s,\"log\":\"%s\"", j->recipe.name,
		    j->run.run_no, j->run.gpus, j->run.log_path);
	item_clear(&it);
	p->running_recipes++;
	rc = pipe__job_spawn(p, j, argv, env, cwd, (unsigned)j->recipe.timeout_s);
	strv_free(env);
	if (rc) {
		struct runner_result res = {0};

		res.spawn_error = rc;
		pipe__recipe_exit(p, j, &res);
		pipe__job_free(j);
	}
}

/* Starts what the queue allows: FIFO; the head waits for its GPUs. */
void pipe__pump(struct pipe *p)
{
	struct pfs_config *cfg = engine_config_get(p->e);
	struct job *j;

	while ((j = p->queue) && !p->shutting_down) {
		int rc;

		if (j->recipe.gpus > gpu_pool_size(p->gpus) || j->recipe.gpus > 16) {
			char note[256];
			struct item it = {0};

			p->queue = j->next;
			j->next = NULL;
			if (store_item_get_id(p->e->store, j->item_id, &it) == 0 &&
			    pipe__job_open_run(p, j, &it, "recipe", j->recipe.name, "blocked") == 0) {
				snprintf(note, sizeof(note), "needs %d GPU(s), the pool has %d",
					 j->recipe.gpus, gpu_pool_size(p->gpus));
				free(j->run.command);
				j->run.command = strdup(j->recipe.path);
				pipe__log_line(p, j,
					       "# packetfs recipe log\n# recipe: %s\n"
					       "# not run: %s\n",
					       j->recipe.name, note);
				pipe__recipe_done(p, j, "blocked", note, NULL);
			} else if (j->batch) {
				j->batch->pending--;
				pipe__batch_step(p, j->batch);
			}
			if (it.name)
				item_clear(&it);
			pipe__job_free(j);
			continue;
		}
		if (p->running_recipes >= cfg->max_parallel_recipes)
			break;
		rc = gpu_pool_acquire(p->gpus, j->recipe.gpus, j->gpus);
		if (rc == -EAGAIN)
			break;
		j->ngpus = j->recipe.gpus;
		p->queue = j->next;
		j->next = NULL;
		recipe_start(p, j);
	}
}

void pipe__start_validation(struct pipe *p, struct item *it, struct job *sj)
{
	struct batch *b = calloc(1, sizeof(*b));
	char **names = NULL;
	size_t k;
	int rc;

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
	b->next = p->batches;
	p->batches = b;
	rc = view_plan_names(p->e, it, &names);
	if (rc) {
		pipe__log_line(p, sj,
			       "[packetfs] plan.md has no ```validation-recipes block\n");
	} else {
		pthread_mutex_lock(&p->e->cfg_lock);
		for (k = 0; names[k]; k++) {
			const struct recipe *r = recipe_find(&p->e->recipes, names[k]);

			if (!r) {
				pipe__log_line(p, sj,
					       "[packetfs] plan.md names unknown recipe '%s'\n",
					       names[k]);
				continue;
			}
			pipe__log_line(p, sj, "[packetfs] queued %s\n", r->name);
			pipe__queue_recipe(p, it, r, b);
		}
		pthread_mutex_unlock(&p->e->cfg_lock);
	}
	strv_free(names);
	b->pending++; /* held until every recipe is queued */
	pipe__pump(p);
	b->pending--;
	pipe__batch_step(p, b);
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
	free(b);
}

/* Writes change-validation.md from the registry; sets the verdict. */
static void engine_verdict(struct pipe *p, struct item *it)
{
	char **names = NULL, **lines = NULL;
	struct store_who who = {getuid(), getpid(), "packetfs", "validate"};
	const char *verdict = "blocked";
	struct doc_meta m;
	struct buf doc, ev;
	int existed;
	size_t nl = 0;

	if (view_plan_names(p->e, it, &names) == 0 &&
	    store_registry_lines(p->e->store, it->id, &lines, &nl) == 0)
		verdict = registry_verdict(names, lines, nl);
	buf_init(&doc);
	buf_init(&ev);
	registry_evidence_md(it->name, names ? names : (char *[]){NULL}, lines, nl, &ev);
	buf_printf(&doc, "# Change validation for %s\n\nIteration %d. Written by packetfs from "
			 "validation/registry.jsonl (no validator program is configured).\n\n%s\n"
			 "## Verdict: %s\n",
		   it->name, it->iteration, ev.data ? ev.data : "", verdict);
	existed = store_doc_stat(p->e->store, it->id, "change-validation.md", &m) == 0;
	if (store_doc_write(p->e->store, it->id, "change-validation.md", doc.data, doc.len,
			    (mode_t)-1, -1, "write", &who, NULL) == 0) {
		engine_doc_refresh(p->e, it->id, "change-validation.md");
		engine_changed(p->e, it->name, "change-validation.md",
			       existed ? ENGINE_MODIFIED : ENGINE_CREATED);
	}
	pipe__item_set(&it->verdict, verdict);
	buf_free(&doc);
	buf_free(&ev);
	strv_free(names);
	strv_free(lines);
}

/* Called whenever a batch's pending count drops. */
void pipe__batch_step(struct pipe *p, struct batch *b)
{
	pipe__pump(p);
	if (b->pending > 0)
		return;
	pipe__validation_finish(p, b);
}

void pipe__validation_finish(struct pipe *p, struct batch *b)
{
	struct pfs_config *cfg = engine_config_get(p->e);
	struct job *sj = b->stage_job;
	struct item it;

	if (store_item_get_id(p->e->store, b->item_id, &it)) {
		pipe__job_free(sj);
		pipe__batch_free(p, b);
		return;
	}
	if (b->rerun) {
		const struct pfs_stage *vs = NULL;
		size_t k;

		for (k = 0; k < cfg->nstages; k++)
			if (cfg->stages[k].recipes_from_plan)
				vs = &cfg->stages[k];
		if (vs && !vs->run) {
			engine_verdict(p, &it);
		} else {
			char **names = NULL, **lines = NULL;
			size_t nl = 0;

			if (view_plan_names(p->e, &it, &names) == 0 &&
			    store_registry_lines(p->e->store, it.id, &lines, &nl) == 0)
				pipe__item_set(&it.verdict, registry_verdict(names, lines, nl));
			strv_free(names);
			strv_free(lines);
		}
		pipe__set_state(p, &it, b->prev_state,
				b->cancelled ? "rerun cancelled" : b->prev_error ? b->prev_error : "");
		item_clear(&it);
		pipe__batch_free(p, b);
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
		engine_verdict(p, &it);
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
