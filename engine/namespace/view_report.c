/*
 * view_report.c - MOUNT/ITEM/report.html (SPEC §3, §9): the packet as one
 * self-contained page (view_html.h).
 *
 * The page holds, in order: the item's title and its status facts (state,
 * stage, iteration, head, verdict, assessment, evidence, what runs, round,
 * last error, updated), read from the item's status.json rendering so that
 * they are what status says; links to the other views; the stage timeline
 * (view_timeline.c); the evidence table, converted from evidence.md's
 * Markdown (the same rows, cells and links, so the two never disagree);
 * change.diff in a <pre>, each line classed by its kind (added, removed,
 * hunk, file header), at most DIFF_SHOWN bytes of it; and a link to every
 * log with its run's status, duration and size.
 *
 * Links are relative to the item directory: the page reads the same on
 * the mount, under .archive/ and in an exported copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "view_html.h"

/* The most of change.diff the page shows; change.diff holds all of it. */
#define DIFF_SHOWN (1u << 20)

/* The string member key of o, or "". */
static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* One row of the facts table; an empty value is left out unless always. */
static int fact(struct buf *out, const char *key, const char *value, const char *cls, int always)
{
	int rc;

	if (!value[0] && !always)
		return 0;
	rc = buf_printf(out, "<tr><th>%s</th><td%s%s%s>", key, cls ? " class=\"" : "",
			cls ? cls : "", cls ? "\"" : "");
	if (rc == 0)
		rc = html_text(out, value);
	return rc ? rc : buf_puts(out, "</td></tr>\n");
}

/* A facts row taken as it stands from status.json: label, key, cls and always
 * as for fact(). */
struct plain_fact {
	const char *label, *key, *cls;
	int always;
};

/* The rows f[0..n) in order, each from st[key]. Returns 0, or the first
 * error of fact(). */
static int plain_facts(struct buf *out, const cJSON *st, const struct plain_fact *f, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = fact(out, f[i].label, jstr(st, f[i].key), f[i].cls, f[i].always);
	return rc;
}

/* The row of a judgement (key "verdict" or "assessment"), marked stale when
 * status.json says key_stale. Returns 0 or the error of fact(). */
static int judgement_fact(struct buf *out, const cJSON *st, const char *key)
{
	char stale[64], line[256];

	snprintf(stale, sizeof(stale), "%s_stale", key);
	snprintf(line, sizeof(line), "%s%s", jstr(st, key),
		 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, stale))
			 ? " (stale: the head moved)" : "");
	return fact(out, key, line, NULL, 0);
}

/* The heading and the facts table, from the item's status.json. */
static int facts(struct buf *out, const cJSON *st)
{
	/* From "template" on, the path the plan chose (SPEC §5 "Routes and
	 * templates"). */
	static const struct plain_fact tail[] = {
		{ "disposition", "disposition", NULL, 0 },
		{ "template", "template", NULL, 0 },
		{ "route", "route", NULL, 0 },
		{ "engine", "engine", NULL, 0 },
		{ "review request", "review_request", NULL, 0 },
		{ "last error", "last_error", "err", 0 },
		{ "updated", "updated", NULL, 1 },
	};
	char cls[48], stcls[32], line[256];
	const struct plain_fact head[] = {
		{ "item", "item", NULL, 1 },
		{ "state", "state", cls, 1 },
		{ "stage", "stage", NULL, 1 },
	};
	const cJSON *v;
	int rc;

	html_status_class(jstr(st, "state"), stcls);
	snprintf(cls, sizeof(cls), "st %s", stcls);
	rc = buf_puts(out, "<h1>");
	if (rc == 0)
		rc = html_text(out, jstr(st, "title")[0] ? jstr(st, "title") : jstr(st, "item"));
	if (rc == 0)
		rc = buf_puts(out, "</h1>\n<table class=\"facts\">\n");
	if (rc == 0)
		rc = plain_facts(out, st, head, sizeof(head) / sizeof(head[0]));
	v = cJSON_GetObjectItemCaseSensitive(st, "iteration");
	snprintf(line, sizeof(line), "%d", cJSON_IsNumber(v) ? v->valueint : 0);
	if (rc == 0)
		rc = fact(out, "iteration", line, NULL, 1);
	snprintf(line, sizeof(line), "%s (%s)", jstr(st, "branch"), jstr(st, "base"));
	if (rc == 0)
		rc = fact(out, "branch", line, NULL, 1);
	if (rc == 0)
		rc = fact(out, "head", jstr(st, "head"), NULL, 1);
	if (rc == 0)
		rc = judgement_fact(out, st, "verdict");
	if (rc == 0)
		rc = judgement_fact(out, st, "assessment");
	if (rc == 0)
		rc = fact(out, "evidence", jstr(st, "evidence"), NULL, 1);
	if (rc == 0)
		rc = fact(out, "scope", jstr(st, "scope"),
			  strstr(jstr(st, "scope"), "kept") || strncmp(jstr(st, "scope"), "invalid", 7) == 0
				  ? "err" : NULL, 0);
	if (rc == 0)
		rc = fact(out, "running", jstr(st, "running"), NULL, 0);
	v = cJSON_GetObjectItemCaseSensitive(st, "round");
	line[0] = '\0';
	if (cJSON_IsNumber(v) && v->valueint > 0)
		snprintf(line, sizeof(line), "%d", v->valueint);
	if (rc == 0)
		rc = fact(out, "round", line, NULL, 0);
	if (rc == 0)
		rc = plain_facts(out, st, tail, sizeof(tail) / sizeof(tail[0]));
	if (rc == 0)
		rc = buf_puts(out, "</table>\n<p class=\"note\">Files: "
			      "<a href=\"status\">status</a>, <a href=\"change.diff\">change.diff</a>, "
			      "<a href=\"validation/evidence.md\">validation/evidence.md</a>, "
			      "<a href=\"validation/scope.md\">validation/scope.md</a>, "
			      "<a href=\"validation/registry.jsonl\">validation/registry.jsonl</a>, "
			      "<a href=\"events\">events</a>.</p>\n");
	return rc;
}

/* ---- evidence.md as HTML ---- */

/* The cells of a Markdown table row (line: len bytes starting with '|'),
 * as evidence.md writes them: separated by '|', a '|' inside a cell
 * written "\|", each cell padded by spaces. Into *cells (strv_free). */
static int row_cells(const char *line, size_t len, char ***cells)
{
	struct buf cell;
	size_t i = 1;
	int rc = 0;

	*cells = NULL;
	buf_init(&cell);
	while (rc == 0 && i < len) {
		if (line[i] == '\\' && i + 1 < len && line[i + 1] == '|') {
			rc = buf_append(&cell, "|", 1);
			i += 2;
			continue;
		}
		if (line[i] != '|') {
			rc = buf_append(&cell, line + i++, 1);
			continue;
		}
		{
			const char *s = cell.data ? cell.data : "";
			size_t a = 0, b = cell.len;

			while (a < b && s[a] == ' ')
				a++;
			while (b > a && s[b - 1] == ' ')
				b--;
			cell.len = b;
			if (cell.data)
				cell.data[b] = '\0';
			rc = strv_push(cells, cell.data ? cell.data + a : "");
			cell.len = 0;
			i++;
		}
	}
	buf_free(&cell);
	if (rc) {
		strv_free(*cells);
		*cells = NULL;
	}
	return rc;
}

/* An Evidence cell: evidence.md's "[PATH](TARGET)" links to the log, with
 * TARGET relative to validation/; as a link relative to the item
 * directory when TARGET is a relative path, as text otherwise. */
static int evidence_cell(struct buf *out, const char *c)
{
	const char *mid = strstr(c, "](");
	size_t n = strlen(c);
	char target[4096];
	int rc;

	if (c[0] != '[' || !mid || n < 4 || c[n - 1] != ')' ||
	    (size_t)(n - (size_t)(mid + 2 - c) - 1) >= sizeof(target) - 16)
		return html_text(out, c);
	snprintf(target, sizeof(target), "%.*s", (int)(n - (size_t)(mid + 2 - c) - 1), mid + 2);
	if (target[0] == '/' || strstr(target, "://") || strchr(target, ':'))
		return html_text_n(out, c + 1, (size_t)(mid - c - 1));
	if (strncmp(target, "../", 3) == 0)
		rc = html_link_start(out, target + 3, "");
	else
		rc = html_link_start(out, "validation/", target);
	if (rc == 0)
		rc = html_text_n(out, c + 1, (size_t)(mid - c - 1));
	return rc ? rc : buf_puts(out, "</a>");
}

/* One table row of cells; head: a header row. The columns named Status
 * and Evidence (in the header) get their classes and links; cols[0..2]
 * are the places of Status, Evidence and Note (-1: none). A status whose
 * Note says the run is stale is shown so, not in its status's colour. */
static int table_row(struct buf *out, char **cells, int head, int cols[3])
{
	size_t i, n;
	int rc = buf_puts(out, "<tr>"), stale = 0;

	for (n = 0; cells[n]; n++)
		;
	if (!head && cols[2] >= 0 && (size_t)cols[2] < n)
		stale = strncmp(cells[cols[2]], "stale:", 6) == 0;
	for (i = 0; rc == 0 && cells[i]; i++) {
		char cls[32];

		if (head) {
			if (strcmp(cells[i], "Status") == 0)
				cols[0] = (int)i;
			if (strcmp(cells[i], "Evidence") == 0)
				cols[1] = (int)i;
			if (strcmp(cells[i], "Note") == 0)
				cols[2] = (int)i;
			rc = buf_puts(out, "<th>");
			if (rc == 0)
				rc = html_text(out, cells[i]);
			if (rc == 0)
				rc = buf_puts(out, "</th>");
			continue;
		}
		html_status_class(stale && (int)i == cols[0] ? "stale" : cells[i], cls);
		if ((int)i == cols[0])
			rc = buf_printf(out, "<td class=\"st %s\">", cls);
		else
			rc = buf_puts(out, (int)i == cols[1] ? "<td>" : "<td><code>");
		if (rc == 0)
			rc = (int)i == cols[1] ? evidence_cell(out, cells[i]) : html_text(out, cells[i]);
		if (rc == 0 && stale && (int)i == cols[0])
			rc = buf_puts(out, " (stale)");
		if (rc == 0)
			rc = buf_puts(out, (int)i == cols[1] || (int)i == cols[0] ? "</td>"
										 : "</code></td>");
	}
	return rc ? rc : buf_puts(out, "</tr>\n");
}

/* evidence.md (md: its text) as headings, tables and paragraphs. */
static int evidence_html(struct buf *out, const char *md)
{
	const char *p = md, *eol;
	int rc = 0, in_table = 0, rows = 0, cols[3] = {-1, -1, -1};

	while (rc == 0 && *p) {
		size_t len;

		eol = strchr(p, '\n');
		len = eol ? (size_t)(eol - p) : strlen(p);
		if (len && p[0] == '|') {
			char **cells = NULL;

			if (!in_table) {
				rc = buf_puts(out, "<table class=\"evidence\">\n");
				in_table = 1, rows = 0, cols[0] = cols[1] = cols[2] = -1;
			}
			if (rc == 0 && strncmp(p, "|---", 4) != 0) {
				rc = row_cells(p, len, &cells);
				if (rc == 0)
					rc = table_row(out, cells, rows++ == 0, cols);
				strv_free(cells);
			}
		} else {
			if (in_table)
				rc = buf_puts(out, "</table>\n");
			in_table = 0;
			if (rc == 0 && len && p[0] == '#') {
				size_t h = 0;

				while (h < len && p[h] == '#')
					h++;
				while (h < len && p[h] == ' ')
					h++;
				rc = buf_puts(out, "<h3>");
				if (rc == 0)
					rc = html_text_n(out, p + h, len - h);
				if (rc == 0)
					rc = buf_puts(out, "</h3>\n");
			} else if (rc == 0 && len) {
				rc = buf_puts(out, "<p class=\"note\">");
				if (rc == 0)
					rc = html_text_n(out, p, len);
				if (rc == 0)
					rc = buf_puts(out, "</p>\n");
			}
		}
		p = eol ? eol + 1 : p + len;
	}
	if (rc == 0 && in_table)
		rc = buf_puts(out, "</table>\n");
	return rc;
}

/* ---- change.diff ---- */

static int diff_html(struct buf *out, const char *diff, size_t len)
{
	size_t shown = len > DIFF_SHOWN ? DIFF_SHOWN : len, at = 0;
	int rc, in_hunk = 0;

	if (!len)
		return buf_puts(out, "<p class=\"note\">No change on the item branch.</p>\n");
	rc = buf_puts(out, "<pre class=\"diff\">");
	while (rc == 0 && at < shown) {
		const char *p = diff + at, *nl = memchr(p, '\n', len - at);
		size_t n = nl ? (size_t)(nl - p) : len - at;
		const char *cls = NULL;

		/* Between a "diff --git" line and the first hunk: the file's
		 * header; in a hunk, lines are added, removed or context. */
		if (n >= 11 && strncmp(p, "diff --git ", 11) == 0)
			in_hunk = 0;
		else if (n >= 2 && strncmp(p, "@@", 2) == 0)
			in_hunk = 1, cls = "hunk";
		if (!in_hunk)
			cls = "file";
		else if (!cls && n && p[0] == '+')
			cls = "add";
		else if (!cls && n && p[0] == '-')
			cls = "del";
		if (cls)
			rc = buf_printf(out, "<span class=\"%s\">", cls);
		if (rc == 0)
			rc = html_text_n(out, p, n);
		if (rc == 0 && cls)
			rc = buf_puts(out, "</span>");
		if (rc == 0)
			rc = buf_puts(out, "\n");
		at += n + 1;
	}
	if (rc == 0)
		rc = buf_puts(out, "</pre>\n");
	if (rc == 0 && shown < len)
		rc = buf_printf(out, "<p class=\"note\">%zu more bytes in "
				"<a href=\"change.diff\">change.diff</a>.</p>\n", len - shown);
	return rc;
}

/* ---- the logs ---- */

static int logs_html(struct buf *out, const struct timeline *tl)
{
	size_t i;
	int rc = 0;

	if (!tl->n)
		return buf_puts(out, "<p class=\"note\">No logs yet.</p>\n");
	rc = buf_puts(out, "<ul class=\"logs\">\n");
	for (i = 0; rc == 0 && i < tl->n; i++) {
		const struct tl_run *t = &tl->v[i];
		char cls[32], dur[32];

		if (!t->log_path[0])
			continue;
		html_status_class(tl_run_tone(t), cls);
		html_duration(t->end - t->start, dur, sizeof(dur));
		rc = buf_puts(out, "<li>");
		if (rc == 0)
			rc = html_link(out, t->log_path, "", t->log_path);
		if (rc == 0)
			rc = buf_printf(out, " \xe2\x80\x94 run %d, %s ", t->run_no,
					t->stage ? "stage" : "recipe");
		if (rc == 0)
			rc = html_text(out, t->name);
		if (rc == 0)
			rc = buf_printf(out, ", <span class=\"st %s\">", cls);
		if (rc == 0)
			rc = html_text(out, tl_run_shown(t));
		if (rc == 0)
			rc = buf_printf(out, "</span>, %s, %lld bytes</li>\n", t->started ? dur : "not started",
					(long long)t->log_size);
	}
	return rc ? rc : buf_puts(out, "</ul>\n");
}

int view_report_clocked(struct engine *e, const struct item *it, struct buf *out, int *clocked)
{
	const char *running;
	struct buf sj, part;
	struct timeline tl;
	cJSON *st = NULL;
	int rc, drc;

	buf_init(&sj);
	buf_init(&part);
	memset(&tl, 0, sizeof(tl));
	rc = view_status(e, it, 1, &sj);
	if (rc == 0) {
		st = cJSON_Parse(sj.data ? sj.data : "");
		rc = st ? 0 : -ENOMEM;
	}
	if (rc == 0)
		rc = timeline_load(e, it->id, (double)util_now_ns() / 1e9, &tl);
	if (rc == 0) {
		char title[ITEM_NAME_MAX + 32];

		snprintf(title, sizeof(title), "%s \xe2\x80\x94 packetfs report", it->name);
		rc = html_page_start(out, title);
	}
	if (rc == 0)
		rc = facts(out, st);
	if (rc == 0)
		rc = buf_puts(out, "<h2 id=\"timeline\">Timeline</h2>\n");
	if (rc == 0)
		rc = timeline_svg(&tl, out);
	if (rc == 0)
		rc = buf_puts(out, "<h2 id=\"evidence\">Evidence</h2>\n");
	if (rc == 0)
		rc = view_evidence(e, it, &part);
	if (rc == 0)
		rc = evidence_html(out, part.data ? part.data : "");
	if (rc == 0)
		rc = view_measure_chart(e, it, out);
	if (rc == 0)
		rc = buf_puts(out, "<h2 id=\"diff\">Change</h2>\n");
	buf_free(&part);
	buf_init(&part);
	if (rc == 0) {
		drc = view_change_diff(e, it, &part);
		if (drc == -ENOMEM)
			rc = drc;
		else if (drc)
			rc = buf_printf(out, "<p class=\"note\">change.diff unavailable: %s</p>\n",
					strerror(-drc));
		else
			rc = diff_html(out, part.data ? part.data : "", part.len);
	}
	if (rc == 0)
		rc = buf_puts(out, "<h2 id=\"logs\">Logs</h2>\n");
	if (rc == 0)
		rc = logs_html(out, &tl);
	if (rc == 0)
		rc = html_page_end(out);
	running = st ? cJSON_GetStringValue(cJSON_GetObjectItem(st, "running")) : NULL;
	*clocked = tl.uses_now || (running && running[0]);
	timeline_free(&tl);
	cJSON_Delete(st);
	buf_free(&sj);
	buf_free(&part);
	return rc;
}
