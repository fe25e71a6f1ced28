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
		registry_evidence_summary(names, lines, nl, evidence);
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
	char **names = NULL, **lines = NULL;
	size_t nl = 0;
	int rc;

	rc = view_plan_names(e, it, &names);
	if (rc == -ENOENT) {
		names = calloc(1, sizeof(char *));
		rc = names ? 0 : -ENOMEM;
	}
	if (rc == 0)
		rc = store_registry_lines(e->store, it->id, &lines, &nl);
	if (rc == 0)
		rc = registry_evidence_md(it->name, names, lines, nl, out);
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
	}
	return 0;
}

struct reg_line {
	int64_t item_id, run_id;
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

	if (strcmp(source, "engine") != 0)
		return 0;
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
	l->v[l->n].line = strdup(line);
	if (!l->v[l->n].line) {
		l->oom = 1;
		return 1;
	}
	l->n++;
	return 0;
}

static void check_line(struct check *c, const struct reg_line *l)
{
	char name[ITEM_NAME_MAX + 16];
	const cJSON *run_no, *sha, *status, *recipe;
	struct run r;
	cJSON *o = cJSON_Parse(l->line);
	const char *why = NULL;

	if (!o) {
		why = "not valid JSON";
	} else if (!l->run_id || store_run_get(c->e->store, l->run_id, &r)) {
		why = "no matching run in the runs table";
	} else {
		run_no = cJSON_GetObjectItemCaseSensitive(o, "run");
		sha = cJSON_GetObjectItemCaseSensitive(o, "log_sha256");
		status = cJSON_GetObjectItemCaseSensitive(o, "status");
		recipe = cJSON_GetObjectItemCaseSensitive(o, "recipe");
		if (!cJSON_IsNumber(run_no) || (int)run_no->valuedouble != r.run_no)
			why = "run number differs from the runs table";
		else if (!cJSON_IsString(recipe) || strcmp(recipe->valuestring, r.name) != 0)
			why = "recipe differs from the runs table";
		else if (!cJSON_IsString(status) || strcmp(status->valuestring, r.status) != 0)
			why = "status differs from the runs table";
		else if (!cJSON_IsString(sha) || strcmp(sha->valuestring, r.log_sha256) != 0)
			why = "log_sha256 differs from the runs table";
		run_clear(&r);
	}
	cJSON_Delete(o);
	if (why) {
		item_name_of(c->e, l->item_id, name, sizeof(name));
		buf_printf(c->out, "%s: registry line for run id %lld: %s\n", name,
			   (long long)l->run_id, why);
		c->bad = 1;
	}
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
