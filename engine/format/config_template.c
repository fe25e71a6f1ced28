/*
 * config_template.c - the routes and templates of .packetfs/pipeline.json
 * (SPEC §5 "Routes and templates"; config.h): "templates", named stage
 * lists that replace the stages after plan, "default_template", and
 * "routes", a map from plan.md's "Route:" values to templates.
 *
 * Design: each template becomes a whole configuration of its own (struct
 * pfs_template's path): a shallow copy of the parent's fields, the
 * parent's plan as its stages[0] and the template's stages after it, so
 * that the engine runs an item on a template exactly as it runs one on the
 * top-level stages, with the same lookups (config_stage) on another stage
 * list. The stage list is read and checked by config__stage_list
 * (config_stage.c) with the rules across stages, the gates included: a
 * template that could publish without a review and a validation before it
 * is refused here, at load. They run after the rest of the document was
 * read, so the copies see every field.
 *
 * Invariants: template names are unique and match [a-z][a-z0-9_-]{0,31};
 * every route and default_template names a template. No shared state:
 * every function is thread-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "util.h"

static const char *const template_keys[] = { "stages", NULL };

/* "a, b, c" (the names of cfg's templates, cut to fit) into out. */
static void template_names(const struct pfs_config *cfg, char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < cfg->ntemplates && len < size; i++) {
		int n = snprintf(out + len, size - len, "%s%s", i ? ", " : "",
				 cfg->templates[i].name);

		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (!cfg->ntemplates)
		snprintf(out, size, "none");
}

static const struct pfs_template *find(const struct pfs_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->ntemplates; i++)
		if (strcmp(cfg->templates[i].name, name) == 0)
			return &cfg->templates[i];
	return NULL;
}

/* The template that the string e, at field, names: 0 with *out set, or
 * -EINVAL after config__fail() when e is no template's name. */
static int template_ref(struct ctx *c, const struct pfs_config *cfg, const char *field,
			const cJSON *e, const struct pfs_template **out)
{
	char names[512];

	if (!cJSON_IsString(e) || !e->valuestring[0])
		return config__fail(c, field, "must be the name of a template");
	*out = find(cfg, e->valuestring);
	if (!*out) {
		template_names(cfg, names, sizeof(names));
		return config__fail(c, field, "\"%.64s\" is not a template (templates: %s)",
				    e->valuestring, names);
	}
	return 0;
}

/* One template, the value v of key name: its path from cfg. */
static int parse_template(struct ctx *c, const cJSON *v, struct pfs_config *cfg,
			  struct pfs_template *t)
{
	char path[PATH_MAX_LEN], list[PATH_MAX_LEN];
	const cJSON *stages;
	int rc;

	config__join(path, "templates", v->string);
	if (!config__name_ok(v->string))
		return config__fail(c, path, "template name \"%.64s\" does not match "
				    "[a-z][a-z0-9_-]{0,31}", v->string);
	t->name = strdup(v->string);
	if (!t->name)
		return -ENOMEM;
	rc = config__check_object(c, path, v, template_keys, "an object {\"stages\": [...]}");
	if (rc)
		return rc;
	config__join(list, path, "stages");
	stages = cJSON_GetObjectItemCaseSensitive(v, "stages");
	if (!stages)
		return config__fail(c, list, "required");
	t->path = malloc(sizeof(*t->path));
	if (!t->path)
		return -ENOMEM;
	*t->path = *cfg;
	t->path->stages = NULL;
	t->path->nstages = 0;
	t->path->templates = NULL;
	t->path->ntemplates = 0;
	t->path->default_template = NULL;
	t->path->routes = NULL;
	t->path->nroutes = 0;
	t->path->parent = cfg;
	return config__stage_list(c, list, stages, &cfg->stages[0], t->path);
}

/* The object root[key] (expect: what it must be, for config__get_object's
 * message) into *obj, NULL when absent; when present, a zeroed array of one
 * element of size bytes per member (one at least) into *rows, which the
 * configuration owns. field receives key's path. Returns 0, -ENOMEM, or the
 * error of config__get_object(). */
static int object_rows(struct ctx *c, const cJSON *root, const char *key, const char *expect,
		       char field[PATH_MAX_LEN], const cJSON **obj, size_t size, void **rows)
{
	int n, rc = config__get_object(c, "", root, key, NULL, expect, field, obj);

	if (rc || !*obj)
		return rc;
	n = cJSON_GetArraySize(*obj);
	*rows = calloc(n ? (size_t)n : 1, size);
	return *rows ? 0 : -ENOMEM;
}

static int parse_routes(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	const cJSON *obj, *e;
	const struct pfs_template *t;
	char field[PATH_MAX_LEN];
	void *rows = NULL;
	int rc;

	rc = object_rows(c, root, "routes", "an object {\"ROUTE\": \"TEMPLATE\"}", field, &obj,
			 sizeof(*cfg->routes), &rows);
	cfg->routes = rows;
	if (rc || !obj)
		return rc;
	cJSON_ArrayForEach(e, obj) {
		config__join(field, "routes", e->string);
		if (!e->string[0])
			return config__fail(c, field, "a route must be a non-empty string");
		rc = template_ref(c, cfg, field, e, &t);
		if (rc)
			return rc;
		cfg->routes[cfg->nroutes].route = strdup(e->string);
		if (!cfg->routes[cfg->nroutes].route)
			return -ENOMEM;
		cfg->routes[cfg->nroutes++].template = t->name;
	}
	return 0;
}

int config__parse_templates(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	const cJSON *obj, *e;
	const struct pfs_template *t;
	char field[PATH_MAX_LEN];
	void *rows = NULL;
	int rc;

	rc = object_rows(c, root, "templates", "an object {\"NAME\": {\"stages\": [...]}}", field,
			 &obj, sizeof(*cfg->templates), &rows);
	cfg->templates = rows;
	if (rc)
		return rc;
	if (obj) {
		cJSON_ArrayForEach(e, obj) {
			rc = parse_template(c, e, cfg, &cfg->templates[cfg->ntemplates++]);
			if (rc)
				return rc;
		}
	}
	e = cJSON_GetObjectItemCaseSensitive(root, "default_template");
	if (e) {
		rc = template_ref(c, cfg, "default_template", e, &t);
		if (rc)
			return rc;
		cfg->default_template = t->name;
	}
	return parse_routes(c, root, cfg);
}

const struct pfs_config *config_path(const struct pfs_config *cfg, const char *name)
{
	const struct pfs_template *t;

	if (!name || !name[0])
		return cfg;
	t = find(cfg, name);
	return t ? t->path : NULL;
}

int config_choose(const struct pfs_config *cfg, const char *tmpl, const char *route,
		  const char **out, char *err, size_t errlen)
{
	const struct pfs_template *t;
	char names[512];
	size_t i;

	if (tmpl && tmpl[0]) {
		t = find(cfg, tmpl);
		if (!t) {
			template_names(cfg, names, sizeof(names));
			if (err && errlen)
				snprintf(err, errlen, "Template: %s: no such template (templates: %s)",
					 tmpl, names);
			return -ENOENT;
		}
		*out = t->name;
		return 0;
	}
	for (i = 0; route && route[0] && i < cfg->nroutes; i++) {
		if (strcmp(cfg->routes[i].route, route) == 0) {
			*out = cfg->routes[i].template;
			return 0;
		}
	}
	*out = cfg->default_template ? cfg->default_template : "";
	return 0;
}
