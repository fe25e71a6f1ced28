/*
 * registry_digest.c - what evidence.md, junit.xml, the status and an
 * attestation read of validation/registry.jsonl (registry.h, "A digest of
 * a registry"): the latest engine line of each recipe and the rows of the
 * external claims, fed one line at a time; and the text of evidence.md
 * rendered from them.
 *
 * Design: a digest keeps, per recipe, the parsed object of its latest
 * engine line (the last one in registry order whose source is "engine"),
 * in the order the recipes first appeared, and the external claims as the
 * rows of their table, already rendered: lines of any other source, or
 * that do not parse, never count. Given the branch's current head, a
 * latest line recorded at another commit is stale and counts as no run at
 * all. Pure functions over strings; a digest is used by one thread at a
 * time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "registry.h"

static const char *str_of(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* s as one table cell: pipes escaped, line breaks as spaces. */
static int cell(struct buf *b, const char *s)
{
	size_t n;
	int rc = 0;

	while (*s && !rc) {
		n = strcspn(s, "|\n\r");
		if (n)
			rc = buf_append(b, s, n);
		s += n;
		if (!rc && *s)
			rc = buf_puts(b, *s++ == '|' ? "\\|" : " ");
	}
	return rc;
}

/* The separator " | ", then s as the next cell (cell()). 0 or -ENOMEM. */
static int next_cell(struct buf *b, const char *s)
{
	int rc = buf_puts(b, " | ");

	return rc ? rc : cell(b, s);
}

/*
 * The evidence cell: a link to the log. Paths are item-relative and
 * evidence.md lives in validation/, so "validation/logs/x.log" links to
 * "logs/x.log" and other relative paths go through "../"; URLs and absolute
 * paths link as they are. Text that cannot be a link target stays plain.
 */
static int evidence_cell(struct buf *b, const char *ev, int at_root)
{
	const char *target = ev, *prefix = "";
	const char *s;
	int rc;

	if (!*ev)
		return 0;
	if (strpbrk(ev, "<>()[] \t\n\r|\\`"))
		return cell(b, ev);
	if (at_root)
		; /* a path from the item directory, as the registry has it */
	else if (strncmp(ev, "validation/", 11) == 0)
		target = ev + 11;
	else if (ev[0] != '/' && !strstr(ev, "://"))
		prefix = "../";
	rc = buf_puts(b, "[");
	for (s = ev; *s && !rc; s++)
		rc = buf_append(b, s, 1);
	if (!rc)
		rc = buf_printf(b, "](%s%s)", prefix, target);
	return rc;
}

/* One row: the cells of obj (NULL: a named recipe that never ran); a stale
 * run (stale_at: the commit it ran at) says so in its Note. */
static int row(struct buf *b, const char *recipe, const cJSON *obj, int with_run,
	       const char *stale_at, int at_root)
{
	const cJSON *run = obj ? cJSON_GetObjectItemCaseSensitive(obj, "run") : NULL;
	int rc = buf_puts(b, "| ");

	if (!rc && with_run) {
		if (cJSON_IsNumber(run))
			rc = buf_printf(b, "%d", run->valueint);
		if (!rc)
			rc = buf_puts(b, " | ");
	}
	if (!rc)
		rc = cell(b, recipe);
	if (!rc && !obj)
		return buf_puts(b, " | missing | | | |\n");
	if (!rc)
		rc = next_cell(b, str_of(obj, "status"));
	if (!rc)
		rc = next_cell(b, str_of(obj, "command"));
	if (!rc)
		rc = buf_puts(b, " | ");
	if (!rc)
		rc = evidence_cell(b, str_of(obj, "evidence"), at_root);
	if (!rc)
		rc = buf_puts(b, " | ");
	if (!rc && stale_at)
		rc = buf_printf(b, "stale: ran at %.12s%s", stale_at[0] ? stale_at : "(no head)",
				str_of(obj, "note")[0] ? "; " : "");
	if (!rc)
		rc = cell(b, str_of(obj, "note"));
	if (!rc)
		rc = buf_puts(b, " |\n");
	return rc;
}

/* ---- the digest: what evidence.md and the status need of the registry ---- */

/* The latest engine line of one recipe. */
struct latest_run {
	char *recipe;
	cJSON *obj;
	const char *status; /* in obj; "" when absent */
	const char *head;   /* in obj; "" when absent */
	size_t cost;        /* obj's memory, roughly */
};

struct registry_digest {
	struct latest_run *runs; /* one per recipe with an engine line, first seen first */
	size_t nruns, capruns;
	struct buf external;     /* the rows of the external claims table */
	int at_root;             /* links from the item directory, not validation/ */
	size_t bytes;            /* memory of the objects kept, roughly */
};

struct registry_digest *registry_digest_new(void)
{
	struct registry_digest *d = calloc(1, sizeof(*d));

	if (d)
		buf_init(&d->external);
	return d;
}

void registry_digest_free(struct registry_digest *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nruns; i++) {
		free(d->runs[i].recipe);
		cJSON_Delete(d->runs[i].obj);
	}
	free(d->runs);
	buf_free(&d->external);
	free(d);
}

size_t registry_digest_bytes(const struct registry_digest *d)
{
	return sizeof(*d) + d->capruns * sizeof(*d->runs) + d->external.cap + d->bytes;
}

static struct latest_run *digest_find(const struct registry_digest *d, const char *recipe)
{
	size_t i;

	for (i = 0; i < d->nruns; i++)
		if (strcmp(d->runs[i].recipe, recipe) == 0)
			return &d->runs[i];
	return NULL;
}

/* Makes obj (parsed from a line of len bytes) the latest engine line of
 * its recipe; takes obj. 0 or -ENOMEM (obj freed). */
static int digest_engine(struct registry_digest *d, cJSON *obj, size_t len)
{
	const char *recipe = str_of(obj, "recipe");
	struct latest_run *l = digest_find(d, recipe);

	if (!l) {
		if (d->nruns == d->capruns) {
			size_t cap = d->capruns ? 2 * d->capruns : 8;
			struct latest_run *v = realloc(d->runs, cap * sizeof(*v));

			if (!v) {
				cJSON_Delete(obj);
				return -ENOMEM;
			}
			d->runs = v;
			d->capruns = cap;
		}
		l = &d->runs[d->nruns];
		l->recipe = strdup(recipe);
		if (!l->recipe) {
			cJSON_Delete(obj);
			return -ENOMEM;
		}
		l->obj = NULL;
		l->cost = 0;
		d->nruns++;
	}
	cJSON_Delete(l->obj);
	l->obj = obj;
	l->status = str_of(obj, "status");
	l->head = str_of(obj, "head");
	/* A parsed object holds a few times its text. */
	d->bytes += 4 * len - l->cost;
	l->cost = 4 * len;
	return 0;
}

int registry_digest_add(struct registry_digest *d, const char *line, size_t len)
{
	cJSON *obj = cJSON_ParseWithLength(line, len);
	int rc;

	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		return 0;
	}
	if (strcmp(str_of(obj, "source"), "engine") == 0)
		return digest_engine(d, obj, len);
	rc = row(&d->external, str_of(obj, "recipe"), obj, 1, NULL, d->at_root);
	cJSON_Delete(obj);
	return rc;
}

/* The latest engine line of name unless it is stale, or NULL. */
static const struct latest_run *digest_current(const struct registry_digest *d,
					       const char *name, const char *head)
{
	const struct latest_run *l = digest_find(d, name);

	return l && !(head && strcmp(l->head, head) != 0) ? l : NULL;
}

static size_t digest_validated(const struct registry_digest *d, char *const *names,
			       const char *head)
{
	const struct latest_run *l;
	size_t i, ok = 0;

	for (i = 0; names && names[i]; i++) {
		l = digest_current(d, names[i], head);
		if (l && strcmp(l->status, "validated") == 0)
			ok++;
	}
	return ok;
}

int registry_digest_evidence_md(const struct registry_digest *d, const char *item,
				char *const *names, const char *head, struct buf *out)
{
	const struct latest_run *l;
	size_t i, nnames = strv_len(names);
	int rc;

	/* At the item's root the evidence is a section of another document. */
	rc = buf_printf(out, "%s Evidence for %s [%zu/%zu validated]\n\n"
			"| Recipe | Status | Command | Evidence | Note |\n|---|---|---|---|---|\n",
			d->at_root ? "##" : "#", item, digest_validated(d, names, head), nnames);
	for (i = 0; !rc && i < nnames; i++) {
		l = digest_find(d, names[i]);
		rc = row(out, names[i], l ? l->obj : NULL, 0,
			 l && head && strcmp(l->head, head) != 0 ? l->head : NULL, d->at_root);
	}
	if (!rc && d->external.len)
		rc = buf_printf(out, "\n%s External claims (not counted)\n\n"
			      "| Run | Recipe | Status | Command | Evidence | Note |\n"
			      "|---|---|---|---|---|---|\n", d->at_root ? "###" : "##");
	if (!rc && d->external.len)
		rc = buf_append(out, d->external.data, d->external.len);
	if (!rc)
		rc = buf_puts(out, "\nGenerated from validation/registry.jsonl"
			      " — do not edit by hand.\n");
	return rc;
}

int registry_digest_latest(const struct registry_digest *d, const char *name, const char *head,
			   struct registry_latest *out)
{
	const struct latest_run *l = digest_current(d, name, head);
	const cJSON *v;

	if (!l)
		return 0;
	memset(out, 0, sizeof(*out));
	v = cJSON_GetObjectItemCaseSensitive(l->obj, "run");
	out->run = cJSON_IsNumber(v) ? v->valueint : 0;
	out->status = l->status;
	out->command = str_of(l->obj, "command");
	out->evidence = str_of(l->obj, "evidence");
	out->note = str_of(l->obj, "note");
	out->head = l->head;
	out->started_at = str_of(l->obj, "started_at");
	out->finished_at = str_of(l->obj, "finished_at");
	out->log_sha256 = str_of(l->obj, "log_sha256");
	v = cJSON_GetObjectItemCaseSensitive(l->obj, "duration_s");
	out->duration_s = cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(l->obj, "exit_code");
	out->has_exit_code = cJSON_IsNumber(v);
	out->exit_code = out->has_exit_code ? v->valueint : 0;
	v = cJSON_GetObjectItemCaseSensitive(l->obj, "signal");
	out->signal = cJSON_IsNumber(v) ? v->valueint : 0;
	return 1;
}

void registry_digest_summary(const struct registry_digest *d, char *const *names,
			     const char *head, char out[64])
{
	snprintf(out, 64, "%zu/%zu validated", digest_validated(d, names, head), strv_len(names));
}

/* A digest of lines (caller frees), its links from the item directory
 * with at_root, or NULL on ENOMEM. */
static struct registry_digest *digest_of(char *const *lines, size_t nlines, int at_root)
{
	struct registry_digest *d = registry_digest_new();
	size_t i;

	if (d)
		d->at_root = at_root;
	for (i = 0; d && i < nlines; i++) {
		if (lines[i] && registry_digest_add(d, lines[i], strlen(lines[i]))) {
			registry_digest_free(d);
			d = NULL;
		}
	}
	return d;
}

/* The evidence of lines[0..nlines-1] into out, as evidence.md (section 0)
 * or as a section of change-validation.md (section 1): see registry.h. */
static int evidence_text(const char *item, char *const *names, char *const *lines,
			 size_t nlines, const char *head, int section, struct buf *out)
{
	struct registry_digest *d = digest_of(lines, nlines, section);
	int rc;

	if (!d)
		return -ENOMEM;
	rc = registry_digest_evidence_md(d, item, names, head, out);
	registry_digest_free(d);
	return rc;
}

int registry_evidence_md(const char *item, char *const *names, char *const *lines, size_t nlines,
			 const char *head, struct buf *out)
{
	return evidence_text(item, names, lines, nlines, head, 0, out);
}

int registry_evidence_section(const char *item, char *const *names, char *const *lines,
			      size_t nlines, const char *head, struct buf *out)
{
	return evidence_text(item, names, lines, nlines, head, 1, out);
}

void registry_evidence_summary(char *const *names, char *const *lines, size_t nlines,
			       const char *head, char out[64])
{
	struct registry_digest *d = digest_of(lines, nlines, 0);

	if (d) {
		registry_digest_summary(d, names, head, out);
		registry_digest_free(d);
	} else {
		snprintf(out, 64, "0/%zu validated", strv_len(names));
	}
}
