/*
 * registry.c - validation/registry.jsonl lines, the verdict and the review
 * gate's evidence check (see registry.h); registry_digest.c renders
 * validation/evidence.md.
 *
 * Design: every line is handled with cJSON. An external line is checked
 * against the field table below, which is schema/registry-line.schema.json
 * in C: a known key with the right type (unknown and repeated keys are
 * refused), "recipe" and "status" required. It is then re-serialised with
 * "source" forced to "external", so a line can never pass itself off as the
 * engine's. The derived views parse the registry once per call and look up,
 * for each named recipe, its latest engine line (the last one in registry
 * order whose source is "engine") by bisection of an index of those lines
 * sorted by recipe, so that n names over m lines cost O((n + m) log m);
 * lines of any other source, or that do not parse, never count. Given the branch's current head, a latest line
 * recorded at another commit is stale and counts as no run at all.
 *
 * Engine lines round duration_s to milliseconds so that the JSON stays
 * short. Pure functions over strings: thread-safe.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "registry.h"

enum kind {
	K_INT,    /* integer >= 0 */
	K_NAME,   /* non-empty string */
	K_STRING, /* string */
	K_STATUS, /* one of statuses[] */
	K_EXIT,   /* integer or null */
	K_NUMBER, /* number >= 0 */
	K_GPUS,   /* array of integers >= 0 */
	K_SOURCE, /* "engine" or "external" */
	K_BY,     /* {"stage": string, "pid": int >= 0, "uid": int >= 0, "via": VIA (optional)} */
	K_OBJECT, /* an object */
};

static const struct field {
	const char *key;
	enum kind kind;
} fields[] = {
	{ "run", K_INT },           { "recipe", K_NAME },       { "status", K_STATUS },
	{ "command", K_STRING },    { "evidence", K_STRING },   { "note", K_STRING },
	{ "exit_code", K_EXIT },    { "signal", K_INT },
	{ "started_at", K_STRING }, { "finished_at", K_STRING },
	{ "duration_s", K_NUMBER }, { "iteration", K_INT },     { "head", K_STRING },
	{ "gpus", K_GPUS },         { "log_sha256", K_STRING }, { "source", K_SOURCE },
	{ "executor", K_STRING },   { "job_id", K_STRING },     { "recorded_by", K_BY },
	{ "env", K_OBJECT },
};

static const char *const vias[] = {"ancestry", "credential", "both", "none", NULL};

static const char *const statuses[] = {
	"validated", "failing", "blocked", "timed_out", "cancelled", "interrupted", NULL,
};

static int set_err(char *err, size_t errlen, const char *key, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%.64s%s%s", key ? key : "", key ? ": " : "", why);
	return -EINVAL;
}

static int is_int(const cJSON *v, double min)
{
	return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
	       v->valuedouble >= min && v->valuedouble <= INT_MAX;
}

static int one_of(const cJSON *v, const char *const *allowed)
{
	size_t i;

	for (i = 0; cJSON_IsString(v) && allowed[i]; i++)
		if (strcmp(v->valuestring, allowed[i]) == 0)
			return 1;
	return 0;
}

/* NULL when v is right for kind, otherwise why it is not. */
static const char *check_value(const cJSON *v, enum kind kind)
{
	static const char *const sources[] = { "engine", "external", NULL };
	const cJSON *e;

	switch (kind) {
	case K_INT:
		return is_int(v, 0) ? NULL : "must be an integer >= 0";
	case K_NAME:
		return cJSON_IsString(v) && v->valuestring[0] ? NULL : "must be a non-empty string";
	case K_STRING:
		return cJSON_IsString(v) ? NULL : "must be a string";
	case K_STATUS:
		return one_of(v, statuses) ? NULL : "must be one of validated, failing, blocked, "
		       "timed_out, cancelled, interrupted";
	case K_EXIT:
		return cJSON_IsNull(v) || is_int(v, INT_MIN) ? NULL : "must be an integer or null";
	case K_NUMBER:
		return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 ? NULL
		       : "must be a number >= 0";
	case K_GPUS:
		if (!cJSON_IsArray(v))
			return "must be an array of integers >= 0";
		cJSON_ArrayForEach(e, v)
			if (!is_int(e, 0))
				return "must be an array of integers >= 0";
		return NULL;
	case K_SOURCE:
		return one_of(v, sources) ? NULL : "must be \"engine\" or \"external\"";
	case K_BY: {
		const cJSON *via = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "via") : NULL;

		if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 3 + (via != NULL) ||
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "stage")) ||
		    !is_int(cJSON_GetObjectItemCaseSensitive(v, "pid"), 0) ||
		    !is_int(cJSON_GetObjectItemCaseSensitive(v, "uid"), 0) ||
		    (via && !one_of(via, vias)))
			return "must be an object {\"stage\": string, \"pid\": int, \"uid\": int, "
			       "\"via\": \"ancestry\"|\"credential\"|\"both\"|\"none\" (optional)}";
		return NULL;
	}
	case K_OBJECT:
		return cJSON_IsObject(v) ? NULL : "must be an object";
	}
	return "unknown type";
}

static int check_object(const cJSON *obj, char *err, size_t errlen)
{
	const cJSON *k, *prev;
	const char *why;
	size_t i;

	for (k = obj->child; k; k = k->next) {
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strcmp(fields[i].key, k->string) == 0)
				break;
		if (i == sizeof(fields) / sizeof(fields[0]) &&
		    (strcmp(k->string, "side") == 0 || strcmp(k->string, "metrics") == 0))
			return set_err(err, errlen, k->string,
				       "only the engine writes it, on lines of measured runs");
		if (i == sizeof(fields) / sizeof(fields[0]))
			return set_err(err, errlen, k->string, "unknown key");
		for (prev = obj->child; prev != k; prev = prev->next)
			if (strcmp(prev->string, k->string) == 0)
				return set_err(err, errlen, k->string, "duplicate key");
		why = check_value(k, fields[i].kind);
		if (why)
			return set_err(err, errlen, k->string, why);
	}
	if (!cJSON_GetObjectItemCaseSensitive(obj, "recipe"))
		return set_err(err, errlen, "recipe", "required");
	if (!cJSON_GetObjectItemCaseSensitive(obj, "status"))
		return set_err(err, errlen, "status", "required");
	return 0;
}

static int only_space(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

int registry_check_external(const char *line, size_t len, char **out, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *obj = NULL, *src;
	char *text, msg[96];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (len > REGISTRY_LINE_MAX) {
		snprintf(msg, sizeof(msg), "line too long (%zu bytes, at most %d)", len,
			 REGISTRY_LINE_MAX);
		set_err(err, errlen, NULL, msg);
		return -EFBIG;
	}
	if (len && (memchr(line, '\n', len) || memchr(line, '\0', len)))
		return set_err(err, errlen, NULL, "a registry line must be one line of text");
	if (only_space(line, len))
		return set_err(err, errlen, NULL, "empty line");
	text = malloc(len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, line, len);
	text[len] = '\0';
	obj = cJSON_ParseWithLengthOpts(text, len + 1, &end, 0);
	if (!obj) {
		snprintf(msg, sizeof(msg), "not valid JSON (column %zu)",
			 end ? (size_t)(end - text) + 1 : (size_t)1);
		rc = set_err(err, errlen, NULL, msg);
		goto out;
	}
	if (!only_space(end, len - (size_t)(end - text))) {
		snprintf(msg, sizeof(msg), "unexpected data after the JSON object (column %zu)",
			 (size_t)(end - text) + 1);
		rc = set_err(err, errlen, NULL, msg);
		goto out;
	}
	if (!cJSON_IsObject(obj)) {
		rc = set_err(err, errlen, NULL, "a registry line must be a JSON object");
		goto out;
	}
	rc = check_object(obj, err, errlen);
	if (rc)
		goto out;
	src = cJSON_CreateString("external");
	if (!src) {
		rc = -ENOMEM;
		goto out;
	}
	if (cJSON_GetObjectItemCaseSensitive(obj, "source"))
		rc = cJSON_ReplaceItemInObjectCaseSensitive(obj, "source", src) ? 0 : -ENOMEM;
	else
		rc = cJSON_AddItemToObject(obj, "source", src) ? 0 : -ENOMEM;
	if (rc) {
		cJSON_Delete(src);
		goto out;
	}
	*out = cJSON_PrintUnformatted(obj);
	if (!*out)
		rc = -ENOMEM;
out:
	cJSON_Delete(obj);
	free(text);
	return rc;
}

static int add_str(cJSON *obj, const char *key, const char *val)
{
	return cJSON_AddStringToObject(obj, key, val ? val : "") ? 0 : -ENOMEM;
}

static int add_num(cJSON *obj, const char *key, double val)
{
	return cJSON_AddNumberToObject(obj, key, val) ? 0 : -ENOMEM;
}

/*
 * Adds under key the JSON object that text (NUL-terminated, may be NULL)
 * holds. NULL or empty text, text that is not a JSON object, or no memory
 * add nothing: the line is written without the key.
 */
static void add_object_text(cJSON *obj, const char *key, const char *text)
{
	cJSON *val = text && text[0] ? cJSON_Parse(text) : NULL;

	if (!cJSON_IsObject(val) || !cJSON_AddItemToObject(obj, key, val))
		cJSON_Delete(val);
}

static int add_gpus(cJSON *obj, const int *gpus, size_t n)
{
	cJSON *arr = n ? cJSON_CreateIntArray(gpus, (int)n) : cJSON_CreateArray();

	if (!arr || !cJSON_AddItemToObject(obj, "gpus", arr)) {
		cJSON_Delete(arr);
		return -ENOMEM;
	}
	return 0;
}

/* NULL strings are written as "". Field order is the one of SPEC §6. */
char *registry_engine_line(const struct registry_run *r)
{
	cJSON *obj = cJSON_CreateObject();
	char *out = NULL;
	int rc;

	if (!obj)
		return NULL;
	rc = add_num(obj, "run", r->run);
	rc = rc ? rc : add_str(obj, "recipe", r->recipe);
	rc = rc ? rc : add_str(obj, "status", r->status);
	rc = rc ? rc : add_str(obj, "command", r->command);
	rc = rc ? rc : add_str(obj, "evidence", r->evidence);
	rc = rc ? rc : add_str(obj, "note", r->note);
	if (!rc && r->has_exit_code)
		rc = add_num(obj, "exit_code", r->exit_code);
	else if (!rc && !cJSON_AddNullToObject(obj, "exit_code"))
		rc = -ENOMEM;
	if (!rc && r->signal > 0)
		rc = add_num(obj, "signal", r->signal);
	rc = rc ? rc : add_str(obj, "started_at", r->started_at);
	rc = rc ? rc : add_str(obj, "finished_at", r->finished_at);
	rc = rc ? rc : add_num(obj, "duration_s", round(r->duration_s * 1000) / 1000);
	rc = rc ? rc : add_num(obj, "iteration", r->iteration);
	rc = rc ? rc : add_str(obj, "head", r->head);
	rc = rc ? rc : add_gpus(obj, r->gpus, r->ngpus);
	rc = rc ? rc : add_str(obj, "log_sha256", r->log_sha256);
	rc = rc ? rc : add_str(obj, "source", "engine");
	rc = rc ? rc : add_str(obj, "executor", r->executor);
	if (!rc && r->job_id && r->job_id[0])
		rc = add_str(obj, "job_id", r->job_id);
	if (!rc && r->recorded_by_stage) {
		cJSON *by = cJSON_AddObjectToObject(obj, "recorded_by");

		rc = by ? add_str(by, "stage", r->recorded_by_stage) : -ENOMEM;
		rc = rc ? rc : add_num(by, "pid", (int)r->recorded_by_pid);
		rc = rc ? rc : add_num(by, "uid", (int)r->recorded_by_uid);
		if (!rc && r->recorded_by_via)
			rc = add_str(by, "via", r->recorded_by_via);
	}
	if (!rc)
		add_object_text(obj, "env", r->env_json);
	if (!rc && r->side)
		rc = add_str(obj, "side", r->side);
	if (!rc)
		add_object_text(obj, "metrics", r->metrics_json);
	if (!rc)
		out = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	return out;
}

/* One parsed registry line. */
struct entry {
	cJSON *obj;          /* NULL when the line does not parse as an object */
	const char *recipe;  /* "" when absent */
	const char *status;  /* "" when absent */
	const char *head;    /* "" when absent */
	int engine;          /* "source": "engine" */
};

static const char *str_of(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static void entries_free(struct entry *e, size_t n)
{
	size_t i;

	for (i = 0; e && i < n; i++)
		cJSON_Delete(e[i].obj);
	free(e);
}

/* Parses the lines into *out (n entries, caller frees with entries_free). */
static int entries_load(char *const *lines, size_t n, struct entry **out)
{
	struct entry *e = calloc(n ? n : 1, sizeof(*e));
	size_t i;

	if (!e)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		e[i].recipe = e[i].status = e[i].head = "";
		if (!lines[i])
			continue;
		e[i].obj = cJSON_Parse(lines[i]);
		if (!cJSON_IsObject(e[i].obj)) {
			cJSON_Delete(e[i].obj);
			e[i].obj = NULL;
			continue;
		}
		e[i].recipe = str_of(e[i].obj, "recipe");
		e[i].status = str_of(e[i].obj, "status");
		e[i].head = str_of(e[i].obj, "head");
		e[i].engine = strcmp(str_of(e[i].obj, "source"), "engine") == 0;
	}
	*out = e;
	return 0;
}

/* The latest engine entry of each recipe, sorted by recipe name: a name
 * is looked up by bisection, not by a walk over every line (a plan may
 * name many recipes and a registry hold many lines). */
struct latest_index {
	const struct entry **v;
	size_t n;
};

/* By recipe, and of one recipe's entries the later first. */
static int later_first(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a, *y = *(const struct entry *const *)b;
	int c = strcmp(x->recipe, y->recipe);

	return c ? c : (x < y) - (x > y);
}

/* Indexes the engine entries of e[n] into *ix (free ix->v). 0 or -ENOMEM. */
static int index_load(const struct entry *e, size_t n, struct latest_index *ix)
{
	size_t i, k;

	ix->n = 0;
	ix->v = malloc((n ? n : 1) * sizeof(*ix->v));
	if (!ix->v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (e[i].engine)
			ix->v[ix->n++] = &e[i];
	qsort(ix->v, ix->n, sizeof(*ix->v), later_first);
	for (i = k = 0; i < ix->n; i++)
		if (k == 0 || strcmp(ix->v[i]->recipe, ix->v[k - 1]->recipe) != 0)
			ix->v[k++] = ix->v[i];
	ix->n = k;
	return 0;
}

static int by_recipe(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct entry *const *)elem)->recipe);
}

/* The latest engine entry for recipe name, or NULL. */
static const struct entry *latest(const struct latest_index *ix, const char *name)
{
	const struct entry **l = ix->n ? bsearch(name, ix->v, ix->n, sizeof(*ix->v), by_recipe)
				       : NULL;

	return l ? *l : NULL;
}

/* Whether entry l ran at a commit other than head (never, for head NULL). */
static int stale(const struct entry *l, const char *head)
{
	return head && strcmp(l->head, head) != 0;
}

/* The latest engine entry for name unless it is stale, or NULL. */
static const struct entry *current(const struct latest_index *ix, const char *name,
				   const char *head)
{
	const struct entry *l = latest(ix, name);

	return l && !stale(l, head) ? l : NULL;
}

const char *registry_verdict(char *const *names, char *const *lines, size_t nlines,
			     const char *head)
{
	const char *verdict = "pass";
	struct latest_index ix;
	const struct entry *l;
	struct entry *e;
	size_t i;

	if (!names || !names[0] || entries_load(lines, nlines, &e))
		return "blocked";
	if (index_load(e, nlines, &ix)) {
		entries_free(e, nlines);
		return "blocked";
	}
	for (i = 0; names[i]; i++) {
		l = current(&ix, names[i], head);
		if (l && (strcmp(l->status, "failing") == 0 ||
			  strcmp(l->status, "timed_out") == 0)) {
			verdict = "fail";
			break;
		}
		if (!l || strcmp(l->status, "validated") != 0)
			verdict = "blocked";
	}
	free(ix.v);
	entries_free(e, nlines);
	return verdict;
}

int registry_gate(char *const *names, char *const *lines, size_t nlines, const char *head,
		  char *reason, size_t reasonlen)
{
	const struct entry *l, *first_l = NULL;
	const char *first = NULL;
	struct latest_index ix;
	struct entry *e;
	size_t i, missing = 0;
	char more[48] = "";
	int rc;

	if (reason && reasonlen)
		reason[0] = '\0';
	rc = entries_load(lines, nlines, &e);
	if (rc)
		return rc;
	rc = index_load(e, nlines, &ix);
	if (rc) {
		entries_free(e, nlines);
		return rc;
	}
	for (i = 0; names && names[i]; i++) {
		/* Only the latest engine run speaks for a recipe: validated
		 * once and failing since is failing. */
		l = latest(&ix, names[i]);
		if (l && head && !stale(l, head) && strcmp(l->status, "validated") == 0)
			continue;
		if (!missing++) {
			first = names[i];
			first_l = l && head && !stale(l, head) ? l : NULL;
		}
	}
	if (missing && reason && reasonlen) {
		if (missing > 1)
			snprintf(more, sizeof(more), " (and %zu more)", missing - 1);
		if (first_l)
			snprintf(reason, reasonlen, "%s: latest run at %.12s is %s%s", first, head,
				 first_l->status[0] ? first_l->status : "without status", more);
		else
			snprintf(reason, reasonlen, "%s: no validated run at %.12s%s", first,
				 head ? head : "(no head)", more);
	}
	free(ix.v);
	entries_free(e, nlines);
	return missing ? -EAGAIN : 0;
}
