/*
 * pipe_measure.c - a measured recipe's batch of runs (SPEC §6 "Measured
 * recipes", docs/measure.md), on the libuv loop thread.
 *
 * DESIGN. The queued job of a recipe with "# measure: base" is the
 * batch's holder: once the queue grants its GPUs it makes a clean checkout
 * of the item's base (the merge-base of the base branch and the head) and
 * one of the head (repo_side.h, under <store>/measure/), then starts its
 * runs one at a time, each a job of its own (measure_parent set) that
 * pipe_recipe.c runs as any recipe run - log, run row, registry line, the
 * same GPUs, cancel and timeout - in its side's checkout and at its side's
 * commit. The order alternates base and head, warmups first: with warmup
 * K and repeat N, 2K discarded runs then 2N counted ones, B H B H ...,
 * so slow drift of the machine falls on both sides alike. The holder keeps
 * the GPUs from the first run to the last (no other recipe can take them
 * between two runs), and only the holder counts against
 * max_parallel_recipes while a run of it goes on.
 *
 * Every run is a registry line with "side" and "metrics" (warmups too,
 * their note saying they are discarded). A run that does not validate -
 * failing, timed out, cancelled, blocked, a malformed report or none -
 * ends the batch: the holder's line takes its status. Once every run
 * validated, the holder's line is the verdict of measure_verdict
 * (validated or failing; an incomplete measurement is failing, since it
 * backs no claim), its note the change of each metric, and its log the
 * recipe's section of measurements.md (measure_report.c). The checkouts
 * are removed when the batch ends. Making and removing them blocks on git
 * and the disk, so it runs on libuv's thread pool (struct side_work): the
 * holder waits, in no list, for the done callback on the loop thread; a
 * cancel meanwhile ends the batch once the checkouts are made.
 *
 * Under the Slurm executor each run is a Slurm batch job as any recipe
 * run (pipe_slurm.c), and the batch is pinned to one node: the node its
 * first job ran on (pipe__measure_node) is the --nodelist of every later
 * job, so both sides run on the same machine. Slurm grants the GPUs of
 * each job; sbatch cannot ask for device indices, so the registry lines
 * name the indices each run got. A batch is not held in one allocation:
 * a run stays one sbatch job, cancelled, timed out and recorded as any.
 * A daemon that stops leaves the job of the run going on to be cancelled
 * at the next mount (pipe_recover.c): a measured run is never followed
 * again (pipe_run_reattaches), its batch starts over instead, as a local
 * one does.
 *
 * GPU leaks. After each local run the leak check of any GPU recipe run
 * (pipe_recipe.c) looks at the batch's GPUs and notes what it finds on
 * that run's line; a leaking device is held back, as after any recipe.
 * The batch keeps it (no other recipe can take a held-back device), but
 * its next run does not start on it: the holder waits on
 * p->measure_waiting until the recheck of held-back GPUs finds its
 * devices clean (pipe__measure_gpu_recheck, every GPU_RECHECK_MS), then
 * goes on, so that no run is measured beside what an earlier one left.
 * Cancel and shutdown end a waiting batch as they end a running one. The
 * verdict's note says how long the batch waited.
 *
 * With "run_as" the checkouts are given to that user (repo_side.h), as
 * the item's worktree is, and the runs run as that user like any recipe
 * run.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe_int.h"

/* The counted runs' metrics of one side. */
struct side_runs {
	struct measure_values *v;
	size_t n;
};

struct measure_state {
	char commit[2][41];          /* base, head */
	char wt[2][PATH_MAX];        /* their checkouts */
	char wt_name[2][ITEM_NAME_MAX + 32];
	int made;                    /* the checkouts exist */
	int next, total, warm_runs;  /* runs started, in all, and the warmups among them */
	struct side_runs runs[2];
	int stopped;                 /* a run did not validate: the batch ends */
	enum run_status stop;
	char stop_note[512];
	char node[256];              /* Slurm: the node of the first job, "" before */
	int leaks;                   /* runs after which the batch waited for clean GPUs */
	uint64_t wait_from;          /* when the wait going on began (ns), 0 when none */
	double waited_s;             /* how long the batch waited in all */
};

static const char *const side_name[2] = { "base", "head" };

void pipe__measure_free(struct measure_state *ms)
{
	size_t i;
	int s;

	if (!ms)
		return;
	for (s = 0; s < 2; s++) {
		for (i = 0; i < ms->runs[s].n; i++)
			measure_values_clear(&ms->runs[s].v[i]);
		free(ms->runs[s].v);
	}
	free(ms);
}

/*
 * The git work of a batch, on libuv's thread pool (it blocks on the disk):
 * at its start the two commits and the checkouts, at its end their
 * removal. The worker touches only this struct; the holder waits, in no
 * list, until the done callback runs on the loop thread.
 */
struct side_work {
	uv_work_t req;
	struct pipe *p;
	struct job *j;
	char repo[PATH_MAX], branch[256], base[256], dir[PATH_MAX];
	char wt_name[2][ITEM_NAME_MAX + 32];
	char wt[2][PATH_MAX];
	uid_t owner;
	gid_t group;
	int rc, made, failed_side;     /* failed_side -1: the commits, 0/1: that checkout */
	char commit[2][41], err[256];
	enum run_status status;        /* for the end: finish's arguments */
	char *note, *text;
};

/* Records the end of j's batch (its checkouts are gone): its line (with
 * text, measurements.md's section, in its log), j freed. With text (the
 * verdict) the line's exit code is 0: every run exited 0; otherwise null. */
static void record(struct pipe *p, struct job *j, enum run_status status, const char *note,
		   const char *text)
{
	int all_ran = text != NULL; /* the verdict: every run ran and exited 0 */
	struct measure_state *ms = j->ms;
	struct item it;

	if (j->run.id == 0 && store_item_get_id(p->pl->store, j->item_id, &it) == 0) {
		if (pipe__job_open_run(p, j, &it, "recipe", j->recipe.name, status) == 0) {
			free(j->run.command);
			j->run.command = strdup(j->recipe.path);
		}
		item_clear(&it);
	}
	if (j->run.id == 0) { /* no row: nothing can be recorded */
		if (j->batch) {
			j->batch->pending--;
			pipe__batch_step(p, j->batch);
		}
		pipe__job_free(j);
		return;
	}
	j->run.has_exit_code = all_ran;
	j->run.exit_code = 0;
	pipe__log_line(p, j, "# packetfs recipe log\n# recipe: %s\n# summary: %s\n"
		       "# measured: base %.12s, head %.12s, %d run(s) started of %d\n%s%s%s\n%s",
		       j->recipe.name, j->recipe.summary, ms ? ms->commit[0] : "",
		       ms ? ms->commit[1] : "", ms ? ms->next : 0, ms ? ms->total : 0,
		       ms && ms->node[0] ? "# slurm node: " : "", ms ? ms->node : "",
		       ms && ms->node[0] ? " (every run)\n" : "", text ? text : "");
	pipe__recipe_done(p, j, status, note, NULL);
	pipe__changed(p->pl, j->item, "validation/measurements.md", PIPELINE_MODIFIED);
	pipe__job_free(j);
}

static void remove_work(uv_work_t *w)
{
	struct side_work *sw = w->data;
	int s;

	for (s = 0; s < 2; s++)
		repo_side_remove(sw->repo, sw->wt_name[s], sw->wt[s]);
}

static void remove_done(uv_work_t *w, int status)
{
	struct side_work *sw = w->data;

	(void)status;
	if (sw->j->batch)
		sw->j->batch->measure_git--;
	record(sw->p, sw->j, sw->status, sw->note ? sw->note : "cannot record: out of memory",
	       sw->text);
	free(sw->note);
	free(sw->text);
	free(sw);
}

/* Ends j's batch with status and note: its GPUs back, its checkouts
 * removed (on the thread pool), then its line recorded (record). */
static void finish(struct pipe *p, struct job *j, enum run_status status, const char *note,
		   const char *text)
{
	struct measure_state *ms = j->ms;
	struct side_work *sw;
	int s;

	/* Back to the pool before the batch steps on; the line still names them. */
	if (j->ngpus)
		gpu_pool_release(p->gpus, j->gpus, j->ngpus);
	sw = ms && ms->made ? calloc(1, sizeof(*sw)) : NULL;
	if (!sw) {
		if (ms && ms->made) /* out of memory: here, then */
			for (s = 0; s < 2; s++)
				repo_side_remove(pipeline_config_get(p->pl)->repo, ms->wt_name[s],
						 ms->wt[s]);
		record(p, j, status, note, text);
		return;
	}
	sw->p = p;
	sw->j = j;
	sw->status = status;
	sw->note = strdup(note);
	sw->text = text ? strdup(text) : NULL;
	snprintf(sw->repo, sizeof(sw->repo), "%s", pipeline_config_get(p->pl)->repo);
	for (s = 0; s < 2; s++) {
		snprintf(sw->wt_name[s], sizeof(sw->wt_name[s]), "%s", ms->wt_name[s]);
		snprintf(sw->wt[s], sizeof(sw->wt[s]), "%s", ms->wt[s]);
	}
	ms->made = 0;
	sw->req.data = sw;
	if (j->batch)
		j->batch->measure_git++;
	if (uv_queue_work(&p->pl->loop, &sw->req, remove_work, remove_done)) {
		remove_work(&sw->req);
		remove_done(&sw->req, 0);
	}
}

/* Adds "NAME base -> head UNIT (xR, 95% CI L-H)" of each metric to note. */
static void summary(const struct measure_recipe_runs *r, char *note, size_t size)
{
	struct measure_stats st;
	size_t i, used;

	for (i = 0; i < r->nmetrics; i++) {
		const struct measure_metric_runs *m = &r->metrics[i];

		if (!m->nbase || !m->nhead || measure_compare(m->base, m->nbase, m->head, m->nhead, &st))
			continue;
		used = strlen(note);
		snprintf(note + used, size - used, "%s%s %.4g -> %.4g%s%s (x%.3f, 95%% CI %.3f-%.3f)",
			 used ? "; " : "", m->name, st.base_median, st.head_median,
			 m->unit[0] ? " " : "", m->unit, st.ratio, st.ci_low, st.ci_high);
	}
}

/* The index of metric name in v[0..n), or n. */
static size_t metric_index(const struct measure_metric_runs *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n && strcmp(v[i].name, name) != 0; i++)
		;
	return i;
}

/* Every run validated: the verdict of the counted runs. */
static void verdict(struct pipe *p, struct job *j)
{
	struct measure_state *ms = j->ms;
	struct measure_metric_runs *mt = NULL;
	struct measure_recipe_runs r;
	size_t n = 0, i, k, cap = 0;
	double *vals = NULL;
	size_t nvals = 0;
	char note[768] = "", why[384];
	struct buf text;
	int s, v;

	/* Room for every value: each metric's sides point into vals. */
	for (s = 0; s < 2; s++)
		for (i = 0; i < ms->runs[s].n; i++)
			cap += ms->runs[s].v[i].n;
	for (s = 0; s < 2; s++)
		for (i = 0; i < ms->runs[s].n; i++)
			for (k = 0; k < ms->runs[s].v[i].n; k++)
				if (metric_index(mt, n, ms->runs[s].v[i].v[k].name) == n) {
					struct measure_metric_runs *nm = realloc(mt, (n + 1) * sizeof(*nm));

					if (!nm)
						goto nomem;
					mt = nm;
					memset(&mt[n], 0, sizeof(mt[n]));
					snprintf(mt[n].name, sizeof(mt[n].name), "%s", ms->runs[s].v[i].v[k].name);
					snprintf(mt[n].unit, sizeof(mt[n].unit), "%s", ms->runs[s].v[i].v[k].unit);
					mt[n].higher = ms->runs[s].v[i].v[k].higher;
					n++;
				}
	vals = malloc((cap ? cap : 1) * sizeof(double));
	if (!vals)
		goto nomem;
	/* Each metric's values side by side, in run order. */
	for (k = 0; k < n; k++)
		for (s = 0; s < 2; s++) {
			double *start = vals + nvals;
			size_t got = 0;

			for (i = 0; i < ms->runs[s].n; i++) {
				size_t at;

				for (at = 0; at < ms->runs[s].v[i].n; at++)
					if (strcmp(ms->runs[s].v[i].v[at].name, mt[k].name) == 0)
						start[got++] = ms->runs[s].v[i].v[at].value;
			}
			nvals += got;
			if (s == 0) {
				mt[k].base = start;
				mt[k].nbase = got;
			} else {
				mt[k].head = start;
				mt[k].nhead = got;
			}
		}
	r.recipe = j->recipe.name;
	r.base_commit = ms->commit[0];
	r.head_commit = ms->commit[1];
	r.measure = &j->recipe.measure;
	r.metrics = mt;
	r.nmetrics = n;
	v = measure_verdict(&r, why, sizeof(why));
	if (v < 0)
		goto nomem;
	snprintf(note, sizeof(note), "%s", why);
	if (v != MEASURE_INCOMPLETE)
		summary(&r, note, sizeof(note));
	if (ms->leaks) {
		size_t used = strlen(note);

		snprintf(note + used, sizeof(note) - used, "%sthe batch waited %.1f s for its GPUs "
			 "to be clean after %d leaking run(s)", used ? "; " : "", ms->waited_s,
			 ms->leaks);
	}
	buf_init(&text);
	if (measure_render(&r, 1, &text)) {
		buf_free(&text);
		goto nomem;
	}
	finish(p, j, v == MEASURE_VALIDATED ? RUN_VALIDATED : RUN_FAILING, note, text.data);
	buf_free(&text);
	free(vals);
	free(mt);
	return;
nomem:
	free(vals);
	free(mt);
	finish(p, j, RUN_FAILING, "cannot compare the runs: out of memory", NULL);
}

/* Whether a leak check held back one of j's GPUs. */
static int gpus_held(struct pipe *p, const struct job *j)
{
	int held[16], n, k, m;

	if (!j->ngpus)
		return 0;
	n = gpu_pool_held(p->gpus, held, 16);
	for (k = 0; k < j->ngpus; k++)
		for (m = 0; m < n && m < 16; m++)
			if (held[m] == j->gpus[k])
				return 1;
	return 0;
}

/* Starts the next run of j's batch, or ends it. */
static void next(struct pipe *p, struct job *j)
{
	struct measure_state *ms = j->ms;
	struct job *c;

	if (!ms->stopped && p->shutting_down) {
		ms->stopped = 1;
		ms->stop = RUN_INTERRUPTED;
		snprintf(ms->stop_note, sizeof(ms->stop_note), "the daemon stopped during the batch");
	}
	if (!ms->stopped && j->batch && j->batch->cancelled) {
		ms->stopped = 1;
		ms->stop = RUN_CANCELLED;
		snprintf(ms->stop_note, sizeof(ms->stop_note), "cancelled after %d of %d run(s)",
			 ms->next, ms->total);
	}
	if (ms->stopped) {
		finish(p, j, ms->stop, ms->stop_note, NULL);
		return;
	}
	if (ms->next == ms->total) {
		verdict(p, j);
		return;
	}
	if (gpus_held(p, j)) { /* the run before left them leaking: wait until clean */
		if (!ms->wait_from) {
			ms->wait_from = util_now_ns();
			ms->leaks++;
		}
		j->next = p->measure_waiting;
		p->measure_waiting = j;
		return;
	}
	if (ms->wait_from) {
		ms->waited_s += (double)(util_now_ns() - ms->wait_from) / 1e9;
		ms->wait_from = 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c || recipe_copy(&c->recipe, &j->recipe)) {
		free(c);
		finish(p, j, RUN_FAILING, "cannot start a run: out of memory", NULL);
		return;
	}
	c->p = p;
	c->item_id = j->item_id;
	snprintf(c->item, sizeof(c->item), "%s", j->item);
	memcpy(c->gpus, j->gpus, sizeof(c->gpus));
	c->ngpus = j->ngpus;
	c->measure_parent = j;
	c->side = ms->next % 2;
	c->warm = ms->next < ms->warm_runs;
	ms->next++;
	pipe__recipe_start(p, c);
}

int pipe__measure_gpu_recheck(struct pipe *p, int all)
{
	struct job *j, *list = p->measure_waiting;
	int n = 0;

	p->measure_waiting = NULL;
	while ((j = list)) {
		list = j->next;
		j->next = NULL;
		if (!all && !p->shutting_down && !(j->batch && j->batch->cancelled) &&
		    gpu_pool_recheck_granted(p->gpus, j->gpus, j->ngpus) != 0) {
			j->next = p->measure_waiting; /* still leaking, or no answer */
			p->measure_waiting = j;
			continue;
		}
		n++;
		next(p, j); /* ends it when cancelled or stopping */
	}
	return n;
}

static void start_work(uv_work_t *w)
{
	struct side_work *sw = w->data;
	int s;

	sw->failed_side = -1;
	sw->rc = repo_branch_head(sw->repo, sw->branch, sw->commit[1]);
	if (sw->rc == 0)
		sw->rc = repo_merge_base(sw->repo, sw->base, sw->commit[1], sw->commit[0]);
	if (sw->rc)
		return;
	sw->rc = util_mkdirs(sw->dir, 0755);
	for (s = 0; sw->rc == 0 && s < 2; s++) {
		sw->failed_side = s;
		sw->rc = repo_side_checkout(sw->repo, sw->commit[s], sw->wt_name[s], sw->wt[s],
					    sw->owner, sw->group, sw->err, sizeof(sw->err));
		sw->made = 1;
	}
}

static void start_done(uv_work_t *w, int status)
{
	struct side_work *sw = w->data;
	struct pipe *p = sw->p;
	struct job *j = sw->j;
	struct measure_state *ms = j->ms;
	char note[640];
	int s, rc = sw->rc;

	(void)status;
	if (j->batch)
		j->batch->measure_git--;
	for (s = 0; s < 2; s++)
		memcpy(ms->commit[s], sw->commit[s], sizeof(ms->commit[s]));
	ms->made = sw->made;
	if (sw->rc && sw->failed_side < 0)
		snprintf(note, sizeof(note), "no base to measure against: no merge-base of %s and "
			 "the head of %s (%s)", sw->base, sw->branch, strerror(-sw->rc));
	else if (sw->rc)
		snprintf(note, sizeof(note), "cannot check out the %s side: %s",
			 side_name[sw->failed_side], sw->err[0] ? sw->err : strerror(-sw->rc));
	free(sw);
	if (rc) {
		finish(p, j, RUN_BLOCKED, note, NULL);
		return;
	}
	ms->warm_runs = 2 * j->recipe.measure.warmup;
	ms->total = ms->warm_runs + 2 * measure_repeat(&j->recipe.measure);
	next(p, j);
}

void pipe__measure_start(struct pipe *p, struct job *j)
{
	struct pfs_config *cfg = pipeline_config_get(p->pl);
	struct measure_state *ms;
	struct runner_user *user = NULL;
	struct side_work *sw;
	char note[640];
	struct item it;
	int rc, s;

	ms = calloc(1, sizeof(*ms));
	sw = ms ? calloc(1, sizeof(*sw)) : NULL;
	if (!sw) {
		free(ms);
		finish(p, j, RUN_FAILING, "cannot measure: out of memory", NULL);
		return;
	}
	j->ms = ms;
	sw->owner = (uid_t)-1;
	sw->group = (gid_t)-1;
	/* run_as (SPEC §5): the checkouts are that user's, as the item's worktree is. */
	if (cfg->run_as && (rc = runner_user_lookup(cfg->run_as, &user)) != 0) {
		free(sw);
		snprintf(note, sizeof(note), "run_as: %s: %s", cfg->run_as,
			 rc == -ENOENT ? "no such user" : strerror(-rc));
		finish(p, j, RUN_BLOCKED, note, NULL);
		return;
	}
	if (user && user->uid != geteuid()) {
		sw->owner = user->uid;
		sw->group = user->gid;
	}
	runner_user_free(user);
	if (store_item_get_id(p->pl->store, j->item_id, &it)) {
		free(sw);
		finish(p, j, RUN_FAILING, "cannot measure: the item is gone", NULL);
		return;
	}
	sw->p = p;
	sw->j = j;
	snprintf(sw->repo, sizeof(sw->repo), "%s", cfg->repo);
	snprintf(sw->branch, sizeof(sw->branch), "%s", it.branch);
	snprintf(sw->base, sizeof(sw->base), "%s", it.base);
	snprintf(sw->dir, sizeof(sw->dir), "%s/measure", p->pl->store_dir);
	for (s = 0; s < 2; s++) {
		snprintf(ms->wt_name[s], sizeof(ms->wt_name[s]), "measure-%s-%s", it.name,
			 side_name[s]);
		snprintf(ms->wt[s], sizeof(ms->wt[s]), "%s/measure/%s-%s", p->pl->store_dir, it.name,
			 side_name[s]);
		memcpy(sw->wt_name[s], ms->wt_name[s], sizeof(sw->wt_name[s]));
		memcpy(sw->wt[s], ms->wt[s], sizeof(sw->wt[s]));
	}
	item_clear(&it);
	sw->req.data = sw;
	if (j->batch)
		j->batch->measure_git++;
	if (uv_queue_work(&p->pl->loop, &sw->req, start_work, start_done)) {
		start_work(&sw->req);
		start_done(&sw->req, 0);
	}
}

void pipe__measure_place(struct job *j, char *cwd, size_t size)
{
	struct measure_state *ms = j->measure_parent->ms;

	snprintf(j->run.head, sizeof(j->run.head), "%s", ms->commit[j->side]);
	snprintf(cwd, size, "%s", ms->wt[j->side]);
}

void pipe__measure_node(struct job *j, const char *node)
{
	struct measure_state *ms = j->measure_parent->ms;

	if (!ms->node[0] && node[0])
		snprintf(ms->node, sizeof(ms->node), "%s", node);
}

const char *pipe__measure_nodelist(const struct job *j)
{
	const struct measure_state *ms = j->measure_parent->ms;

	return ms->node[0] ? ms->node : NULL;
}

void pipe__measure_detached(struct job *j)
{
	struct job *h = j->measure_parent;

	j->measure_parent = NULL;
	pipe__job_free(h);
}

/* The $PACKET_METRICS of run j (its JUnit directory's metrics.json) into
 * out; 0, or -ENOENT when the run has no such directory. */
int pipe__measure_metrics_path(const struct job *j, char *out, size_t size)
{
	const char *slash = j->junit_path ? strrchr(j->junit_path, '/') : NULL;

	if (!slash)
		return -ENOENT;
	snprintf(out, size, "%.*s/metrics.json", (int)(slash - j->junit_path), j->junit_path);
	return 0;
}

void pipe__measure_collect(struct pipe *p, struct job *j, enum run_status *status, char *note,
			   size_t size)
{
	enum { LOG_MAX = 4 << 20 };
	struct measure_values v = {0};
	char err[256] = "", path[PATH_MAX];
	struct run r;
	char *log = NULL, *json = NULL;
	size_t jlen = 0, used;
	ssize_t got = -1;
	int rc = 0;

	if (store_run_get(p->pl->store, j->run.id, &r) == 0) {
		size_t want = r.log_size > LOG_MAX ? LOG_MAX : (size_t)r.log_size;

		log = malloc(want + 1);
		got = log ? store_log_read(p->pl->store, j->run.id, 0, log, want) : -ENOMEM;
		run_clear(&r);
	}
	if (got > 0)
		rc = measure_parse_lines(log, (size_t)got, &v, err, sizeof(err));
	free(log);
	if (rc == 0 && pipe__measure_metrics_path(j, path, sizeof(path)) == 0 &&
	    util_read_file(path, 1 << 20, &json, &jlen) == 0) {
		rc = measure_parse_json(json, jlen, &v, err, sizeof(err));
		free(json);
	}
	if (rc == 0 && v.n == 0 && *status == RUN_VALIDATED) {
		rc = -EINVAL;
		snprintf(err, sizeof(err), "no metric reported (METRIC lines on stdout, or JSON in "
			 "$PACKET_METRICS)");
	}
	if (rc && *status == RUN_VALIDATED)
		*status = RUN_FAILING;
	used = strlen(note);
	if (rc)
		snprintf(note + used, size - used, "%s%s", used ? "; " : "",
			 rc == -ENOMEM ? "out of memory reading the metrics" : err);
	else if (j->warm)
		snprintf(note + used, size - used, "%swarmup run, discarded", used ? "; " : "");
	free(j->metrics_json);
	j->metrics_json = v.n ? measure_values_json(&v) : NULL;
	measure_values_clear(&v);
}

void pipe__measure_ran(struct pipe *p, struct job *j, enum run_status status)
{
	struct job *h = j->measure_parent;
	struct measure_state *ms = h->ms;
	struct side_runs *sr = &ms->runs[j->side];
	struct measure_values v = {0};
	char err[64];

	if (status != RUN_VALIDATED) {
		ms->stopped = 1;
		ms->stop = status;
		snprintf(ms->stop_note, sizeof(ms->stop_note), "run %d of %d (%s side%s) %s%s%s",
			 ms->next, ms->total, side_name[j->side], j->warm ? ", warmup" : "",
			 run_status_name(status), j->run.note && j->run.note[0] ? ": " : "",
			 j->run.note ? j->run.note : "");
	} else if (!j->warm && j->metrics_json) {
		struct measure_values *nv = realloc(sr->v, (sr->n + 1) * sizeof(*nv));

		if (!nv || measure_parse_json(j->metrics_json, strlen(j->metrics_json), &v, err,
					      sizeof(err))) {
			if (nv)
				sr->v = nv;
			measure_values_clear(&v);
			ms->stopped = 1;
			ms->stop = RUN_FAILING;
			snprintf(ms->stop_note, sizeof(ms->stop_note), "cannot keep the metrics of "
				 "run %d: out of memory", ms->next);
		} else {
			sr->v = nv;
			sr->v[sr->n++] = v;
		}
	}
	next(p, h);
}
