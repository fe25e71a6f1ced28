/*
 * view_measure.c - validation/measurements.md (SPEC §6 "Measured
 * recipes"): for each measured recipe of the item, the section of its
 * measurements that the engine wrote into the log of its latest verdict
 * line at the branch head (pipe_measure.c, measure_report.c). Reads only.
 *
 * Design: a recipe is measured when an engine line of it has a "side"; its
 * verdict line is an engine line of it without one. The section is the
 * log's text from its "# Measurements" heading's first recipe heading to
 * the footer the engine appends ("# packetfs: status").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "namespace.h"

static const char footer[] = "\nGenerated from the measured recipes' runs in "
			     "validation/registry.jsonl — do not edit by hand.\n";

/* Appends the recipe section held in the log at evidence (item-relative). */
static int section(struct engine *e, const struct item *it, const char *evidence, struct buf *out)
{
	enum { LOG_MAX = 256 * 1024 };
	struct run r;
	char *log, *start, *end;
	ssize_t got;
	int rc = 0;

	if (store_run_by_log(e->store, it->id, evidence, &r))
		return 0;
	log = malloc(LOG_MAX + 1);
	got = log ? store_log_read(e->store, r.id, 0, log, LOG_MAX) : -ENOMEM;
	run_clear(&r);
	if (got < 0) {
		free(log);
		return got == -ENOMEM ? -ENOMEM : 0;
	}
	log[got] = '\0';
	start = strstr(log, "\n# Measurements\n\n## ");
	if (start) {
		start += strlen("\n# Measurements\n\n");
		end = strstr(start, "\n# packetfs: status");
		rc = buf_append(out, start, end ? (size_t)(end - start) + 1 : strlen(start));
		if (!rc)
			rc = buf_puts(out, "\n");
	}
	free(log);
	return rc;
}

int view_measurements(struct engine *e, const struct item *it, struct buf *out)
{
	char head[41], **lines = NULL, **names = NULL;
	cJSON **obj = NULL;
	size_t n = 0, i, k, before;
	int rc;

	if (view_head(e, it, head))
		return buf_printf(out, "# Measurements\n\nThe branch %s has no head.\n%s", it->branch,
				  footer);
	rc = store_registry_lines(e->store, it->id, &lines, &n);
	if (rc)
		return rc;
	obj = calloc(n ? n : 1, sizeof(*obj));
	names = calloc(1, sizeof(char *));
	if (!obj || !names) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_Parse(lines[i]), *rec = cJSON_GetObjectItemCaseSensitive(o, "recipe");

		obj[i] = o;
		if (cJSON_IsString(rec) && cJSON_GetObjectItemCaseSensitive(o, "side") &&
		    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "source")) &&
		    strcmp(cJSON_GetObjectItemCaseSensitive(o, "source")->valuestring, "engine") == 0) {
			for (k = 0; names[k] && strcmp(names[k], rec->valuestring) != 0; k++)
				;
			if (!names[k] && strv_push(&names, rec->valuestring)) {
				rc = -ENOMEM;
				goto out;
			}
		}
	}
	rc = buf_puts(out, "# Measurements\n\n");
	before = out->len;
	for (k = 0; !rc && names[k]; k++) {
		for (i = n; i-- > 0;) {
			cJSON *o = obj[i];
			cJSON *rec = cJSON_GetObjectItemCaseSensitive(o, "recipe");
			cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
			cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "head");
			cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "evidence");

			if (!cJSON_IsString(rec) || strcmp(rec->valuestring, names[k]) != 0 ||
			    !cJSON_IsString(src) || strcmp(src->valuestring, "engine") != 0 ||
			    cJSON_GetObjectItemCaseSensitive(o, "side") || !cJSON_IsString(h) ||
			    strcmp(h->valuestring, head) != 0 || !cJSON_IsString(ev))
				continue;
			rc = section(e, it, ev->valuestring, out);
			break;
		}
	}
	if (!rc && out->len == before)
		rc = buf_printf(out, "No measured recipe (# measure: base) has finished at the head "
				     "%.12s.\n", head);
	if (!rc)
		rc = buf_puts(out, footer);
out:
	for (i = 0; obj && i < n; i++)
		cJSON_Delete(obj[i]);
	free(obj);
	strv_free(names);
	strv_free(lines);
	return rc;
}
