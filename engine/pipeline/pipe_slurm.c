/*
 * pipe_slurm.c - the recipes of the pipeline engine under the "slurm"
 * executor: a recipe run is one Slurm batch job (slurm.h), followed on the
 * loop thread, and a restarted daemon follows the jobs of an earlier one
 * again (pipe_reattach). One poller (p->slurm, made for the first job,
 * closed at shutdown) follows every job of the pipe: one squeue a poll.
 *
 * DESIGN. A recipe job goes through the same queue, run row, log header,
 * registry line and batch as a local one (pipe_recipe.c); only its process
 * differs. sbatch's job id and output file are written to the run row as
 * soon as sbatch answers, and how much of the output the log holds after
 * every copy: that is all a restarted daemon needs. The local GPU pool is
 * not used: Slurm grants devices (the registry line names the indices of
 * GRES=gpu(IDX:...)), and sbatch refuses a job that no node of the
 * partition can take, which is recorded as blocked with sbatch's reason.
 * Job states map onto registry statuses as docs/operating.md "Recipes on a Slurm
 * cluster" says; notes read as a local run's would (a timeout is "timed
 * out after N s (signal S)").
 *
 * At shutdown the jobs are detached, not cancelled: their runs, their
 * validate stage and their item stay "running" in the store, crash
 * recovery (pipe_recover.c) leaves such runs alone, and pipe_reattach
 * rebuilds the batch: the stage job from its running stage run (or a
 * rerun), one job per Slurm run still running, and the plan's recipes
 * that had not been submitted yet are queued again.
 *
 * Everything here runs on the loop thread.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "pipe_int.h"
#include "plan.h"

static void on_submitted(void *arg, const char *job_id, const char *output)
{
	struct job *j = arg;

	snprintf(j->run.job_id, sizeof(j->run.job_id), "%s", job_id);
	free(j->run.job_output);
	j->run.job_output = strdup(output);
	/* The job id, for crash recovery; the row is written whole again when the run is
	 * sealed. */
	(void)store_run_update(j->p->pl->store, &j->run);
	pipe__log_line(j->p, j, "# slurm: submitted job %s, output %s\n", job_id, output);
}

/* The job started: its GPUs go on the run; the line naming node and GPUs
 * goes into the log now, or at its end when output came first (a line of
 * the daemon's never cuts the job's output in two). */
static void on_started(void *arg, const char *node, const int *gpus, int ngpus)
{
	struct job *j = arg;
	char list[16 * 8 + 1], line[512];
	struct buf g;

	j->ngpus = ngpus < 16 ? ngpus : 16;
	memcpy(j->gpus, gpus, sizeof(int) * (size_t)j->ngpus);
	gpu_format_list(j->gpus, j->ngpus, list, sizeof(list));
	buf_init(&g);
	buf_printf(&g, "[%s]", list);
	if (g.data) {
		free(j->run.gpus);
		j->run.gpus = buf_steal(&g);
	}
	/* The node's GPUs as the run shows them; the row is written whole again when the run
	 * is sealed. */
	(void)store_run_update(j->p->pl->store, &j->run);
	if (j->measure_parent)
		pipe__measure_node(j, node);
	snprintf(line, sizeof(line), "# slurm: job %s ran on %s, gpus: %s\n", j->run.job_id,
		 node[0] ? node : "(unknown node)", list[0] ? list : "none");
	if (j->run.job_offset == 0) {
		pipe__log_line(j->p, j, "%s\n", line);
	} else {
		free(j->exec_note);
		j->exec_note = strdup(line);
	}
}

/* Appends len bytes of the job's output file (offset: how much of it the
 * log holds then) in one store transaction with the offset. */
static void job_append(struct job *j, const char *data, size_t len, int64_t offset)
{
	struct pipe *p = j->p;

	if (store_log_append_job(p->pl->store, j->run.id, data, len, offset) == 0)
		pipe__changed(p->pl, j->item, j->run.log_path, PIPELINE_MODIFIED);
	j->run.job_offset = offset;
}

static void on_output(void *arg, const char *data, size_t len, int64_t offset)
{
	struct job *j = arg;

	job_append(j, data, len, offset);
	j->out_midline = len > 0 && data[len - 1] != '\n';
}

static void on_note(void *arg, const char *line, int64_t offset)
{
	struct job *j = arg;

	job_append(j, line, strlen(line), offset);
	j->out_midline = 0;
}

/* The registry status and note of a finished job. */
static enum run_status job_status(const struct job *j, const struct slurm_result *sr, char *note,
				   size_t size)
{
	const char *st = sr->state;
	int sig = sr->r.term_signal ? sr->r.term_signal : 15;

	if (sr->refused) {
		snprintf(note, size, "Slurm refused the job: %s", sr->reason);
		return RUN_BLOCKED;
	}
	if (sr->lost) {
		snprintf(note, size, "%s", sr->reason);
		return RUN_INTERRUPTED;
	}
	if (strcmp(sr->reason, "JobLaunchFailure") == 0) {
		snprintf(note, size, "Slurm could not launch job %s (JobLaunchFailure)",
			 j->run.job_id);
		return RUN_BLOCKED;
	}
	if (sr->cancel_missed)
		snprintf(note, size, "job %s ended before Slurm took the cancel", j->run.job_id);
	if (sr->r.timed_out) {
		snprintf(note, size, "timed out after %d s (signal %d)", j->recipe.timeout_s, sig);
		return RUN_TIMED_OUT;
	}
	if (sr->r.cancelled) {
		if (sr->ran)
			snprintf(note, size, "cancelled (signal %d)", sig);
		else
			snprintf(note, size, "cancelled before it started");
		return RUN_CANCELLED;
	}
	if (strcmp(st, "TIMEOUT") == 0 || strcmp(st, "DEADLINE") == 0) {
		snprintf(note, size, "Slurm ended job %s: %s", j->run.job_id, st);
		return RUN_TIMED_OUT;
	}
	if (strcmp(st, "CANCELLED") == 0) {
		snprintf(note, size, "job %s was cancelled in Slurm%s%s", j->run.job_id,
			 sr->reason[0] ? ": " : "", sr->reason);
		return RUN_CANCELLED;
	}
	if (strcmp(st, "NODE_FAIL") == 0 || strcmp(st, "PREEMPTED") == 0 ||
	    strcmp(st, "BOOT_FAIL") == 0) {
		snprintf(note, size, "Slurm ended job %s: %s", j->run.job_id, st);
		return RUN_INTERRUPTED;
	}
	if (strcmp(st, "OUT_OF_MEMORY") == 0) {
		snprintf(note, size, "Slurm ended job %s: %s", j->run.job_id, st);
		return RUN_FAILING;
	}
	if (sr->r.term_signal)
		return RUN_FAILING;
	if (sr->r.exit_code == 0)
		return RUN_VALIDATED;
	return sr->r.exit_code == 77 ? RUN_BLOCKED : RUN_FAILING;
}

static void on_exit_cb(void *arg, const struct slurm_result *sr)
{
	struct job *j = arg;
	struct pipe *p = j->p;
	const struct runner_result *res = sr->ran && !sr->lost ? &sr->r : NULL;
	enum run_status status;
	char note[512] = "";

	pipe__job_unlink(&p->jobs, j);
	j->sjob = NULL;
	assert(p->running_recipes > 0);
	p->running_recipes--;
	status = job_status(j, sr, note, sizeof(note));
	if (j->exec_note && !res) { /* one that ran has it in its footer (pipe__recipe_done) */
		pipe__log_line(p, j, "%s%s", j->out_midline ? "\n" : "", j->exec_note);
		j->out_midline = 0;
	}
	if (!sr->ran)
		pipe__log_line(p, j, "# not run: %s\n", note[0] ? note : sr->state);
	else if (!res && j->out_midline)
		pipe__log_line(p, j, "\n");
	if (j->measure_parent)
		pipe__measure_collect(p, j, &status, note, sizeof(note));
	else if (status == RUN_VALIDATED && pipe__no_tests_ran(p, j, note, sizeof(note)))
		status = RUN_FAILING;
	pipe__recipe_done(p, j, status, note, res);
	pipe__job_free(j);
	pipe__pump(p);
	pipe__slot_freed(p);
}

static const struct slurm_callbacks callbacks = {
	.submitted = on_submitted,
	.started = on_started,
	.output = on_output,
	.note = on_note,
	.exit = on_exit_cb,
};

/* The pipe's Slurm poller, made at its first use: NULL when out of memory
 * or shutting down. */
static struct slurm_poller *poller(struct pipe *p)
{
	if (!p->slurm && !p->shutting_down && slurm_poller_new(&p->pl->loop, &p->slurm))
		p->slurm = NULL;
	return p->slurm;
}

int pipe__slurm_dir(struct pipe *p, char *out, size_t size)
{
	const struct pfs_executor *ex = &pipeline_config_get(p->pl)->executor;

	if (ex->shared_dir)
		snprintf(out, size, "%s", ex->shared_dir);
	else
		snprintf(out, size, "%s/slurm", p->pl->store_dir);
	return 0;
}

/* The directory for job scripts and output, made: 0 or a negative errno. */
static int shared_dir(struct pipe *p, char *out, size_t size)
{
	pipe__slurm_dir(p, out, size);
	return util_mkdirs(out, 0755);
}

/* Records job j as blocked without submitting it: note says why. */
static void not_submitted(struct pipe *p, struct job *j, const char *note)
{
	assert(p->running_recipes > 0);
	p->running_recipes--;
	pipe__log_line(p, j, "# not run: %s\n", note);
	pipe__recipe_done(p, j, RUN_BLOCKED, note, NULL);
	pipe__job_free(j);
}

void pipe__slurm_start(struct pipe *p, struct job *j, const struct item *it,
		       char *const *argv, char **env, const char *cwd)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	char dir[PATH_MAX], stem[ITEM_NAME_MAX + 64], name[ITEM_NAME_MAX + 160];
	char note[PATH_MAX + 128];
	struct slurm_spec spec;
	size_t i, k;
	int rc;

	/* Slurm sets CUDA_VISIBLE_DEVICES for the GPUs it grants. */
	for (i = k = 0; env && env[i]; i++) {
		if (j->recipe.gpus > 0 && strncmp(env[i], "CUDA_VISIBLE_DEVICES=", 21) == 0)
			free(env[i]);
		else
			env[k++] = env[i];
	}
	if (env)
		env[k] = NULL;
	rc = shared_dir(p, dir, sizeof(dir));
	if (rc) {
		snprintf(note, sizeof(note), "cannot use the Slurm shared directory %s: %s", dir,
			 strerror(-rc));
		not_submitted(p, j, note);
		return;
	}
	/* sbatch expands %j, %u, ... in --output: such a path would not be
	 * the file the daemon reads. */
	if (strchr(dir, '%')) {
		snprintf(note, sizeof(note), "the Slurm shared directory %s has a '%%' in its path, "
			 "which sbatch would expand in the output file's name", dir);
		not_submitted(p, j, note);
		return;
	}
	snprintf(stem, sizeof(stem), "%s-run%d-%llx", it->name, j->run.run_no,
		 (unsigned long long)util_now_ns());
	snprintf(name, sizeof(name), "packetfs-%s-%s", it->name, j->recipe.name);
	/* The output file is known before sbatch answers: a daemon that dies
	 * in between finds the job by it (slurm_find_job_by_output). */
	free(j->run.job_output);
	if (asprintf(&j->run.job_output, "%s/%s.out", dir, stem) < 0)
		j->run.job_output = NULL;
	/* The output file, for crash recovery; the row is written whole again when the run
	 * is sealed. */
	(void)store_run_update(p->pl->store, &j->run);
	memset(&spec, 0, sizeof(spec));
	spec.ex = &cfg->executor;
	spec.dir = dir;
	spec.stem = stem;
	spec.name = name;
	spec.argv = argv;
	spec.env = env;
	spec.cwd = cwd;
	spec.timeout_s = (unsigned)j->recipe.timeout_s;
	spec.gpus = j->recipe.gpus;
	spec.nodelist = j->measure_parent ? pipe__measure_nodelist(j) : NULL;
	rc = env && j->run.job_output && poller(p)
		     ? slurm_submit(p->slurm, &spec, &callbacks, j, &j->sjob) : -ENOMEM;
	if (rc) {
		snprintf(note, sizeof(note), "cannot submit to Slurm: %s", strerror(-rc));
		not_submitted(p, j, note);
		return;
	}
	j->next = p->jobs;
	p->jobs = j;
}

/* ---- after a restart ---- */

int pipe_run_reattaches(struct store *s, const struct run *r)
{
	return strcmp(r->kind, "recipe") == 0 && r->status == RUN_RUNNING &&
	       strcmp(r->executor, "slurm") == 0 && r->job_id[0] && r->job_output &&
	       r->job_output[0] && !pipe__log_side(s, r->id);
}

struct resolve {
	struct store *s;
	int failed;     /* ... and gave no answer: the other runs are not asked for */
	char why[128];  /* what it said instead */
};

static int resolve_run(void *arg, const struct run *r0)
{
	struct resolve *rs = arg;
	struct run r;
	char id[32], note[512];
	int rc, n;

	if (strcmp(r0->executor, "slurm") != 0 || r0->job_id[0] || !r0->job_output[0])
		return 0;
	rc = rs->failed ? -EIO : slurm_find_job_by_output(r0->job_output, SLURM_RECOVER_TIMEOUT_MS, id);
	if (rc == -ETIMEDOUT || (rc != 0 && rc != -ENOENT && !rs->failed)) {
		rs->failed = 1;
		if (rc == -ETIMEDOUT)
			snprintf(rs->why, sizeof(rs->why), "scontrol did not answer within %d s (killed)",
				 SLURM_RECOVER_TIMEOUT_MS / 1000);
		else
			snprintf(rs->why, sizeof(rs->why), "scontrol failed: %s", strerror(-rc));
	}
	if (rc == 0 && store_run_get(rs->s, r0->id, &r) == 0) {
		snprintf(r.job_id, sizeof(r.job_id), "%s", id);
		/* Reattaching goes by the output file as well; the job id is a shortcut. */
		(void)store_run_update(rs->s, &r);
		run_clear(&r);
		return 0;
	}
	if (rc == 0)
		return 0;
	/* Unknown: crash recovery records the run interrupted (pipe_recover.c). */
	n = snprintf(note, sizeof(note), "\n# packetfs: the Slurm job of this run is unknown: %s\n",
		     rs->failed ? rs->why : "no job writes its output file");
	/* A note in the log for the reader; crash recovery records the run
	 * interrupted. */
	if (n > 0 && (size_t)n < sizeof(note))
		(void)store_log_append(rs->s, r0->id, note, (size_t)n);
	util_log(LOG_WARNING, "crash recovery: run %d (item %lld): the Slurm job writing %s is unknown: %s",
		 r0->run_no, (long long)r0->item_id, r0->job_output,
		 rs->failed ? rs->why : "scontrol knows no such job");
	return 0;
}

void pipe_resolve_jobs(struct store *s)
{
	struct resolve rs = {.s = s};

	/* resolve_run never stops the walk; on a store error the runs not reached stay
	 * unresolved. */
	(void)store_run_each(s, 0, "recipe", RUN_RUNNING, resolve_run, &rs);
}

struct item_set {
	struct store *s;
	int64_t ids[256];
	int n;
};

static int collect_item(void *arg, const struct run *r)
{
	struct item_set *set = arg;
	int i;

	if (!pipe_run_reattaches(set->s, r))
		return 0;
	for (i = 0; i < set->n && set->ids[i] != r->item_id; i++)
		;
	if (i == set->n && set->n < 256)
		set->ids[set->n++] = r->item_id;
	return 0;
}

int pipe_reattach_items(struct store *s, int64_t *ids, int max)
{
	struct item_set set = {.s = s, .n = 0};
	int i;

	/* On a store error no item is found to reattach, as when none runs. */
	(void)store_run_each(s, 0, "recipe", RUN_RUNNING, collect_item, &set);
	for (i = 0; i < set.n && i < max; i++)
		ids[i] = set.ids[i];
	return set.n < max ? set.n : max;
}

/* The item's latest running stage run. */
struct stage_find {
	struct store *s;
	struct run run;
	int found;
};

static int latest_stage(void *arg, const struct run *r)
{
	struct stage_find *f = arg;

	if (f->found)
		run_clear(&f->run);
	f->found = store_run_get(f->s, r->id, &f->run) == 0;
	return 0;
}

struct reattach {
	struct pipe *p;
	struct item *it;
	struct batch *b;
};

/* One job per Slurm run of the item that is still running. */
static int reattach_run(void *arg, const struct run *r0)
{
	struct reattach *ra = arg;
	struct pipe *p = ra->p;
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	const struct recipe *rec;
	struct recipe gone = {0}; /* what the job knows of a recipe no longer in the catalog */
	char empty[1] = "";
	struct job *j;
	const char *g;

	if (!pipe_run_reattaches(p->pl->store, r0) || !(j = calloc(1, sizeof(*j))))
		return 0;
	j->p = p;
	j->item_id = r0->item_id;
	snprintf(j->item, sizeof(j->item), "%s", ra->it->name);
	j->batch = ra->b;
	if (store_run_get(p->pl->store, r0->id, &j->run)) {
		free(j);
		return 0;
	}
	gone.name = gone.file = j->run.name;
	gone.path = j->run.command;
	gone.summary = empty;
	gone.needs_default = 1;
	rec = recipe_find(pipeline_recipes_hold(p->pl), j->run.name);
	recipe_copy(&j->recipe, rec ? rec : &gone); /* checked below */
	pipeline_recipes_release(p->pl);
	for (g = j->run.gpus; *g && j->ngpus < 16;) {
		if (*g >= '0' && *g <= '9')
			j->gpus[j->ngpus++] = (int)strtol(g, (char **)&g, 10);
		else
			g++;
	}
	if (!j->recipe.name || !j->recipe.file || !j->recipe.path || !j->recipe.summary ||
	    !poller(p) ||
	    slurm_attach(p->slurm, &cfg->executor, j->run.job_id, j->run.job_output,
			 j->run.job_offset, (unsigned)j->recipe.timeout_s, &callbacks, j,
			 &j->sjob)) {
		pipe__job_free(j);
		return 0;
	}
	pipe__junit_open(p, j, 0); /* the file its job writes, where it was made */
	j->next = p->jobs;
	p->jobs = j;
	p->running_recipes++;
	ra->b->pending++;
	if (ra->b->stage_job)
		pipe__log_line(p, ra->b->stage_job, "[packetfs] %s: following Slurm job %s again\n",
			       j->run.name, j->run.job_id);
	pipe__event(p, ra->it, "recipe_reattached",
		    ",\"recipe\":\"%s\",\"run\":%d,\"job_id\":\"%s\",\"log\":\"%s\"",
		    j->run.name, j->run.run_no, j->run.job_id, j->run.log_path);
	return 0;
}

/* Whether the item has a recipe run named name after run number after
 * (interrupted runs count only when interrupted ones count). */
struct ran_find {
	const char *name;
	int after;
	int interrupted_count;
	int found;
};

static int ran_since(void *arg, const struct run *r)
{
	struct ran_find *f = arg;

	if (r->run_no > f->after && strcmp(r->name, f->name) == 0 &&
	    (f->interrupted_count || r->status != RUN_INTERRUPTED))
		f->found = 1;
	return 0;
}

/* Queues the plan's recipes that the validate stage (run sj) had not
 * submitted when the daemon stopped, and, unless the pipeline says
 * "on_interrupt": "fail", those whose run crash recovery recorded
 * interrupted (a daemon that died while sbatch ran, before it said which
 * job it made). */
static void queue_missing(struct pipe *p, struct item *it, struct batch *b, struct job *sj)
{
	const struct recipe_catalog *cat;
	char **names = NULL;
	int again_fail;
	size_t k;

	if (plan_names(p->pl->store, it->id, &names))
		return;
	again_fail = pipeline_config_get(p->pl)->on_interrupt_fail;
	cat = pipeline_recipes_hold(p->pl);
	for (k = 0; names[k]; k++) {
		const struct recipe *r = recipe_find(cat, names[k]);
		struct ran_find f = {names[k], sj->run.run_no, again_fail, 0};

		/* On a store error the recipe counts as not run since, and is queued. */
		(void)store_run_each(p->pl->store, it->id, "recipe", RUN_ANY, ran_since, &f);
		if (!r || r->procedure || f.found)
			continue;
		pipe__log_line(p, sj, "[packetfs] queued %s (after a restart)\n", r->name);
		pipe__queue_recipe(p, it, r, b, NULL);
	}
	pipeline_recipes_release(p->pl);
	strv_free(names);
}

static void reattach_item(struct pipe *p, int64_t item_id)
{
	struct pfs_config *cfg;
	struct stage_find sf = {.s = p->pl->store};
	struct reattach ra = {.p = p};
	struct batch *b;
	struct item it;
	size_t idx = 0;

	if (store_item_get_id(p->pl->store, item_id, &it))
		return;
	cfg = pipeline_config_item(p->pl, &it);
	b = calloc(1, sizeof(*b));
	if (!b) {
		item_clear(&it);
		return;
	}
	b->item_id = it.id;
	snprintf(b->item, sizeof(b->item), "%s", it.name);
	/* On a store error no running stage is found, as when there is none. */
	(void)store_run_each(p->pl->store, it.id, "stage", RUN_RUNNING, latest_stage, &sf);
	if (sf.found && config_stage(cfg, sf.run.name, &idx) && cfg->stages[idx].recipes_from_plan &&
	    (b->stage_job = calloc(1, sizeof(struct job)))) {
		struct job *sj = b->stage_job;

		sj->p = p;
		sj->item_id = it.id;
		snprintf(sj->item, sizeof(sj->item), "%s", it.name);
		sj->is_stage = 1;
		sj->stage_index = (int)idx;
		sj->cfg = cfg;
		sj->run = sf.run;
		sf.found = 0;
		pipe__log_line(p, sj, "[packetfs] the daemon restarted\n");
	} else {
		/* A rerun: the item returns to where its stages stand. */
		b->rerun = 1;
		b->prev_state = it.stage_ok && config_stage(cfg, it.stage, &idx) &&
						idx + 1 == cfg->nstages ? ITEM_DONE : ITEM_WAITING;
	}
	if (sf.found)
		run_clear(&sf.run);
	b->next = p->batches;
	p->batches = b;
	ra.it = &it;
	ra.b = b;
	b->pending++; /* held until everything is attached and queued */
	/* On a store error the runs not reached are not reattached. */
	(void)store_run_each(p->pl->store, it.id, "recipe", RUN_RUNNING, reattach_run, &ra);
	if (b->stage_job)
		queue_missing(p, &it, b, b->stage_job);
	pipe__pump(p);
	b->pending--;
	item_clear(&it);
	pipe__batch_step(p, b);
}

void pipe_reattach(struct pipe *p)
{
	int64_t ids[256];
	int n, i;

	n = pipe_reattach_items(p->pl->store, ids, 256);
	for (i = 0; i < n; i++)
		reattach_item(p, ids[i]);
}
