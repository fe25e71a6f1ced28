/*
 * cenv.c - compute-env.md's text (cenv.h).
 *
 * Design: the host's facts come as the JSON object runenv_parse makes of
 * the environment block (the same sources and cleaning as a recipe log's
 * header), so that compute-env.md and a run's "env" never disagree on
 * what a machine is. A table cell is one line: '|' is written "\|", and
 * control characters (none reach here from runenv, but sinfo's and a
 * probe's text are only trimmed) become spaces.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cenv.h"

const char *cenv_answer_word(enum cenv_answer a)
{
	switch (a) {
	case CENV_PRESENT:
		return "present";
	case CENV_ABSENT:
		return "absent";
	case CENV_TIMED_OUT:
		return "absent (timed out)";
	default:
		return "pending";
	}
}

/* Appends s (len bytes) as one table cell's text. */
static int cell(struct buf *out, const char *s, size_t len)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '|')
			rc = buf_puts(out, "\\|");
		else
			rc = buf_append(out, ch < 0x20 || ch == 0x7f ? " " : (const char *)&s[i], 1);
	}
	return rc;
}

/*
 * Appends lead, then the number v without decimals and unit, or missing
 * when v is no number, then " | ". Returns 0 or -ENOMEM.
 */
static int number_cell(struct buf *out, const char *lead, const cJSON *v, const char *unit,
		       const char *missing)
{
	if (cJSON_IsNumber(v))
		return buf_printf(out, "%s%.0f%s | ", lead, v->valuedouble, unit);
	return buf_printf(out, "%s%s | ", lead, missing);
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The host's facts from runenv_parse's JSON. */
static int render_host(const char *json, struct buf *out)
{
	cJSON *h = cJSON_Parse(json), *gpus, *g, *v;
	int rc;

	if (!h)
		return buf_puts(out, "Not read (its environment block did not parse).\n\n");
	rc = buf_printf(out, "- OS: %s\n- Kernel: %s\n- CPU: %s\n", str(h, "os") ? str(h, "os") : "unknown",
			str(h, "kernel") ? str(h, "kernel") : "unknown",
			str(h, "cpu") ? str(h, "cpu") : "unknown");
	v = cJSON_GetObjectItemCaseSensitive(h, "cpus");
	if (rc == 0 && cJSON_IsNumber(v))
		rc = buf_printf(out, "- CPUs: %.0f\n", v->valuedouble);
	v = cJSON_GetObjectItemCaseSensitive(h, "memory_bytes");
	if (rc == 0 && cJSON_IsNumber(v))
		rc = buf_printf(out, "- Memory: %.1f GiB (%.0f bytes)\n",
				v->valuedouble / (1024.0 * 1024 * 1024), v->valuedouble);
	gpus = cJSON_GetObjectItemCaseSensitive(h, "gpus");
	if (rc == 0 && cJSON_GetArraySize(gpus) > 0) {
		rc = buf_printf(out, "- CUDA: %s\n\n| GPU | model | memory | driver |\n|---|---|---|---|\n",
				str(h, "cuda") ? str(h, "cuda") : "unknown");
		cJSON_ArrayForEach(g, gpus) {
			const cJSON *idx = cJSON_GetObjectItemCaseSensitive(g, "index");
			const cJSON *mem = cJSON_GetObjectItemCaseSensitive(g, "memory_mib");
			const char *name = str(g, "name"), *drv = str(g, "driver");

			if (rc == 0)
				rc = number_cell(out, "| ", idx, "", "?");
			if (rc == 0)
				rc = cell(out, name ? name : "", name ? strlen(name) : 0);
			if (rc == 0)
				rc = number_cell(out, " | ", mem, " MiB", "unknown");
			if (rc == 0)
				rc = cell(out, drv ? drv : "", drv ? strlen(drv) : 0);
			if (rc == 0)
				rc = buf_puts(out, " |\n");
		}
		if (rc == 0)
			rc = buf_puts(out, "\n");
	} else if (rc == 0) {
		rc = buf_puts(out, "- GPUs: none (nvidia-smi is not on PATH or did not answer)\n\n");
	}
	cJSON_Delete(h);
	return rc;
}

/* sinfo's rows (CENV_SINFO_FORMAT) as a table. */
static int render_sinfo(const char *rows, struct buf *out)
{
	const char *p = rows;
	int rc, n = 0;

	rc = buf_puts(out, "| partition | availability | nodes | state | node list | GRES |\n"
			   "|---|---|---|---|---|---|\n");
	while (rc == 0 && *p) {
		size_t len = strcspn(p, "\n"), i, start = 0;
		int field = 0;

		if (len && memchr(p, '|', len)) {
			rc = buf_puts(out, "|");
			for (i = 0; rc == 0 && i <= len && field < 6; i++) {
				if (i < len && p[i] != '|')
					continue;
				/* more fields than asked: the rest is ignored */
				rc = buf_puts(out, " ");
				if (rc == 0)
					rc = cell(out, p + start, i - start);
				if (rc == 0)
					rc = buf_puts(out, " |");
				start = i + 1;
				field++;
			}
			while (rc == 0 && field++ < 6)
				rc = buf_puts(out, "  |");
			if (rc == 0)
				rc = buf_puts(out, "\n");
			n++;
		}
		p += len + (p[len] == '\n');
	}
	if (rc == 0 && n == 0)
		rc = buf_puts(out, "| (sinfo listed no partition) | | | | | |\n");
	return rc ? rc : buf_puts(out, "\n");
}

static int render_probes(const struct cenv *c, struct buf *out)
{
	size_t i;
	int rc;

	if (c->nprobes == 0)
		return buf_puts(out, "None: pipeline.json names no \"probes\".\n");
	rc = buf_puts(out, "| probe | answer | command |\n|---|---|---|\n");
	for (i = 0; rc == 0 && i < c->nprobes; i++) {
		const struct cenv_probe *pr = &c->probes[i];

		rc = buf_puts(out, "| ");
		if (rc == 0)
			rc = cell(out, pr->name, strlen(pr->name));
		if (rc == 0)
			rc = buf_puts(out, " | ");
		if (rc == 0 && pr->answer == CENV_PRESENT)
			rc = cell(out, pr->text ? pr->text : "", pr->text ? strlen(pr->text) : 0);
		else if (rc == 0)
			rc = buf_puts(out, cenv_answer_word(pr->answer));
		if (rc == 0 && pr->answer == CENV_ABSENT && pr->text && pr->text[0]) {
			rc = buf_puts(out, " (");
			if (rc == 0)
				rc = cell(out, pr->text, strlen(pr->text));
			if (rc == 0)
				rc = buf_puts(out, ")");
		}
		if (rc == 0)
			rc = buf_puts(out, " | `");
		if (rc == 0)
			rc = cell(out, pr->command, strlen(pr->command));
		if (rc == 0)
			rc = buf_puts(out, "` |\n");
	}
	return rc;
}

int cenv_render(const struct cenv *c, struct buf *out)
{
	char when[32];
	int rc;

	rc = buf_puts(out, "# Compute environment\n\n");
	if (rc == 0 && c->started_ns == 0) {
		rc = buf_puts(out, "Not probed yet: answers pending.\n\n");
	} else if (rc == 0 && c->finished_ns == 0) {
		util_rfc3339(c->started_ns, when);
		rc = buf_printf(out, "Probing since %s: some answers are still pending.\n\n", when);
	} else if (rc == 0) {
		util_rfc3339(c->finished_ns, when);
		rc = buf_printf(out, "Probed at %s (in %.1f s).\n\n", when,
				(double)(c->finished_ns - c->started_ns) / 1e9);
	}
	if (rc == 0)
		rc = buf_puts(out, "## This host\n\n");
	if (rc == 0)
		rc = c->host ? render_host(c->host, out) : buf_puts(out, "Pending.\n\n");
	if (rc == 0 && c->slurm) {
		rc = buf_puts(out, "## Slurm\n\n");
		if (rc == 0 && c->sinfo)
			rc = render_sinfo(c->sinfo, out);
		else if (rc == 0 && c->sinfo_error)
			rc = buf_printf(out, "sinfo did not answer: %s.\n\n", c->sinfo_error);
		else if (rc == 0)
			rc = buf_puts(out, "Pending.\n\n");
	}
	if (rc == 0)
		rc = buf_puts(out, "## Probes\n\n");
	return rc ? rc : render_probes(c, out);
}

void cenv_clear(struct cenv *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nprobes; i++) {
		free(c->probes[i].name);
		free(c->probes[i].command);
		free(c->probes[i].text);
	}
	free(c->probes);
	free(c->host);
	free(c->sinfo);
	free(c->sinfo_error);
	memset(c, 0, sizeof(*c));
}
