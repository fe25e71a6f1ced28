/*
 * view.c - the generated views of an item (status, status.json,
 * evidence.md, change.diff) and the CLI's reports (packetfs log, packetfs
 * check). Everything here reads; nothing changes the store.
 *
 * Git. status and evidence.md name the branch head, and change.diff is the
 * patch of merge-base(base, branch)..head; a stat renders them to learn
 * their size. Opening a repository costs far more than reading a ref, so
 * the git layer answers repo_branch_head and repo_resolve through a
 * repository each thread keeps open (repo.c), which still reads the refs
 * from disk at each lookup, so an answer is always the repository's
 * current one. change.diff is a function of the base's and the head's commits
 * alone: the last rendering of each item is kept with the two commit ids
 * it was made from and served while both are still what they resolve to
 * (view_diff.c).
 *
 * Registry. status and evidence.md read the registry through the item's
 * kept digest (view_digest.c): a stat parses only the lines appended
 * since the last one, not the whole registry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cjson/cJSON.h>

#include "namespace.h"

/* The title: the first non-empty line of brief.md without heading marks. */
static void item_title(struct engine *e, const struct item *it, char *out, size_t size)
{
	char *brief = NULL, *p, *eol;
	size_t len;

	out[0] = '\0';
	if (it->title[0]) {
		snprintf(out, size, "%s", it->title);
		return;
	}
	if (store_doc_read(e->store, it->id, "brief.md", &brief, &len))
		return;
	for (p = brief; *p; p = eol + 1) {
		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		while (p < eol && (*p == '#' || *p == ' ' || *p == '\t'))
			p++;
		if (p < eol) {
			size_t n = (size_t)(eol - p);

			if (n && p[n - 1] == '\r')
				n--;
			snprintf(out, size, "%.*s", (int)n, p);
			break;
		}
		if (!*eol)
			break;
	}
	free(brief);
}

/* What a rendering from the item's registry digest needs. */
struct digest_render {
	const struct item *it;
	char *const *names;
	const char *head;  /* NULL: none */
	struct buf *out;   /* evidence.md */
	char *summary;     /* [64]: "n/m validated" */
};

static int render_summary(void *arg, const struct registry_digest *d)
{
	struct digest_render *r = arg;

	registry_digest_summary(d, r->names, r->head, r->summary);
	return 0;
}

static int render_evidence(void *arg, const struct registry_digest *d)
{
	struct digest_render *r = arg;

	return registry_digest_evidence_md(d, r->it->name, r->names, r->head, r->out);
}

int view_status(struct engine *e, const struct item *it, int json, struct buf *out)
{
	struct pfs_config *cfg = pipeline_config_item(e->pl, it);
	char head[41] = "", title[256], evidence[64] = "0/0 validated", gpus[128], running[512];
	char **names = NULL;
	struct digest_render r;
	char round[32] = "", kept_stage[128], kept_error[1024], scope[400];
	struct item shown;
	enum item_state kept_state;
	int rc = 0, vstale, astale, rounds_max = 0;
	size_t k;

	/* A state the store did not take yet (a full disk) is the item's
	 * state all the same: a stage that ended is not shown running. */
	if (pipeline_unstored_state(e->pl, it->id, &kept_state, kept_stage, sizeof(kept_stage),
				    kept_error, sizeof(kept_error))) {
		shown = *it;
		shown.state = kept_state;
		shown.stage = kept_stage;
		shown.last_error = kept_error;
		it = &shown;
	}
	item_title(e, it, title, sizeof(title));
	for (k = 0; k < cfg->nstages; k++)
		if (cfg->stages[k].rounds_max && strcmp(cfg->stages[k].name, it->stage) == 0)
			rounds_max = cfg->stages[k].rounds_max;
	/* "2/5": the second of at most five rounds (SPEC §5 "After publish"). */
	if (it->round > 0 && rounds_max)
		snprintf(round, sizeof(round), "%d/%d", it->round, rounds_max);
	else if (it->round > 0)
		snprintf(round, sizeof(round), "%d", it->round);
	if (repo_branch_head(cfg->repo, it->branch, head))
		head[0] = '\0';
	if (plan_names(e->store, it->id, &names) == 0) {
		r = (struct digest_render){ it, names, head[0] ? head : NULL, NULL, evidence };
		view_digest(e, it->id, render_summary, &r);
	}
	strv_free(names);
	view_scope_get(e, it, head, scope, sizeof(scope), NULL);
	pipeline_active_gpus(e->pl, it->id, gpus, sizeof(gpus));
	pipeline_active_running(e->pl, it->id, running, sizeof(running));
	/* A verdict or assessment made at another commit than the head is
	 * stale (SPEC §5): said in the line, and no gate takes it. */
	vstale = it->verdict[0] && strcmp(it->verdict_head, head) != 0;
	astale = it->assessment[0] && strcmp(it->assessment_head, head) != 0;
	if (!json) {
		rc = buf_printf(out,
				"item: %s\ntitle: %s\nstate: %s\nstage: %s\niteration: %d\n"
				"branch: %s\nbase: %s\nhead: %s\nverdict: %s%s\nverdict_head: %s\n"
				"assessment: %s%s\nassessment_head: %s\nevidence: %s\nscope: %s\nrunning: %s\n"
				"gpus: %s\nround: %s\ndisposition: %s\nlast_error: %s\nupdated: %s\n"
				"route: %s\ntemplate: %s\nengine: %s\nreview_request: %s\nhold: %s\n",
				it->name, title, item_state_name(it->state), it->stage, it->iteration, it->branch,
				it->base, head, it->verdict, vstale ? " (stale: the head moved)" : "",
				it->verdict_head, it->assessment,
				astale ? " (stale: the head moved)" : "", it->assessment_head, evidence,
				scope, running, gpus, round, it->disposition, it->last_error, it->updated_at,
				it->route, it->template, it->engine, it->review_request,
				it->hold ? "yes" : "no");
		return rc;
	} else {
		cJSON *o = cJSON_CreateObject(), *g = cJSON_CreateArray();
		char *text, *p;

		if (!o || !g) {
			cJSON_Delete(o);
			cJSON_Delete(g);
			return -ENOMEM;
		}
		cJSON_AddStringToObject(o, "item", it->name);
		cJSON_AddStringToObject(o, "title", title);
		cJSON_AddStringToObject(o, "state", item_state_name(it->state));
		cJSON_AddStringToObject(o, "stage", it->stage);
		cJSON_AddNumberToObject(o, "iteration", it->iteration);
		cJSON_AddStringToObject(o, "branch", it->branch);
		cJSON_AddStringToObject(o, "base", it->base);
		cJSON_AddStringToObject(o, "head", head);
		cJSON_AddStringToObject(o, "verdict", it->verdict);
		cJSON_AddStringToObject(o, "verdict_head", it->verdict_head);
		cJSON_AddBoolToObject(o, "verdict_stale", vstale);
		cJSON_AddStringToObject(o, "assessment", it->assessment);
		cJSON_AddStringToObject(o, "assessment_head", it->assessment_head);
		cJSON_AddBoolToObject(o, "assessment_stale", astale);
		cJSON_AddStringToObject(o, "running", running);
		cJSON_AddStringToObject(o, "evidence", evidence);
		cJSON_AddStringToObject(o, "scope", scope);
		for (p = gpus; *p;) {
			cJSON_AddItemToArray(g, cJSON_CreateNumber(strtol(p, &p, 10)));
			if (*p == ',')
				p++;
		}
		cJSON_AddItemToObject(o, "gpus", g);
		cJSON_AddNumberToObject(o, "round", it->round);
		cJSON_AddNumberToObject(o, "rounds_max", rounds_max);
		cJSON_AddStringToObject(o, "disposition", it->disposition);
		cJSON_AddStringToObject(o, "route", it->route);
		cJSON_AddStringToObject(o, "template", it->template);
		cJSON_AddStringToObject(o, "engine", it->engine);
		cJSON_AddStringToObject(o, "review_request", it->review_request);
		cJSON_AddStringToObject(o, "last_error", it->last_error);
		cJSON_AddStringToObject(o, "updated", it->updated_at);
		cJSON_AddBoolToObject(o, "hold", it->hold);
		cJSON_AddBoolToObject(o, "approved", it->approved);
		cJSON_AddBoolToObject(o, "archived", it->archived);
		text = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		if (!text)
			return -ENOMEM;
		rc = buf_printf(out, "%s\n", text);
		free(text);
		return rc;
	}
}

int view_head(struct engine *e, const struct item *it, char head[41])
{
	return repo_branch_head(pipeline_config_get(e->pl)->repo, it->branch, head);
}

int view_plan_names(struct engine *e, int64_t item, char ***names)
{
	int rc = plan_names(e->store, item, names);

	if (rc == -ENOENT) {
		*names = calloc(1, sizeof(char *));
		rc = *names ? 0 : -ENOMEM;
	}
	return rc;
}

int view_evidence(struct engine *e, const struct item *it, struct buf *out)
{
	char **names = NULL, head[41] = "";
	struct digest_render r;
	size_t start = out->len;
	int rc;

	/* Runs at another commit than the branch head are stale (registry.h). */
	if (repo_branch_head(pipeline_config_get(e->pl)->repo, it->branch, head))
		head[0] = '\0';
	rc = view_plan_names(e, it->id, &names);
	if (rc == 0) {
		r = (struct digest_render){ it, names, head[0] ? head : NULL, out, NULL };
		rc = view_digest(e, it->id, render_evidence, &r);
	}
	strv_free(names);
	return rc ? rc : view_scope_evidence(e, it, head, out, start);
}

int view_change_diff(struct engine *e, const struct item *it, struct buf *out)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	char base[41], head[41];
	size_t start = out->len;
	int rc;

	if (!cfg->repo || repo_resolve(cfg->repo, it->base, base) ||
	    repo_branch_head(cfg->repo, it->branch, head))
		return repo_diff(cfg->repo, it->base, it->branch, out);
	rc = view_diff_cached(cfg->repo, it->id, base, head, out);
	if (rc)
		return rc < 0 ? rc : 0;
	rc = repo_diff(cfg->repo, it->base, it->branch, out);
	if (rc == 0) {
		char again[41];

		/* Kept only when the branch did not move while it was made. */
		if (repo_resolve(cfg->repo, it->base, again) == 0 && strcmp(again, base) == 0 &&
		    repo_branch_head(cfg->repo, it->branch, again) == 0 && strcmp(again, head) == 0)
			view_diff_keep(cfg->repo, it->id, base, head,
				       out->data ? out->data + start : "", out->len - start);
	}
	return rc;
}

/* ---- packetfs log ---- */

/* " kind=..." for a revision of a symlink, FIFO, socket or device (with
 * its major:minor), into k; "" for a document. */
static void rev_kind(const struct rev_info *r, char *k, size_t size)
{
	const char *name = S_ISLNK(r->type)    ? "symlink"
			   : S_ISFIFO(r->type) ? "fifo"
			   : S_ISSOCK(r->type) ? "socket"
			   : S_ISCHR(r->type)  ? "char"
			   : S_ISBLK(r->type)  ? "block"
					       : NULL;

	k[0] = '\0';
	if (name && (S_ISCHR(r->type) || S_ISBLK(r->type)))
		snprintf(k, size, " kind=%s %u:%u", name, major((dev_t)r->rdev),
			 minor((dev_t)r->rdev));
	else if (name)
		snprintf(k, size, " kind=%s", name);
}

static int log_rev(void *arg, const struct rev_info *r)
{
	struct buf *out = arg;
	char size[24], kind[48];

	if (r->size < 0)
		snprintf(size, sizeof(size), "-");
	else
		snprintf(size, sizeof(size), "%lld", (long long)r->size);
	rev_kind(r, kind, sizeof(kind));
	return buf_printf(out, "%s  %s@%d  %-6s  %8s  uid=%d pid=%d comm=%s stage=%s%s\n",
			  r->created_at, r->path, r->rev, r->op, size, (int)r->uid, (int)r->pid,
			  r->comm[0] ? r->comm : "-", r->stage[0] ? r->stage : "-", kind) != 0;
}

int engine_log(struct engine *e, const char *item, const char *path, struct buf *out)
{
	struct item it;
	int rc;

	rc = store_item_get(e->store, item, &it);
	if (rc)
		return rc;
	buf_printf(out, "# revisions of %s%s%s\n", item, path ? "/" : "", path ? path : "");
	rc = store_rev_each(e->store, it.id, path, log_rev, out);
	if (rc == 0 && !path) {
		buf_printf(out, "# events of %s\n", item);
		rc = store_events_render(e->store, it.id, out);
	}
	item_clear(&it);
	return rc;
}

/* ---- packetfs check ---- */

struct check {
	struct engine *e;
	struct buf *out;
	int bad;
};

static void item_name_of(struct engine *e, int64_t id, char *out, size_t size)
{
	struct item it;

	if (store_item_get_id(e->store, id, &it) == 0) {
		snprintf(out, size, "%s", it.name);
		item_clear(&it);
	} else {
		snprintf(out, size, "item#%lld", (long long)id);
	}
}

static int check_run(void *arg, const struct run *r)
{
	struct check *c = arg;
	char hex[65], name[ITEM_NAME_MAX + 16];
	int64_t size = 0;

	if (store_log_sha256(c->e->store, r->id, hex, &size)) {
		item_name_of(c->e, r->item_id, name, sizeof(name));
		buf_printf(c->out, "%s: run %d (%s): log unreadable\n", name, r->run_no, r->log_path);
		c->bad = 1;
		return 0;
	}
	if (size != r->log_size || (r->log_sha256[0] && strcmp(hex, r->log_sha256) != 0)) {
		item_name_of(c->e, r->item_id, name, sizeof(name));
		buf_printf(c->out, "%s: run %d (%s): log does not match its recorded %s\n", name,
			   r->run_no, r->log_path, size != r->log_size ? "size" : "sha256");
		c->bad = 1;
	} else if (!r->log_sha256[0] && r->status != RUN_RUNNING &&
		   r->status != RUN_QUEUED) {
		/* Every run is sealed with its sha256 when it ends. */
		item_name_of(c->e, r->item_id, name, sizeof(name));
		buf_printf(c->out, "%s: run %d (%s): no sha256 recorded for a finished run\n", name,
			   r->run_no, r->log_path);
		c->bad = 1;
	}
	return 0;
}

struct reg_line {
	int64_t item_id, run_id;
	int engine;   /* the row's source is "engine" */
	int imported; /* ... "imported": carried in, counts nowhere (0011_carry.sql) */
	char *line;
};

struct reg_lines {
	struct reg_line *v;
	size_t n, cap;
	int oom;
};

static int collect_line(void *arg, int64_t item_id, const char *line, const char *source,
			int64_t run_id)
{
	struct reg_lines *l = arg;

	if (l->n == l->cap) {
		struct reg_line *nv = realloc(l->v, (l->cap ? l->cap * 2 : 16) * sizeof(*nv));

		if (!nv) {
			l->oom = 1;
			return 1;
		}
		l->v = nv;
		l->cap = l->cap ? l->cap * 2 : 16;
	}
	l->v[l->n].item_id = item_id;
	l->v[l->n].run_id = run_id;
	l->v[l->n].engine = strcmp(source, "engine") == 0;
	l->v[l->n].imported = strcmp(source, "imported") == 0;
	l->v[l->n].line = strdup(line);
	if (!l->v[l->n].line) {
		l->oom = 1;
		return 1;
	}
	l->n++;
	return 0;
}

/* Adds why to the reasons in b ("; " between them). */
static void reason(struct buf *b, const char *why)
{
	buf_printf(b, "%s%s", b->len ? "; " : "", why);
}

/* The string member key of o, or "" (also when it is not a string). */
static const char *jstr_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/*
 * Checks one registry line. An engine line must be a JSON object saying
 * "source":"engine" whose run, recipe, status, exit_code, head, evidence,
 * log_sha256, executor and job_id are those of its row in the runs table, with log_sha256
 * also the sha256 of the log as stored now. An external line must say
 * "source":"external" (the engine's lines are the only ones that count).
 * A line carried in by an import that does not count here is kept as it
 * was written: a JSON object is all it must be.
 */
static void check_line(struct check *c, const struct reg_line *l)
{
	char name[ITEM_NAME_MAX + 16], hex[65] = "", claim[160];
	const cJSON *run_no, *exit_code;
	struct buf why;
	struct run r;
	cJSON *o = cJSON_Parse(l->line);
	int64_t size;

	buf_init(&why);
	run_no = o ? cJSON_GetObjectItemCaseSensitive(o, "run") : NULL;
	if (!cJSON_IsObject(o)) {
		reason(&why, "not a JSON object");
	} else if (!l->engine) {
		if (!l->imported && strcmp(jstr_of(o, "source"), "external") != 0)
			reason(&why, "external line says \"source\":\"engine\" (or no source); "
			       "it would count as the engine's");
	} else if (!l->run_id || store_run_get(c->e->store, l->run_id, &r)) {
		reason(&why, "no matching run in the runs table");
	} else {
		exit_code = cJSON_GetObjectItemCaseSensitive(o, "exit_code");
		if (strcmp(jstr_of(o, "source"), "engine") != 0)
			reason(&why, "an engine line that does not say \"source\":\"engine\"");
		if (r.item_id != l->item_id)
			reason(&why, "its run belongs to another item");
		if (!cJSON_IsNumber(run_no) || (int)run_no->valuedouble != r.run_no)
			reason(&why, "run number differs from the runs table");
		if (strcmp(jstr_of(o, "recipe"), r.name) != 0)
			reason(&why, "recipe differs from the runs table");
		if (strcmp(jstr_of(o, "status"), run_status_name(r.status)) != 0)
			reason(&why, "status differs from the runs table");
		if (r.has_exit_code ? !cJSON_IsNumber(exit_code) ||
				      (int)exit_code->valuedouble != r.exit_code
				    : !cJSON_IsNull(exit_code))
			reason(&why, "exit_code differs from the runs table");
		if (strcmp(jstr_of(o, "head"), r.head) != 0)
			reason(&why, "head differs from the runs table");
		if (strcmp(jstr_of(o, "evidence"), r.log_path) != 0)
			reason(&why, "evidence differs from the runs table");
		if (strcmp(jstr_of(o, "log_sha256"), r.log_sha256) != 0)
			reason(&why, "log_sha256 differs from the runs table");
		if (strcmp(jstr_of(o, "executor"), r.executor) != 0)
			reason(&why, "executor differs from the runs table");
		if (strcmp(jstr_of(o, "job_id"), r.job_id) != 0)
			reason(&why, "job_id differs from the runs table");
		if (store_log_sha256(c->e->store, r.id, hex, &size) == 0 &&
		    strcmp(jstr_of(o, "log_sha256"), hex) != 0)
			reason(&why, "log_sha256 is not the sha256 of the log");
		run_clear(&r);
	}
	if (why.len) {
		item_name_of(c->e, l->item_id, name, sizeof(name));
		if (!l->engine)
			snprintf(claim, sizeof(claim), "external registry line for %.64s",
				 o ? jstr_of(o, "recipe") : "?");
		else if (cJSON_IsNumber(run_no))
			snprintf(claim, sizeof(claim), "registry line of run %d (%.64s)",
				 (int)run_no->valuedouble, jstr_of(o, "recipe"));
		else
			snprintf(claim, sizeof(claim), "registry line for run id %lld",
				 (long long)l->run_id);
		buf_printf(c->out, "%s: %s: %s\n", name, claim, why.data);
		c->bad = 1;
	}
	buf_free(&why);
	cJSON_Delete(o);
}

int engine_check(struct engine *e, struct buf *out)
{
	struct check c = {e, out, 0};
	struct reg_lines l = {0};
	size_t i;
	int rc;

	/* One snapshot: a mounted store goes on appending to the logs of the
	 * runs in progress, each append with its run's size. */
	rc = store_snapshot_begin(e->store);
	if (rc == 0)
		rc = store_integrity(e->store, out);
	if (rc < 0) {
		store_snapshot_end(e->store);
		return rc;
	}
	c.bad = rc;
	rc = store_run_each(e->store, 0, NULL, RUN_ANY, check_run, &c);
	if (rc == 0)
		rc = store_registry_each(e->store, collect_line, &l);
	store_snapshot_end(e->store);
	if (rc == 0 && l.oom)
		rc = -ENOMEM;
	for (i = 0; i < l.n; i++) {
		if (rc == 0)
			check_line(&c, &l.v[i]);
		free(l.v[i].line);
	}
	free(l.v);
	if (rc)
		return rc;
	if (!c.bad)
		buf_puts(out, "store is consistent\n");
	return c.bad;
}
