/*
 * view_timeline.c - an item's runs as inline SVG (view_html.h): the stage
 * timeline of report.html and the strip of index.html.
 *
 * Design. The timeline is a Gantt chart: one row per run (stage or
 * recipe) in run order, its bar placed on a shared time axis by its start
 * and its end (start plus duration; now for a run still going), coloured by
 * status (html_status_colour), at least MIN_BAR wide so that a run of a
 * fraction of a second is still a bar to see and to click. A heading row
 * opens each iteration, and a stage that has rounds labels its runs
 * "round N". Every bar is an <a> to the run's log, relative to the item
 * directory, holding a <title> (the browser's tooltip) and the <rect>,
 * which carries the status as a class ("bar s-validated") and a data-run
 * attribute with the run number. Start times are whole seconds (the
 * runs table keeps RFC 3339 seconds); durations keep their fractions.
 *
 * A validating stage's run succeeds when its program did (SPEC §5), even
 * when recipes of its batch did not validate; its row then says so
 * ("succeeded; 1 recipe timed out: 07-slow") and wears the failing colour
 * (judge_batches), so that no green bar stands for failed evidence. The
 * stored status stays as it is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "view_html.h"

/* Geometry of the timeline, in SVG user units (pixels at 100 %). */
#define TL_WIDTH 1000
#define TL_LABEL 300  /* the column of run labels */
#define TL_PLOT_X (TL_LABEL + 10)
#define TL_PLOT_W (TL_WIDTH - TL_PLOT_X - 20)
#define TL_AXIS 30    /* the tick labels above the rows */
#define TL_ROW 22
#define TL_BAR 14
#define TL_GROUP 22   /* an iteration's heading row */
#define MIN_BAR 6.0
#define LABEL_MAX 44  /* bytes of a run's label before it is cut */
#define STRIP_RUNS 40 /* the runs a strip shows, the last ones */

/* Seconds since the epoch of an RFC 3339 UTC time with whole seconds, or
 * -1 when s is none. */
static double parse_time(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (!s || !*s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return -1;
	return (double)timegm(&tm);
}

struct load {
	struct timeline *tl;
	const struct pfs_config *cfg;
	double now;
	int rc;
};

/* The rounds of stage name so far, counting this run: the runs of that
 * stage in tl when the configuration gives it rounds, else 0. */
static int round_of(const struct load *l, const char *name)
{
	const struct pfs_stage *st = config_stage(l->cfg, name, NULL);
	int k = 1;
	size_t i;

	if (!st || !st->rounds_max)
		return 0;
	for (i = 0; i < l->tl->n; i++)
		k += l->tl->v[i].stage && strcmp(l->tl->v[i].name, name) == 0;
	return k;
}

static int load_run(void *arg, const struct run *r)
{
	struct load *l = arg;
	struct timeline *tl = l->tl;
	struct tl_run *t;
	double fin;

	if (tl->n == tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 16;
		struct tl_run *v = realloc(tl->v, cap * sizeof(*v));

		if (!v)
			return l->rc = -ENOMEM, 1;
		tl->v = v;
		tl->cap = cap;
	}
	t = &tl->v[tl->n];
	memset(t, 0, sizeof(*t));
	t->run_no = r->run_no;
	t->stage = strcmp(r->kind, "stage") == 0;
	t->name = strdup(r->name ? r->name : "");
	t->log_path = strdup(r->log_path ? r->log_path : "");
	if (!t->name || !t->log_path) {
		free(t->name);
		free(t->log_path);
		return l->rc = -ENOMEM, 1;
	}
	snprintf(t->status, sizeof(t->status), "%s", run_status_name(r->status));
	t->iteration = r->iteration;
	t->round = t->stage ? round_of(l, t->name) : 0;
	t->log_size = r->log_size;
	t->start = parse_time(r->started_at);
	t->started = t->start >= 0;
	fin = parse_time(r->finished_at);
	if (!t->started) {
		t->start = t->end = l->now;
		tl->uses_now = 1;
	} else if (r->status == RUN_RUNNING || r->status == RUN_QUEUED) {
		t->end = l->now > t->start ? l->now : t->start;
		tl->uses_now = 1;
	}
	else if (r->duration_s > 0)
		t->end = t->start + r->duration_s;
	else
		t->end = fin > t->start ? fin : t->start;
	tl->n++;
	return 0;
}

const char *tl_run_shown(const struct tl_run *t)
{
	return t->shown[0] ? t->shown : t->status;
}

const char *tl_run_tone(const struct tl_run *t)
{
	return t->shown[0] ? "failing" : t->status;
}

/* A recipe status as words: "timed out" for timed_out. */
static const char *status_words(const char *status)
{
	return strcmp(status, "timed_out") == 0 ? "timed out" : status;
}

/* Appends fmt to out[size] at *at, cut with "..." when it does not fit. */
static void shown_add(char *out, size_t size, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void shown_add(char *out, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + *at, size - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *at) {
		memcpy(out + size - 4, "...", 4);
		*at = size - 1;
	} else {
		*at += (size_t)n;
	}
}

/* Sets the shown status of the validating stage run tl->v[i] that
 * succeeded: the recipes of its batch whose latest run there ended other
 * than validated. A batch still running is not judged. */
static void judge_batch(struct timeline *tl, size_t i)
{
	struct tl_run *st = &tl->v[i];
	size_t j, k, end, bad = 0, at = 0;
	const char *first = NULL;
	int mixed = 0;

	for (end = i + 1; end < tl->n && !tl->v[end].stage; end++)
		;
	for (j = i + 1; j < end; j++) {
		const struct tl_run *r = &tl->v[j];

		for (k = j + 1; k < end && strcmp(tl->v[k].name, r->name) != 0; k++)
			;
		if (k < end) /* a later run of the same recipe decides */
			continue;
		if (strcmp(r->status, "running") == 0 || strcmp(r->status, "queued") == 0)
			return;
		if (strcmp(r->status, "validated") == 0)
			continue;
		mixed |= first && strcmp(first, r->status) != 0;
		if (!first)
			first = r->status;
		bad++;
	}
	if (!bad)
		return;
	if (mixed)
		shown_add(st->shown, sizeof(st->shown), &at, "%s; %zu recipes not validated:",
			  st->status, bad);
	else
		shown_add(st->shown, sizeof(st->shown), &at, "%s; %zu recipe%s %s:", st->status, bad,
			  bad == 1 ? "" : "s", status_words(first));
	for (j = i + 1, k = 0; j < end; j++) {
		const struct tl_run *r = &tl->v[j];
		size_t l;

		for (l = j + 1; l < end && strcmp(tl->v[l].name, r->name) != 0; l++)
			;
		if (l < end || strcmp(r->status, "validated") == 0)
			continue;
		if (mixed)
			shown_add(st->shown, sizeof(st->shown), &at, "%s %s (%s)", k++ ? "," : "",
				  r->name, status_words(r->status));
		else
			shown_add(st->shown, sizeof(st->shown), &at, "%s %s", k++ ? "," : "", r->name);
	}
}

/* Judges the batch of every validating stage run that succeeded. */
static void judge_batches(const struct load *l)
{
	const struct pfs_stage *cs;
	size_t i;

	for (i = 0; i < l->tl->n; i++) {
		const struct tl_run *t = &l->tl->v[i];

		if (t->stage && strcmp(t->status, "succeeded") == 0 &&
		    (cs = config_stage(l->cfg, t->name, NULL)) != NULL && cs->recipes_from_plan)
			judge_batch(l->tl, i);
	}
}

int timeline_load(struct engine *e, int64_t item_id, double now, struct timeline *tl)
{
	struct load l = {tl, pipeline_config_get(e->pl), now, 0};
	struct item it;
	int rc;

	/* The stages of the item's path (its template's, SPEC §5). */
	if (store_item_get_id(e->store, item_id, &it) == 0) {
		l.cfg = pipeline_config_item(e->pl, &it);
		item_clear(&it);
	}
	memset(tl, 0, sizeof(*tl));
	rc = store_run_each(e->store, item_id, NULL, RUN_ANY, load_run, &l);
	if (rc == 0)
		rc = l.rc;
	if (rc == 0)
		judge_batches(&l);
	if (rc)
		timeline_free(tl);
	return rc;
}

void timeline_free(struct timeline *tl)
{
	size_t i;

	for (i = 0; i < tl->n; i++) {
		free(tl->v[i].name);
		free(tl->v[i].log_path);
	}
	free(tl->v);
	memset(tl, 0, sizeof(*tl));
}

/* The step between ticks: the smallest of a round series that makes at
 * most six intervals of span seconds. */
static double tick_step(double span)
{
	static const double steps[] = {1,    2,    5,     10,    15,    30,    60,    120,
				       300,  600,  900,   1800,  3600,  7200,  10800, 21600,
				       43200, 86400, 172800, 604800};
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= 6)
			return steps[i];
	return steps[sizeof(steps) / sizeof(steps[0]) - 1] * (double)(long)(span / 6 / 604800 + 1);
}

/* An offset on the axis, "+0 s", "+30 s", "+5 m", "+1 h 30 m", "+2 d". */
static void tick_label(double off, char *out, size_t size)
{
	long s = (long)(off + 0.5);

	if (s < 60)
		snprintf(out, size, "+%ld s", s);
	else if (s < 3600)
		snprintf(out, size, s % 60 ? "+%ld m %ld s" : "+%ld m", s / 60, s % 60);
	else if (s < 86400)
		snprintf(out, size, s % 3600 ? "+%ld h %ld m" : "+%ld h", s / 3600, s % 3600 / 60);
	else
		snprintf(out, size, "+%ld d", s / 86400);
}

/* What a run is: "stage plan", "recipe 01-build", with its round. */
static void run_what(const struct tl_run *t, char *out, size_t size)
{
	if (t->round)
		snprintf(out, size, "%s %s round %d", t->stage ? "stage" : "recipe", t->name,
			 t->round);
	else
		snprintf(out, size, "%s %s", t->stage ? "stage" : "recipe", t->name);
}

/* The label of a row: "#3 01-build round 2 · failing", cut to LABEL_MAX
 * bytes at a character boundary with "…". */
static int row_label(struct buf *out, const struct tl_run *t)
{
	char label[256];
	size_t n;

	if (t->round)
		snprintf(label, sizeof(label), "#%d %s round %d \xc2\xb7 %s", t->run_no, t->name,
			 t->round, tl_run_shown(t));
	else
		snprintf(label, sizeof(label), "#%d %s \xc2\xb7 %s", t->run_no, t->name,
			 tl_run_shown(t));
	n = strlen(label);
	if (n <= LABEL_MAX)
		return html_text(out, label);
	n = LABEL_MAX - 3;
	while (n && ((unsigned char)label[n] & 0xc0) == 0x80)
		n--;
	memcpy(label + n, "\xe2\x80\xa6", 4);
	return html_text(out, label);
}

/* One run's row at y: its label and its bar, a link to its log. */
static int draw_run(struct buf *out, const struct tl_run *t, double t0, double span, int y)
{
	double x = TL_PLOT_X + (t->start - t0) / span * TL_PLOT_W;
	double w = (t->end - t->start) / span * TL_PLOT_W;
	char cls[32], dur[32], what[192];
	int rc;

	if (w < MIN_BAR)
		w = MIN_BAR;
	if (x + w > TL_PLOT_X + TL_PLOT_W)
		x = TL_PLOT_X + TL_PLOT_W - w;
	html_status_class(tl_run_tone(t), cls);
	html_duration(t->end - t->start, dur, sizeof(dur));
	run_what(t, what, sizeof(what));
	rc = buf_printf(out, "<text x=\"4\" y=\"%d\">", y + TL_BAR - 2);
	if (rc == 0)
		rc = row_label(out, t);
	if (rc == 0)
		rc = buf_puts(out, "</text>\n");
	if (rc == 0 && t->log_path[0])
		rc = html_link_start(out, t->log_path, "");
	if (rc == 0)
		rc = buf_puts(out, "<title>");
	if (rc == 0)
		rc = html_text(out, what);
	if (rc == 0)
		rc = buf_printf(out, " (run %d, iteration %d): ", t->run_no, t->iteration);
	if (rc == 0)
		rc = html_text(out, tl_run_shown(t));
	if (rc == 0)
		rc = buf_printf(out, ", %s%s</title>", t->started ? "" : "not started, ",
				t->started ? dur : "0 s");
	if (rc == 0)
		rc = buf_printf(out,
				"<rect class=\"bar %s\" data-run=\"%d\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
				"height=\"%d\" rx=\"2\" fill=\"%s\" />",
				cls, t->run_no, x, y, w, TL_BAR, html_status_colour(tl_run_tone(t)));
	if (rc == 0)
		rc = buf_puts(out, t->log_path[0] ? "</a>\n" : "\n");
	return rc;
}

int timeline_svg(const struct timeline *tl, struct buf *out)
{
	double t0 = 0, t1 = 0, span, step, k;
	size_t i, groups = 0;
	int rc = 0, y, height, iter = -1;
	char when[32], label[32];

	if (!tl->n)
		return buf_puts(out, "<p class=\"note\">No runs yet.</p>\n");
	for (i = 0; i < tl->n; i++) {
		if (i == 0 || tl->v[i].start < t0)
			t0 = tl->v[i].start;
		if (i == 0 || tl->v[i].end > t1)
			t1 = tl->v[i].end;
		if (i == 0 || tl->v[i].iteration != tl->v[i - 1].iteration)
			groups++;
	}
	span = t1 - t0 < 1 ? 1 : t1 - t0;
	step = tick_step(span);
	height = TL_AXIS + (int)groups * TL_GROUP + (int)tl->n * TL_ROW + 8;
	rc = buf_printf(out,
			"<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
			"height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
			"aria-label=\"stage and recipe runs over time\">\n",
			TL_WIDTH, height, TL_WIDTH, height);
	for (k = 0; rc == 0 && k <= span + 1e-9; k += step) {
		double x = TL_PLOT_X + k / span * TL_PLOT_W;

		tick_label(k, label, sizeof(label));
		rc = buf_printf(out,
				"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e3e6ea\" />"
				"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
				x, TL_AXIS - 8, x, height - 4, x, TL_AXIS - 12,
				x > TL_PLOT_X + TL_PLOT_W - 30 ? "end" : "middle", label);
	}
	y = TL_AXIS;
	for (i = 0; rc == 0 && i < tl->n; i++) {
		const struct tl_run *t = &tl->v[i];

		if (t->iteration != iter) {
			iter = t->iteration;
			rc = buf_printf(out,
					"<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c9ced4\" />"
					"<text class=\"group\" x=\"4\" y=\"%d\">iteration %d</text>\n",
					y + 2, TL_WIDTH, y + 2, y + 17, iter);
			y += TL_GROUP;
		}
		if (rc == 0)
			rc = draw_run(out, t, t0, span, y);
		y += TL_ROW;
	}
	if (rc == 0)
		rc = buf_puts(out, "</svg>\n");
	util_rfc3339((int64_t)t0 * 1000000000, when);
	if (rc == 0)
		rc = buf_printf(out, "<p class=\"note\">Time from the first run's start, %s; "
				"each bar links to its run's log.</p>\n", when);
	return rc;
}

int timeline_strip(const struct timeline *tl, struct buf *out)
{
	size_t i = tl->n > STRIP_RUNS ? tl->n - STRIP_RUNS : 0, n = tl->n - i;
	char what[192];
	int rc, x = 0;

	if (!n)
		return 0;
	rc = buf_printf(out,
			"<svg class=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" "
			"height=\"12\" viewBox=\"0 0 %zu 12\">",
			n * 8, n * 8);
	for (; rc == 0 && i < tl->n; i++, x += 8) {
		const struct tl_run *t = &tl->v[i];
		char cls[32];

		html_status_class(tl_run_tone(t), cls);
		run_what(t, what, sizeof(what));
		rc = buf_printf(out, "<rect class=\"run %s\" x=\"%d\" y=\"0\" width=\"6\" height=\"12\" "
				"fill=\"%s\"><title>#%d ",
				cls, x, html_status_colour(tl_run_tone(t)), t->run_no);
		if (rc == 0)
			rc = html_text(out, what);
		if (rc == 0)
			rc = buf_puts(out, ": ");
		if (rc == 0)
			rc = html_text(out, tl_run_shown(t));
		if (rc == 0)
			rc = buf_puts(out, "</title></rect>");
	}
	if (rc == 0)
		rc = buf_puts(out, "</svg>");
	return rc;
}
