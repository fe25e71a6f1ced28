/*
 * view.c - the generated views of an item (status, status.json,
 * evidence.md, change.diff) and the CLI's reports (packetfs log, packetfs
 * check). Everything here reads; nothing changes the store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine_int.h"
#include "registry.h"
#include "repo.h"

int view_plan_names(struct engine *e, const struct item *it, char ***names)
{
	char *plan = NULL;
	size_t len;
	int rc;

	rc = store_doc_read(e->store, it->id, "plan.md", &plan, &len);
	if (rc)
		return rc == -EISDIR ? -ENOENT : rc;
	rc = recipe_plan_names(plan, len, names);
	free(plan);
	return rc;
}

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

int view_status(struct engine *e, const struct item *it, int json, struct buf *out)
{
	struct pfs_config *cfg = engine_config_get(e);
	char head[41] = "", title[256], evidence[64] = "0/0 validated", gpus[128];
	char **names = NULL, **lines = NULL;
	size_t nl = 0;
	int rc = 0;

	item_title(e, it, title, sizeof(title));
	if (repo_branch_head(cfg->repo, it->branch, head))
		head[0] = '\0';
	if (view_plan_names(e, it, &names) == 0 &&
	    store_registry_lines(e->store, it->id, &lines, &nl) == 0)
		registry_evidence_summary(names, lines, nl, head[0] ? head : NULL, evidence);
	strv_free(names);
	strv_free(lines);
	engine_active_gpus(e, it->id, gpus, sizeof(gpus));
	if (!json) {
		rc = buf_printf(out,
				"item: %s\ntitle: %s\nstate: %s\nstage: %s\niteration: %d\n"
				"branch: %s\nbase: %s\nhead: %s\nverdict: %s\nassessment: %s\n"
				"evidence: %s\ngpus: %s\nlast_error: %s\nupdated: %s\n",
				it->name, title, it->state, it->stage, it->iteration, it->branch,
				it->base, head, it->verdict, it->assessment, evidence, gpus,
				it->last_error, it->updated_at);
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
		cJSON_AddStringToObject(o, "state", it->state);
		cJSON_AddStringToObject(o, "stage", it->stage);
		cJSON_AddNumberToObject(o, "iteration", it->iteration);
		cJSON_AddStringToObject(o, "branch", it->branch);
		cJSON_AddStringToObject(o, "base", it->base);
		cJSON_AddStringToObject(o, "head", head);
		cJSON_AddStringToObject(o, "verdict", it->verdict);
		cJSON_AddStringToObject(o, "assessment", it->assessment);
		cJSON_AddStringToObject(o, "evidence", evidence);
		for (p = gpus; *p;) {
			cJSON_AddItemToArray(g, cJSON_CreateNumber(strtol(p, &p, 10)));
			if (*p == ',')
				p++;
		}
		cJSON_AddItemToObject(o, "gpus", g);
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

int view_evidence(struct engine *e, const struct item *it, struct buf *out)
{
	char **names = NULL, **lines = NULL, head[41] = "";
	size_t nl = 0;
	int rc;

	/* Runs at another commit than the branch head are stale (registry.h). */
	if (repo_branch_head(engine_config_get(e)->repo, it->branch, head))
		head[0] = '\0';
	rc = view_plan_names(e, it, &names);
	if (rc == -ENOENT) {
		names = calloc(1, sizeof(char *));
		rc = names ? 0 : -ENOMEM;
	}
	if (rc == 0)
		rc = store_registry_lines(e->store, it->id, &lines, &nl);
	if (rc == 0)
		rc = registry_evidence_md(it->name, names, lines, nl, head[0] ? head : NULL, out);
	strv_free(names);
	strv_free(lines);
	return rc;
}

int view_change_diff(struct engine *e, const struct item *it, struct buf *out)
{
	struct pfs_config *cfg = engine_config_get(e);

	return repo_diff(cfg->repo, it->base, it->branch, out);
}

/* ---- packetfs log ---- */

static int log_rev(void *arg, const struct rev_info *r)
{
	struct buf *out = arg;

	if (r->size < 0)
		return buf_printf(out, "%s  %s@%d  %-6s  %8s  uid=%d pid=%d comm=%s stage=%s\n",
				  r->created_at, r->path, r->rev, r->op, "-", (int)r->uid, (int)r->pid,
				  r->comm[0] ? r->comm : "-", r->stage[0] ? r->stage : "-") != 0;
	return buf_printf(out, "%s  %s@%d  %-6s  %8lld  uid=%d pid=%d comm=%s stage=%s\n",
			  r->created_at, r->path, r->rev, r->op, (long long)r->size, (int)r->uid,
			  (int)r->pid, r->comm[0] ? r->comm : "-", r->stage[0] ? r->stage : "-") != 0;
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
	} else if (!r->log_sha256[0] && strcmp(r->status, "running") != 0 &&
		   strcmp(r->status, "queued") != 0) {
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
	int engine; /* the row's source is "engine" */
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
		if (strcmp(jstr_of(o, "source"), "external") != 0)
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
		if (strcmp(jstr_of(o, "status"), r.status) != 0)
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

	rc = store_integrity(e->store, out);
	if (rc < 0)
		return rc;
	c.bad = rc;
	rc = store_run_each(e->store, 0, NULL, NULL, check_run, &c);
	if (rc == 0)
		rc = store_registry_each(e->store, collect_line, &l);
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
