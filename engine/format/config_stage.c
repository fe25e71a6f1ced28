/*
 * config_stage.c - the stages of .packetfs/pipeline.json (see config.h): each
 * stage object, and the rules across stages that a JSON Schema cannot
 * state (config.c reads the rest of the document; config_int.h is what
 * they share).
 *
 * Design: a stage's fields are read in a fixed order and the first problem
 * stops the parse with "stages[i].field: why". Unique names and
 * on_needs_changes naming an earlier stage are checked through one sort of
 * the names as written, made before any stage is read (struct
 * stage_names): every stage before the one being read passed, so its name
 * is as written, and a check costs O(log n) where a comparison with every
 * earlier stage made a file of many stages quadratic. An env object's keys
 * are checked for repeats the same way (config__check_object).
 *
 * No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "util.h"

static const char *const stage_keys[] = {
	"name", "run", "produces", "timeout_s", "gate", "recipes", "on_needs_changes",
	"max_iterations", "push", "env", "rounds", NULL,
};

static const char *const push_keys[] = { "remote", NULL };
static const char *const rounds_keys[] = { "every_s", "max", NULL };

/* What the engine sets for every stage program (pipe.c). */
static const char *const engine_vars[] = {
	"PACKET_ITEM", "PACKET_DIR", "PACKET_WORKTREE", "PACKET_STAGE", "PACKET_ITERATION",
	"PACKET_BRANCH", "PACKET_BASE", "PACKET_REPO", "PACKET_LEARNINGS", "PACKET_ROUND",
	"PACKET_JUNIT", "PACKET_RUN_CREDENTIAL", "RECIPE_NAME", "PACKET_ROUTE", "PACKET_TEMPLATE",
	"PACKET_ENGINE", "PACKET_REVIEW_REQUEST", NULL,
};

/* An item-relative path: not absolute and without ".." components. */
static int relative_path_ok(const char *p)
{
	const char *s = p, *slash;

	if (p[0] == '/')
		return 0;
	for (;;) {
		slash = strchr(s, '/');
		if (s[0] == '.' && s[1] == '.' && (s[2] == '/' || s[2] == '\0'))
			return 0;
		if (!slash)
			return 1;
		s = slash + 1;
	}
}

int config__name_ok(const char *s)
{
	size_t i;

	if (!(s[0] >= 'a' && s[0] <= 'z'))
		return 0;
	for (i = 1; s[i]; i++) {
		if (i >= 32)
			return 0;
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	}
	return 1;
}

static int parse_push(struct ctx *c, const char *path, const cJSON *obj, struct pfs_stage *st)
{
	const cJSON *v;
	char field[PATH_MAX_LEN];
	int rc = config__get_object(c, path, obj, "push", push_keys,
				    "an object {\"remote\": NAME}", field, &v);

	if (rc || !v)
		return rc;
	return config__get_str(c, field, v, "remote", 1, &st->push_remote);
}

int config_env_reserved(const char *name)
{
	size_t i, n = strcspn(name, "=");

	for (i = 0; engine_vars[i]; i++)
		if (strlen(engine_vars[i]) == n && strncmp(engine_vars[i], name, n) == 0)
			return 1;
	return 0;
}

/* "env": {"NAME": "value", ...} into st->env as "NAME=value" strings. */
static int parse_env(struct ctx *c, const char *path, const cJSON *obj, struct pfs_stage *st)
{
	const cJSON *v, *e;
	char field[PATH_MAX_LEN];
	size_t n = 0;
	int rc;

	st->env = calloc(1, sizeof(char *));
	if (!st->env)
		return -ENOMEM;
	rc = config__get_object(c, path, obj, "env", NULL,
				"an object of strings {\"NAME\": \"value\"}", field, &v);
	if (rc || !v)
		return rc;
	cJSON_ArrayForEach(e, v)
		n++;
	free(st->env);
	st->env = calloc(n + 1, sizeof(char *));
	if (!st->env)
		return -ENOMEM;
	n = 0;
	cJSON_ArrayForEach(e, v) {
		const char *k = e->string;
		size_t i;
		char *var;

		snprintf(field, sizeof(field), "%.80s.env.%.64s", path, k);
		for (i = 0; k[i] && (k[i] == '_' || (k[i] >= 'A' && k[i] <= 'Z') ||
				     (k[i] >= 'a' && k[i] <= 'z') || (i && k[i] >= '0' && k[i] <= '9'));
		     i++)
			;
		if (!k[0] || k[i])
			return config__fail(c, field, "not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
		if (config_env_reserved(k))
			return config__fail(c, field, "packetfs sets %s for every stage; a stage cannot "
					    "change it", k);
		if (!cJSON_IsString(e))
			return config__fail(c, field, "must be a string");
		var = malloc(strlen(k) + strlen(e->valuestring) + 2);
		if (!var)
			return -ENOMEM;
		sprintf(var, "%s=%s", k, e->valuestring);
		st->env[n++] = var;
	}
	return 0;
}

/* "rounds": {"every_s": N, "max": M}, both integers >= 1. */
static int parse_rounds(struct ctx *c, const char *path, const cJSON *obj, struct pfs_stage *st)
{
	const cJSON *v;
	char field[PATH_MAX_LEN], sub[PATH_MAX_LEN];
	int rc = config__get_object(c, path, obj, "rounds", rounds_keys,
				    "an object {\"every_s\": N, \"max\": M}", field, &v);

	if (rc || !v)
		return rc;
	snprintf(sub, sizeof(sub), "%.120s.rounds.every_s", path);
	if (!cJSON_GetObjectItemCaseSensitive(v, "every_s"))
		return config__fail(c, sub, "required");
	snprintf(sub, sizeof(sub), "%.120s.rounds.max", path);
	if (!cJSON_GetObjectItemCaseSensitive(v, "max"))
		return config__fail(c, sub, "required");
	rc = config__opt_int(c, field, v, "every_s", 1, &st->rounds_every_s);
	if (!rc)
		rc = config__opt_int(c, field, v, "max", 1, &st->rounds_max);
	if (rc)
		return rc;
	if (st->recipes_from_plan || st->push_remote || config_stage_reviews(st))
		return config__fail(c, field, "a rounds stage only runs its program: it cannot also "
				    "validate, push or review");
	if (!st->run)
		return config__fail(c, field, "a rounds stage needs a program (\"run\")");
	return 0;
}

/* The names of the stages array as written, for parse_stage: names[n]
 * sorted by first_repeat (stages whose "name" is not a string left out),
 * and dup, the first stage whose name an earlier stage has (cfg->nstages
 * when none does). */
struct stage_names {
	struct slot *v;
	size_t n, dup;
};

/* Stage index of cfg from the array at list (its element index - off). */
static int parse_stage(struct ctx *c, const char *list, const cJSON *obj, struct pfs_config *cfg,
		       size_t index, size_t off, const struct stage_names *names)
{
	static const char *const gates[] = { "approve", NULL };
	static const char *const sources[] = { "plan", NULL };
	struct pfs_stage *st = &cfg->stages[index];
	const cJSON *v;
	char path[PATH_MAX_LEN], field[PATH_MAX_LEN];
	int rc, found = -1;
	size_t j;

	snprintf(path, sizeof(path), "%.100s[%zu]", list, index - off);
	st->max_iterations = 3;
	st->timeout_s = STAGE_TIMEOUT_DEFAULT_S;
	rc = config__check_object(c, path, obj, stage_keys, "an object");
	if (rc)
		return rc;

	rc = config__get_str(c, path, obj, "name", 1, &st->name);
	if (rc)
		return rc;
	config__join(field, path, "name");
	if (!config__name_ok(st->name))
		return config__fail(c, field, "\"%.64s\" does not match [a-z][a-z0-9_-]{0,31}",
				    st->name);
	/* Every stage before this one passed, so its name is as written. */
	if (index == names->dup)
		return config__fail(c, field, "stage \"%s\" is defined twice", st->name);

	v = cJSON_GetObjectItemCaseSensitive(obj, "run");
	if (v) {
		config__join(field, path, "run");
		rc = config__get_strv(c, field, v, 0, &st->run);
		if (rc)
			return rc;
	}

	v = cJSON_GetObjectItemCaseSensitive(obj, "produces");
	config__join(field, path, "produces");
	if (v) {
		rc = config__get_strv(c, field, v, 1, &st->produces);
		if (rc)
			return rc;
		for (j = 0; st->produces[j]; j++) {
			if (relative_path_ok(st->produces[j]))
				continue;
			snprintf(field, sizeof(field), "%.120s.produces[%zu]", path, j);
			return config__fail(c, field, "must be a path inside the item (no leading '/', "
					    "no '..')");
		}
	} else {
		st->produces = calloc(1, sizeof(char *));
		if (!st->produces)
			return -ENOMEM;
	}

	rc = config__opt_int(c, path, obj, "timeout_s", 0, &st->timeout_s);
	if (!rc)
		rc = config__get_enum(c, path, obj, "gate", gates, "\"approve\"", &found);
	if (rc)
		return rc;
	st->gate_approve = found == 0;
	found = -1;
	rc = config__get_enum(c, path, obj, "recipes", sources, "\"plan\"", &found);
	if (rc)
		return rc;
	st->recipes_from_plan = found == 0;

	rc = config__get_str(c, path, obj, "on_needs_changes", 0, &st->on_needs_changes);
	if (rc)
		return rc;
	if (st->on_needs_changes) {
		config__join(field, path, "on_needs_changes");
		if (config__slot_find(names->v, names->n, st->on_needs_changes) >= index)
			return config__fail(c, field, "\"%.64s\" is not a stage before \"%s\"",
					    st->on_needs_changes, st->name);
	}
	rc = config__opt_int(c, path, obj, "max_iterations", 1, &st->max_iterations);
	if (!rc)
		rc = parse_push(c, path, obj, st);
	if (!rc)
		rc = parse_env(c, path, obj, st);
	if (!rc)
		rc = parse_rounds(c, path, obj, st);
	return rc;
}

int config__stage_list(struct ctx *c, const char *list, const cJSON *v,
			const struct pfs_stage *plan, struct pfs_config *cfg)
{
	const cJSON *e, *name;
	struct stage_names names = { NULL, 0, 0 };
	size_t i, n = plan ? 1 : 0, off = n, reviewer, publisher, validator;
	int rc = 0;

	if (!cJSON_IsArray(v) || (!plan && !v->child))
		return config__fail(c, list, plan ? "must be an array of stage objects"
				    : "must be a non-empty array of stage objects");
	cJSON_ArrayForEach(e, v)
		n++;
	cfg->stages = calloc(n, sizeof(*cfg->stages));
	names.v = malloc(n * sizeof(*names.v));
	if (!cfg->stages || !names.v) {
		free(names.v);
		return -ENOMEM;
	}
	if (plan) {
		/* Borrowed from the parent: config_free never frees it here. */
		cfg->stages[0] = *plan;
		names.v[names.n++] = (struct slot){ plan->name, 0 };
	}
	cfg->nstages = n;
	i = off;
	cJSON_ArrayForEach(e, v) {
		name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (cJSON_IsString(name))
			names.v[names.n++] = (struct slot){ name->valuestring, i };
		i++;
	}
	names.dup = config__first_repeat(names.v, names.n);
	if (names.dup == names.n)
		names.dup = n;
	i = off;
	cJSON_ArrayForEach(e, v) {
		rc = parse_stage(c, list, e, cfg, i++, off, &names);
		if (rc)
			break;
	}
	free(names.v);
	if (rc)
		return rc;
	/* A publish passes only on a sound review of the head it pushes
	 * (SPEC §5): one with no review stage before it never could. On a
	 * template's path it also needs a validate stage before it (SPEC §5
	 * "Routes and templates": validated evidence of the head). Rounds
	 * babysit what a publish put out (SPEC §5 "After publish"). */
	for (reviewer = 0; reviewer < n && !config_stage_reviews(&cfg->stages[reviewer]);
	     reviewer++)
		;
	for (validator = 0; validator < n && !cfg->stages[validator].recipes_from_plan;
	     validator++)
		;
	for (publisher = 0; publisher < n && !config_stage_publishes(&cfg->stages[publisher]);
	     publisher++)
		;
	for (i = 0; i < n; i++) {
		if (!config_stage_publishes(&cfg->stages[i]))
			continue;
		if (reviewer >= i)
			return config__fail(c, list, "stage '%s' publishes, but no stage before "
					    "it produces review.md: a publish needs a sound review "
					    "of the head it pushes", cfg->stages[i].name);
		if (plan && validator >= i)
			return config__fail(c, list, "stage '%s' publishes, but no stage before "
					    "it validates (\"recipes\": \"plan\"): a publish needs "
					    "validated evidence of the head it pushes",
					    cfg->stages[i].name);
	}
	for (i = 0; i < n; i++) {
		if (cfg->stages[i].rounds_max && publisher >= i)
			return config__fail(c, list, "stage '%s' has rounds, but no stage "
					    "before it publishes: rounds run after publish",
					    cfg->stages[i].name);
	}
	return 0;
}

int config__parse_stages(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "stages");

	if (!v)
		return config__fail(c, "stages", "required");
	return config__stage_list(c, "stages", v, NULL, cfg);
}

int config_stage_reviews(const struct pfs_stage *st)
{
	char **v;

	if (st->on_needs_changes)
		return 1;
	for (v = st->produces; v && *v; v++)
		if (strcmp(*v, "review.md") == 0)
			return 1;
	return 0;
}

int config_stage_publishes(const struct pfs_stage *st)
{
	return st->push_remote || strcmp(st->name, "publish") == 0;
}

const struct pfs_stage *config_stage(const struct pfs_config *cfg, const char *name, size_t *index)
{
	size_t i;

	for (i = 0; cfg && name && i < cfg->nstages; i++) {
		if (strcmp(cfg->stages[i].name, name) == 0) {
			if (index)
				*index = i;
			return &cfg->stages[i];
		}
	}
	return NULL;
}
