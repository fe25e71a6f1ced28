/*
 * pipe_route.c - the path an item takes after its plan (SPEC §5 "Routes
 * and templates"): the plan's header lines read when its first stage
 * (plan) ends, and the template they choose stored on the item. From then
 * on every lookup of the item's stages goes through pipeline_config_item
 * (pipe_config.c), so the stages after plan are its template's. Running
 * plan again chooses again; the runs made on the old path stay in the
 * history, and a "template" event marks each change of path in the
 * timeline. Loop thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pipe_int.h"

/* Records the path the plan chose as a "template" event. */
static void path_event(struct pipe *p, const struct item *it)
{
	cJSON *o = cJSON_CreateObject();
	char *q;

	if (!o || !cJSON_AddStringToObject(o, "template", it->template) ||
	    !cJSON_AddStringToObject(o, "route", it->route)) {
		cJSON_Delete(o);
		return;
	}
	q = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	/* The object's members, without its braces, after the event's own. */
	if (q && strlen(q) > 2) {
		q[strlen(q) - 1] = '\0';
		pipe__event(p, it, "template", ",%s", q + 1);
	}
	free(q);
}

int pipe__route(struct pipe *p, struct item *it, const char *stage, char *why, size_t size)
{
	struct plan_header h;
	const char *name = "";
	char *plan = NULL, err[512];
	size_t len = 0;
	int rc, changed;

	rc = store_doc_read(p->pl->store, it->id, "plan.md", &plan, &len);
	if (rc == -ENOENT || rc == -EISDIR) {
		len = 0;
		rc = 0;
	} else if (rc) {
		snprintf(why, size, "%s: cannot read plan.md: %s", stage, strerror(-rc));
		return rc;
	}
	rc = recipe_plan_header(plan ? plan : "", len, &h, err, sizeof(err));
	free(plan);
	if (rc) {
		snprintf(why, size, "%s: %s", stage, err);
		return rc;
	}
	pipe__item_set(&it->route, h.route);
	pipe__item_set(&it->engine, h.engine);
	pipe__item_set(&it->review_request, h.review_request);
	rc = config_choose(pipeline_config_get(p->pl), h.template, h.route, &name, err,
			   sizeof(err));
	if (rc) {
		snprintf(why, size, "%s: plan.md: %s", stage, err);
		return -EINVAL;
	}
	changed = strcmp(it->template, name) != 0;
	pipe__item_set(&it->template, name);
	if (changed || it->template[0])
		path_event(p, it);
	return 0;
}
