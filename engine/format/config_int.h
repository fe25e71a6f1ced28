/*
 * config_int.h - what the files of the pipeline.json parser share:
 * config.c (the document, its top-level fields and the executor),
 * config_stage.c (the stages), config_notify.c (the notifiers) and
 * config_probe.c (the probes). Not for the rest of the engine: config.h is
 * the contract. Each reader of a field takes the path of the object it is
 * in ("" at the top level, "stages[1]", "stages[1].push") for its message,
 * and returns 0, -EINVAL after config__fail() wrote "field: why", or
 * -ENOMEM. Thread-safe (no shared state).
 */
#ifndef PACKETFS_CONFIG_INT_H
#define PACKETFS_CONFIG_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config.h"

#define PATH_MAX_LEN 160 /* longest field path in a message */

/* Where validation reports its first error. */
struct ctx {
	char *err;
	size_t errlen;
	const char *text; /* the document, NUL-terminated, once it parsed as JSON; or NULL */
};

/* config_pos.c. The line and column (from 1) in text (JSON that cJSON
 * accepted) of the field path (as config__join makes them): of its key, or
 * of its array element. 0, or -1 when the path cannot be followed. */
int config__locate(const char *text, const char *path, int *line, int *col);
/* The key of known (NULL-terminated; may be NULL) that key most likely
 * was meant to be (at most two edits away, transpositions counting one),
 * or NULL. */
const char *config__suggest(const char *key, const char *const *known);

/* Writes "path: " and the message fmt into c's buffer (when it has one),
 * followed by " at line L, column C" where c->text has the field.
 * Returns -EINVAL. */
int config__fail(struct ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* out = path "." key, or key alone at the top level. */
void config__join(char out[PATH_MAX_LEN], const char *path, const char *key);

/* A string and its place in a list, for finding repeats by sorting. */
struct slot {
	const char *s;
	size_t i;
};

/*
 * Sorts v[n] by string, then place (the first of equal strings comes
 * first) and returns the smallest place of a string equal to one at an
 * earlier place, or n when all differ: O(n log n), where comparing each
 * with all before it would be quadratic.
 */
size_t config__first_repeat(struct slot *v, size_t n);
/* The smallest place of s in v[n] (sorted by config__first_repeat), or n
 * when s is not there. */
size_t config__slot_find(const struct slot *v, size_t n, const char *s);

/* Checks that v, the value at path, is an object (the message says "must
 * be " shape otherwise) with keys from known only (NULL-terminated, fewer
 * than 32; NULL: any key goes), none repeated. */
int config__check_object(struct ctx *c, const char *path, const cJSON *v,
			 const char *const *known, const char *shape);
/* An optional object field key of obj, checked as config__check_object
 * does, into *out (NULL when absent; it belongs to obj), its path into
 * field. */
int config__get_object(struct ctx *c, const char *path, const cJSON *obj, const char *key,
		       const char *const *known, const char *shape, char field[PATH_MAX_LEN],
		       const cJSON **out);
/* v, the value at path, an integral JSON number within [min, max], into *out. */
int config__get_int(struct ctx *c, const char *path, const cJSON *v, double min, double max,
		    int64_t *out);
/* An optional int field key of obj, >= min: absent leaves *out (the
 * default) alone. */
int config__opt_int(struct ctx *c, const char *path, const cJSON *obj, const char *key, int min,
		    int *out);
/* A non-empty string field key of obj into a fresh copy in *out (caller
 * frees); absent is an error when required, else leaves *out alone. */
int config__get_str(struct ctx *c, const char *path, const cJSON *obj, const char *key,
		    int required, char **out);
/* An optional field key of obj, one of the strings in allowed
 * (NULL-terminated; wording lists them for the message): its index in
 * *index; absent leaves *index alone. */
int config__get_enum(struct ctx *c, const char *path, const cJSON *obj, const char *key,
		     const char *const *allowed, const char *wording, int *index);
/* v, the value at path, an array of non-empty strings (empty only when
 * allow_empty), into a NULL-terminated list in *out (strv_free it). */
int config__get_strv(struct ctx *c, const char *path, const cJSON *v, int allow_empty,
		     char ***out);

/* The stage array v at path list ("stages", "templates.NAME.stages") into
 * cfg->stages and cfg->nstages, with the rules across stages; with plan
 * not NULL (a template) the list is plan (borrowed: a shallow copy) and
 * then v's stages, which may be none, and a publish also needs a validate
 * stage before it (config_stage.c). */
int config__stage_list(struct ctx *c, const char *list, const cJSON *v,
		       const struct pfs_stage *plan, struct pfs_config *cfg);
/* Whether s is a valid stage or template name, [a-z][a-z0-9_-]{0,31}. */
int config__name_ok(const char *s);
/* Frees the n stages at st (not the array). */
void config__free_stages(struct pfs_stage *st, size_t n);

/* "templates", "default_template" and "routes" of root (absent: none)
 * into cfg, after everything else was read (config_template.c). */
int config__parse_templates(struct ctx *c, const cJSON *root, struct pfs_config *cfg);

/* The "stages" array of root into cfg->stages and cfg->nstages, with the
 * rules across stages (config_stage.c). */
int config__parse_stages(struct ctx *c, const cJSON *root, struct pfs_config *cfg);

/* The "notify" array of root (absent: none) into cfg->notify and
 * cfg->nnotify (config_notify.c). */
int config__parse_notify(struct ctx *c, const cJSON *root, struct pfs_config *cfg);

/* The "probes" object of root (absent: none) into cfg->probes and
 * cfg->nprobes (config_probe.c); config__free_probes frees them. */
int config__parse_probes(struct ctx *c, const cJSON *root, struct pfs_config *cfg);
void config__free_probes(struct pfs_config *cfg);

#endif
