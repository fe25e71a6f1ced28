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
 *
 * report.html's chart (view_measure_chart) reads the registry alone: the
 * counted runs of a recipe's latest verdict at the head are its lines with
 * a side just before that verdict, back to its previous line without one,
 * less the warmups (their note says "warmup run, discarded").
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

/* One metric's counted values of a batch, per side. */
struct chart_metric {
	char name[MEASURE_NAME_MAX + 1], unit[MEASURE_UNIT_MAX + 1];
	double *v[2];
	size_t n[2];
};

/* Adds value to side of metric name in *m (n entries), growing it. */
static int chart_add(struct chart_metric **m, size_t *n, const char *name, const char *unit,
		     int side, double value)
{
	struct chart_metric *c = NULL;
	double *nv;
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*m)[i].name, name) == 0)
			c = &(*m)[i];
	if (!c) {
		struct chart_metric *g = realloc(*m, (*n + 1) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		*m = g;
		c = &g[(*n)++];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", name);
		snprintf(c->unit, sizeof(c->unit), "%s", unit);
	}
	nv = realloc(c->v[side], (c->n[side] + 1) * sizeof(double));
	if (!nv)
		return -ENOMEM;
	c->v[side] = nv;
	nv[c->n[side]++] = value;
	return 0;
}

/* One metric's chart: a row of dots a side (each counted run), a bar at
 * each side's median, on one scale. */
static int chart_svg(struct buf *out, const char *recipe, const struct chart_metric *c)
{
	double lo = 0, hi = 0, med[2], *tmp;
	size_t i;
	int s, rc = 0, first = 1;

	for (s = 0; s < 2; s++)
		for (i = 0; i < c->n[s]; i++) {
			if (first || c->v[s][i] < lo)
				lo = c->v[s][i];
			if (first || c->v[s][i] > hi)
				hi = c->v[s][i];
			first = 0;
		}
	if (hi <= lo)
		hi = lo + (lo ? lo / 10 : 1);
	rc = buf_printf(out, "<p>%s: %s%s%s%s</p>\n<svg class=\"measure-chart\" "
			"xmlns=\"http://www.w3.org/2000/svg\" width=\"560\" height=\"70\" "
			"role=\"img\" aria-label=\"%s %s base and head runs\">\n",
			recipe, c->name, c->unit[0] ? " (" : "", c->unit, c->unit[0] ? ")" : "",
			recipe, c->name);
	for (s = 0; !rc && s < 2; s++) {
		double y = s ? 50 : 22;

		rc = buf_printf(out, "<text x=\"0\" y=\"%.0f\" font-size=\"12\">%s</text>\n", y + 4,
				s ? "head" : "base");
		for (i = 0; !rc && i < c->n[s]; i++)
			rc = buf_printf(out, "<circle class=\"run-%s\" cx=\"%.1f\" cy=\"%.0f\" r=\"3\" "
					"fill=\"%s\"><title>%.6g</title></circle>\n",
					s ? "head" : "base", 50 + 400 * (c->v[s][i] - lo) / (hi - lo), y,
					s ? "#c0392b" : "#2c3e50", c->v[s][i]);
		med[s] = 0;
		if (!rc && c->n[s]) {
			tmp = malloc(c->n[s] * sizeof(double));
			if (!tmp)
				return -ENOMEM;
			memcpy(tmp, c->v[s], c->n[s] * sizeof(double));
			med[s] = measure_median(tmp, c->n[s]);
			free(tmp);
			rc = buf_printf(out, "<line class=\"median-%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
					"y2=\"%.0f\" stroke=\"black\" stroke-width=\"2\"/>\n"
					"<text x=\"465\" y=\"%.0f\" font-size=\"12\">median %.4g</text>\n",
					s ? "head" : "base", 50 + 400 * (med[s] - lo) / (hi - lo),
					50 + 400 * (med[s] - lo) / (hi - lo), y - 9, y + 9, y + 4, med[s]);
		}
	}
	return rc ? rc : buf_puts(out, "</svg>\n");
}

int view_measure_chart(struct engine *e, const struct item *it, struct buf *out)
{
	char head[41], **lines = NULL;
	size_t n = 0, i, k, nm, v;
	struct chart_metric *m;
	int rc, titled = 0, s;

	if (view_head(e, it, head))
		return 0;
	rc = store_registry_lines(e->store, it->id, &lines, &n);
	if (rc)
		return rc;
	/* Each verdict line at the head whose runs just before it are measured. */
	for (v = 0; !rc && v < n; v++) {
		cJSON *o = cJSON_Parse(lines[v]), *rec = cJSON_GetObjectItemCaseSensitive(o, "recipe");
		cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
		cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "head");
		int later = 0;

		if (!cJSON_IsString(rec) || !cJSON_IsString(src) || strcmp(src->valuestring, "engine") ||
		    cJSON_GetObjectItemCaseSensitive(o, "side") || !cJSON_IsString(h) ||
		    strcmp(h->valuestring, head)) {
			cJSON_Delete(o);
			continue;
		}
		/* Only the latest verdict of the recipe at the head. */
		for (k = v + 1; k < n && !later; k++) {
			cJSON *q = cJSON_Parse(lines[k]), *qr = cJSON_GetObjectItemCaseSensitive(q, "recipe");
			cJSON *qh = cJSON_GetObjectItemCaseSensitive(q, "head");

			later = cJSON_IsString(qr) && strcmp(qr->valuestring, rec->valuestring) == 0 &&
				!cJSON_GetObjectItemCaseSensitive(q, "side") && cJSON_IsString(qh) &&
				strcmp(qh->valuestring, head) == 0;
			cJSON_Delete(q);
		}
		m = NULL;
		nm = 0;
		for (k = v; !later && !rc && k-- > 0;) {
			cJSON *q = cJSON_Parse(lines[k]), *qr = cJSON_GetObjectItemCaseSensitive(q, "recipe");
			cJSON *side = cJSON_GetObjectItemCaseSensitive(q, "side");
			cJSON *note = cJSON_GetObjectItemCaseSensitive(q, "note"), *mt, *x;
			int stop = cJSON_IsString(qr) && strcmp(qr->valuestring, rec->valuestring) == 0 &&
				   !cJSON_IsString(side);

			if (!stop && cJSON_IsString(qr) && strcmp(qr->valuestring, rec->valuestring) == 0 &&
			    !(cJSON_IsString(note) && strstr(note->valuestring, "warmup run, discarded"))) {
				s = strcmp(side->valuestring, "head") == 0;
				mt = cJSON_GetObjectItemCaseSensitive(q, "metrics");
				cJSON_ArrayForEach(x, mt) {
					cJSON *val = cJSON_GetObjectItemCaseSensitive(x, "value");
					cJSON *unit = cJSON_GetObjectItemCaseSensitive(x, "unit");

					if (cJSON_IsNumber(val) && !rc)
						rc = chart_add(&m, &nm, x->string, cJSON_IsString(unit) ?
							       unit->valuestring : "", s, val->valuedouble);
				}
			}
			cJSON_Delete(q);
			if (stop)
				break;
		}
		if (!rc && nm && !titled) {
			rc = buf_puts(out, "<h2 id=\"measurements\">Measurements</h2>\n"
					   "<p>Each dot a counted run, the bar its side's median; "
					   "validation/measurements.md has the numbers.</p>\n");
			titled = 1;
		}
		for (i = 0; !rc && i < nm; i++)
			rc = chart_svg(out, rec->valuestring, &m[i]);
		for (i = 0; i < nm; i++) {
			free(m[i].v[0]);
			free(m[i].v[1]);
		}
		free(m);
		cJSON_Delete(o);
	}
	strv_free(lines);
	return rc;
}
