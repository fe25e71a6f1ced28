/*
 * config.c - parsing and validation of .packetfs/pipeline.json (see config.h).
 *
 * Design: cJSON parses the text into a tree; one pass over the tree fills a
 * freshly allocated struct pfs_config and stops at the first problem with a
 * message "field.path: why", e.g. "stages[1].run: must be an array of
 * strings". Every object is checked for unknown keys (so a typo such as
 * "nmae" is refused instead of silently ignored) and for keys given twice.
 * The language accepted is exactly schema/pipeline.schema.json plus the rules
 * a JSON Schema cannot state: unique stage names, on_needs_changes naming an
 * earlier stage, no duplicate keys. This file reads the document, its
 * top-level fields and the executor; config_stage.c the stages;
 * config_template.c the templates and routes; the
 * readers of fields they share are declared in config_int.h.
 *
 * Cost: a file is refused or accepted in time about proportional to its
 * size (it may come from an agent through the mount, and is parsed on the
 * loop thread). Keys of a fixed set are marked in a bit mask; the keys of
 * an "env" object and the stage names are checked for repeats by sorting
 * (string, place) pairs; lists are allocated once at their length.
 *
 * Invariants: a configuration returned by config_parse is complete (repo and
 * base set, produces never NULL, gpu_ids allocated for GPU_LIST, nstages >= 1)
 * and is never modified afterwards. Nothing is shared between calls, so all
 * functions are thread-safe.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "config_int.h"
#include "packetfs-config.h"
#include "util.h"

#define MAX_GPUS 1024                   /* "gpus": N <= MAX_GPUS, list indices < MAX_GPUS */
#define MAX_DOC_LIMIT 9007199254740991.0 /* 2^53 - 1: the largest exact JSON integer */

static const char *const top_keys[] = {
	"repo", "base", "recipes_dir", "gpus", "max_parallel_recipes", "max_parallel_items",
	"on_interrupt", "cancel_grace_s", "max_doc_size", "run_as", "executor", "stages", "notify",
	"templates", "default_template", "routes", "probes", NULL,
};

static const char *const executor_keys[] = {
	"kind", "partition", "account", "extra_args", "shared_dir", "poll_ms", NULL,
};

int config__fail(struct ctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n, line, col;

	if (!c->err || !c->errlen)
		return -EINVAL;
	n = snprintf(c->err, c->errlen, "%s: ", path);
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (c->text && config__locate(c->text, path, &line, &col) == 0) {
		n = (int)strlen(c->err);
		snprintf(c->err + n, c->errlen - (size_t)n, " at line %d, column %d", line, col);
	}
	return -EINVAL;
}

/* out = path "." key, or key alone at the top level. */
void config__join(char out[PATH_MAX_LEN], const char *path, const char *key)
{
	if (*path)
		snprintf(out, PATH_MAX_LEN, "%s.%.64s", path, key);
	else
		snprintf(out, PATH_MAX_LEN, "%.64s", key);
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Sorts v[n] by string, then place: the first of equal strings comes first.
 * Returns the smallest place of a string equal to one at an earlier place,
 * or n when all differ: O(n log n), where comparing each with all before it
 * would be quadratic. */
size_t config__first_repeat(struct slot *v, size_t n)
{
	size_t i, at = n;

	if (n > 1)
		qsort(v, n, sizeof(*v), slot_cmp);
	for (i = 1; i < n; i++)
		if (v[i].i < at && strcmp(v[i].s, v[i - 1].s) == 0)
			at = v[i].i;
	return at;
}

/* The smallest place of s in v[n] (sorted by first_repeat), or n when s is
 * not there. */
size_t config__slot_find(const struct slot *v, size_t n, const char *s)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(v[mid].s, s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(v[lo].s, s) == 0 ? v[lo].i : n;
}

/* Refuses keys of obj missing from known (NULL-terminated, fewer than 32
 * keys; NULL: any key goes) and repeated keys, naming the first key in
 * the object's order that is either. 0, -EINVAL after config__fail(), -ENOMEM. */
static int check_keys(struct ctx *c, const char *path, const cJSON *obj, const char *const *known)
{
	const cJSON *k;
	char field[PATH_MAX_LEN];
	struct slot *v;
	size_t i, n = 0, at;
	uint32_t seen = 0;

	if (known) {
		for (k = obj->child; k; k = k->next) {
			for (i = 0; known[i] && strcmp(known[i], k->string) != 0; i++)
				;
			config__join(field, path, k->string);
			if (!known[i]) {
				const char *meant = config__suggest(k->string, known);

				if (meant)
					return config__fail(c, field, "unknown key (did you mean \"%s\"?)",
							    meant);
				return config__fail(c, field, "unknown key");
			}
			if (seen & (UINT32_C(1) << i))
				return config__fail(c, field, "duplicate key");
			seen |= UINT32_C(1) << i;
		}
		return 0;
	}
	for (k = obj->child; k; k = k->next)
		n++;
	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = obj->child, i = 0; k; k = k->next, i++)
		v[i] = (struct slot){ k->string, i };
	at = config__first_repeat(v, n);
	free(v);
	if (at == n)
		return 0;
	for (k = obj->child; at--; k = k->next)
		;
	config__join(field, path, k->string);
	return config__fail(c, field, "duplicate key");
}

/* Checks that v, the value at path, is an object (the message says "must
 * be " shape otherwise) with keys from known only (NULL-terminated; NULL:
 * any key goes), none repeated. Returns 0 or -EINVAL after config__fail(). */
int config__check_object(struct ctx *c, const char *path, const cJSON *v,
			 const char *const *known, const char *shape)
{
	if (!cJSON_IsObject(v))
		return config__fail(c, path, "must be %s", shape);
	return check_keys(c, path, v, known);
}

/* An optional object field of obj, checked as check_object does, into *out
 * (NULL when absent), its path (path "." key) into field. Returns 0 or
 * -EINVAL after config__fail(). *out belongs to obj. */
int config__get_object(struct ctx *c, const char *path, const cJSON *obj, const char *key,
		       const char *const *known, const char *shape, char field[PATH_MAX_LEN],
		       const cJSON **out)
{
	*out = cJSON_GetObjectItemCaseSensitive(obj, key);
	config__join(field, path, key);
	return *out ? config__check_object(c, field, *out, known, shape) : 0;
}

/* An integral JSON number within [min, max] into *out. */
int config__get_int(struct ctx *c, const char *path, const cJSON *v, double min, double max,
		    int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
		return config__fail(c, path, "must be an integer");
	d = v->valuedouble;
	if (d < min)
		return config__fail(c, path, "must be an integer >= %.0f", min);
	if (d > max)
		return config__fail(c, path, "must be at most %.0f", max);
	*out = (int64_t)d;
	return 0;
}

/* An optional int field of obj: absent leaves *out (the default) alone. */
int config__opt_int(struct ctx *c, const char *path, const cJSON *obj, const char *key, int min,
		    int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char field[PATH_MAX_LEN];
	int64_t x = 0;
	int rc;

	if (!v)
		return 0;
	config__join(field, path, key);
	rc = config__get_int(c, field, v, min, INT_MAX, &x);
	if (rc)
		return rc;
	*out = (int)x;
	return 0;
}

/* A string field into a fresh copy in *out; absent is an error when required. */
int config__get_str(struct ctx *c, const char *path, const cJSON *obj, const char *key,
		    int required, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char field[PATH_MAX_LEN];

	config__join(field, path, key);
	if (!v)
		return required ? config__fail(c, field, "required") : 0;
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return config__fail(c, field, "must be a non-empty string");
	*out = strdup(v->valuestring);
	return *out ? 0 : -ENOMEM;
}

static int get_abs_path(struct ctx *c, const cJSON *obj, const char *key, int required,
			char **out)
{
	int rc = config__get_str(c, "", obj, key, required, out);

	if (rc || !*out)
		return rc;
	if ((*out)[0] != '/')
		return config__fail(c, key, "must be an absolute path");
	return 0;
}

/* One of the strings in allowed (NULL-terminated): its index in *index. */
int config__get_enum(struct ctx *c, const char *path, const cJSON *obj, const char *key,
		     const char *const *allowed, const char *wording, int *index)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char field[PATH_MAX_LEN];
	int i;

	if (!v)
		return 0;
	config__join(field, path, key);
	for (i = 0; cJSON_IsString(v) && allowed[i]; i++) {
		if (strcmp(v->valuestring, allowed[i]) == 0) {
			*index = i;
			return 0;
		}
	}
	return config__fail(c, field, "must be %s", wording);
}

static int parse_gpus(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "gpus");
	const cJSON *e;
	char field[PATH_MAX_LEN];
	int64_t x = 0;
	int i, j, n, rc;

	cfg->gpu_mode = GPU_AUTO;
	if (!v || (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0))
		return 0;
	if (cJSON_IsNumber(v)) {
		rc = config__get_int(c, "gpus", v, 0, MAX_GPUS, &x);
		if (rc)
			return rc;
		cfg->gpu_mode = GPU_SLOTS;
		cfg->gpu_count = (int)x;
		return 0;
	}
	if (!cJSON_IsArray(v))
		return config__fail(c, "gpus", "must be \"auto\", a number of GPUs or a list of "
				    "device indices");
	n = cJSON_GetArraySize(v);
	if (n > MAX_GPUS)
		return config__fail(c, "gpus", "at most %d devices", MAX_GPUS);
	cfg->gpu_mode = GPU_LIST;
	cfg->gpu_ids = calloc((size_t)n + 1, sizeof(int));
	if (!cfg->gpu_ids)
		return -ENOMEM;
	i = 0;
	cJSON_ArrayForEach(e, v) {
		snprintf(field, sizeof(field), "gpus[%d]", i);
		rc = config__get_int(c, field, e, 0, MAX_GPUS - 1, &x);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (cfg->gpu_ids[j] == (int)x)
				return config__fail(c, field, "device %d is listed twice", (int)x);
		cfg->gpu_ids[i++] = (int)x;
	}
	cfg->gpu_count = n;
	return 0;
}

/* A NULL-terminated list of non-empty strings (never NULL on success). */
int config__get_strv(struct ctx *c, const char *path, const cJSON *v, int allow_empty,
		     char ***out)
{
	char field[PATH_MAX_LEN];
	const cJSON *e;
	char **list;
	size_t i = 0, n = 0;

	if (!cJSON_IsArray(v))
		return config__fail(c, path, "must be an array of strings");
	if (!allow_empty && !v->child)
		return config__fail(c, path, "must not be empty");
	cJSON_ArrayForEach(e, v)
		n++;
	list = calloc(n + 1, sizeof(char *));
	if (!list)
		return -ENOMEM;
	cJSON_ArrayForEach(e, v) {
		if (!cJSON_IsString(e) || !e->valuestring[0]) {
			strv_free(list);
			snprintf(field, sizeof(field), "%s[%zu]", path, i);
			return config__fail(c, field, "must be a non-empty string");
		}
		list[i] = strdup(e->valuestring);
		if (!list[i]) {
			strv_free(list);
			return -ENOMEM;
		}
		i++;
	}
	*out = list;
	return 0;
}

/* "executor": {"kind": "local"} or {"kind": "slurm", ...} (config.h). */
static int parse_executor(struct ctx *c, const cJSON *root, struct pfs_executor *ex)
{
	static const char *const kinds[] = { "local", "slurm", NULL };
	const cJSON *obj, *v;
	char field[PATH_MAX_LEN];
	int kind = 0, rc;

	ex->kind = EXECUTOR_LOCAL;
	ex->poll_ms = 1000;
	ex->extra_args = calloc(1, sizeof(char *));
	if (!ex->extra_args)
		return -ENOMEM;
	rc = config__get_object(c, "", root, "executor", executor_keys,
				"an object such as {\"kind\": \"slurm\"}", field, &obj);
	if (rc || !obj)
		return rc;
	if (!cJSON_GetObjectItemCaseSensitive(obj, "kind"))
		return config__fail(c, "executor.kind", "required");
	rc = config__get_enum(c, "executor", obj, "kind", kinds, "\"local\" or \"slurm\"", &kind);
	if (rc)
		return rc;
	ex->kind = kind == 1 ? EXECUTOR_SLURM : EXECUTOR_LOCAL;
	if (ex->kind == EXECUTOR_LOCAL && obj->child->next)
		return config__fail(c, "executor", "the local executor takes no other key");
	rc = config__get_str(c, "executor", obj, "partition", 0, &ex->partition);
	if (!rc)
		rc = config__get_str(c, "executor", obj, "account", 0, &ex->account);
	if (!rc)
		rc = config__get_str(c, "executor", obj, "shared_dir", 0, &ex->shared_dir);
	if (!rc && ex->shared_dir && ex->shared_dir[0] != '/')
		rc = config__fail(c, "executor.shared_dir", "must be an absolute path");
	if (!rc)
		rc = config__opt_int(c, "executor", obj, "poll_ms", 50, &ex->poll_ms);
	if (rc)
		return rc;
	v = cJSON_GetObjectItemCaseSensitive(obj, "extra_args");
	if (v) {
		strv_free(ex->extra_args);
		ex->extra_args = NULL;
		rc = config__get_strv(c, "executor.extra_args", v, 1, &ex->extra_args);
	}
	return rc;
}

static int parse_root(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	static const char *const interrupt[] = { "requeue", "fail", NULL };
	const cJSON *v;
	int64_t x = 0;
	int rc, mode = 0;

	if (!cJSON_IsObject(root))
		return config__fail(c, "pipeline", "must be a JSON object");
	rc = check_keys(c, "", root, top_keys);
	if (!rc)
		rc = get_abs_path(c, root, "repo", 1, &cfg->repo);
	if (!rc)
		rc = config__get_str(c, "", root, "base", 0, &cfg->base);
	if (!rc && !cfg->base && !(cfg->base = strdup("main")))
		rc = -ENOMEM;
	if (!rc)
		rc = get_abs_path(c, root, "recipes_dir", 0, &cfg->recipes_dir);
	if (!rc)
		rc = parse_gpus(c, root, cfg);
	if (!rc)
		rc = config__opt_int(c, "", root, "max_parallel_recipes", 1,
				     &cfg->max_parallel_recipes);
	if (!rc)
		rc = config__opt_int(c, "", root, "max_parallel_items", 0,
				     &cfg->max_parallel_items);
	if (!rc)
		rc = config__get_enum(c, "", root, "on_interrupt", interrupt,
				      "\"requeue\" or \"fail\"", &mode);
	if (rc)
		return rc;
	cfg->on_interrupt_fail = mode == 1;
	rc = config__opt_int(c, "", root, "cancel_grace_s", 0, &cfg->cancel_grace_s);
	if (rc)
		return rc;
	v = cJSON_GetObjectItemCaseSensitive(root, "max_doc_size");
	if (v) {
		rc = config__get_int(c, "max_doc_size", v, 1, MAX_DOC_LIMIT, &x);
		if (rc)
			return rc;
		cfg->max_doc_size = x;
	}
	rc = config__get_str(c, "", root, "run_as", 0, &cfg->run_as);
	if (!rc)
		rc = parse_executor(c, root, &cfg->executor);
	if (rc)
		return rc;
	if (cfg->run_as && cfg->executor.kind == EXECUTOR_SLURM)
		return config__fail(c, "run_as", "not with the slurm executor (its jobs would run "
				    "as the daemon's user)");
	rc = config__parse_stages(c, root, cfg);
	if (!rc)
		rc = config__parse_notify(c, root, cfg);
	if (rc == 0)
		rc = config__parse_probes(c, root, cfg);
	/* Last: a template's path copies every other field of cfg. */
	return rc ? rc : config__parse_templates(c, root, cfg);
}

/* Line and column (from 1) of offset off in text. */
static void position(const char *text, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int only_space(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 0;
	return 1;
}

int config_parse(const char *json, size_t len, struct pfs_config **out, char *err, size_t errlen)
{
	struct ctx c = { err, errlen, NULL };
	struct pfs_config *cfg = NULL;
	const char *end = NULL;
	cJSON *root = NULL;
	char *text;
	int line, col, rc;

	if (err && errlen)
		err[0] = '\0';
	text = malloc(len + 1);
	if (!text)
		return -ENOMEM;
	if (len)
		memcpy(text, json, len);
	text[len] = '\0';
	if (only_space(text, len)) {
		rc = config__fail(&c, "pipeline", "empty document");
		goto out;
	}
	root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 0);
	if (!root || !only_space(end, len - (size_t)(end - text))) {
		while (root && only_space(end, 1))
			end++;
		position(text, end ? (size_t)(end - text) : 0, &line, &col);
		rc = config__fail(&c, "pipeline", "%s at line %d, column %d",
				  root ? "unexpected data after the JSON value" : "malformed JSON",
				  line, col);
		goto out;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		rc = -ENOMEM;
		goto out;
	}
	c.text = text;
	cfg->max_parallel_recipes = 2;
	cfg->cancel_grace_s = 5;
	cfg->max_doc_size = PACKETFS_DEFAULT_MAX_DOC;
	rc = parse_root(&c, root, cfg);
	if (rc) {
		config_free(cfg);
		goto out;
	}
	*out = cfg;
out:
	cJSON_Delete(root);
	free(text);
	return rc;
}

void config__free_stages(struct pfs_stage *st, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(st[i].name);
		strv_free(st[i].run);
		strv_free(st[i].produces);
		free(st[i].on_needs_changes);
		free(st[i].push_remote);
		strv_free(st[i].env);
	}
}

void config_free(struct pfs_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	config__free_stages(cfg->stages, cfg->nstages);
	free(cfg->stages);
	for (i = 0; i < cfg->ntemplates; i++) {
		struct pfs_config *path = cfg->templates[i].path;

		free(cfg->templates[i].name);
		if (path && path->nstages) /* its stages[0] is cfg's plan */
			config__free_stages(path->stages + 1, path->nstages - 1);
		if (path)
			free(path->stages);
		free(path);
	}
	free(cfg->templates);
	for (i = 0; i < cfg->nroutes; i++)
		free(cfg->routes[i].route);
	free(cfg->routes);
	for (i = 0; i < cfg->nnotify; i++) {
		strv_free(cfg->notify[i].on);
		strv_free(cfg->notify[i].run);
	}
	free(cfg->notify);
	free(cfg->gpu_ids);
	free(cfg->executor.partition);
	free(cfg->executor.account);
	strv_free(cfg->executor.extra_args);
	free(cfg->executor.shared_dir);
	config__free_probes(cfg);
	free(cfg->repo);
	free(cfg->base);
	free(cfg->recipes_dir);
	free(cfg->run_as);
	free(cfg);
}
