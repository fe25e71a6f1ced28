/*
 * view_html.h - what the generated HTML pages share (SPEC §3, §9):
 * view_report.c renders MOUNT/ITEM/report.html, view_index.c
 * MOUNT/index.html; view_html.c holds the escaping, the page frame and the
 * colours of run statuses; view_timeline.c reads an item's runs and draws
 * them as inline SVG.
 *
 * The pages are self-contained: inline CSS, no script, no resource loaded
 * from anywhere, links only to relative paths on the mount. They are also
 * well-formed XML (every element closed, only the five XML entities), so
 * that an XML parser reads them as an HTML parser does. Every text that
 * comes from documents, commands, errors or diffs goes through html_text:
 * markup characters escaped, bytes that are not UTF-8 and control
 * characters XML forbids replaced by U+FFFD.
 *
 * Pure functions over struct buf, but for timeline_load, which reads the
 * store. Any thread. All return 0 or -ENOMEM unless they say otherwise.
 */
#ifndef PACKETFS_VIEW_HTML_H
#define PACKETFS_VIEW_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "namespace.h"

/* The len bytes at s as HTML text (also fit for an attribute value). */
int html_text_n(struct buf *out, const char *s, size_t len);
/* The string s as HTML text; NULL as nothing. */
int html_text(struct buf *out, const char *s);
/* The relative path path as an href value: every byte outside
 * [A-Za-z0-9-._~/] percent-encoded (so no scheme and no markup). */
int html_url(struct buf *out, const char *path);
/* The start tag of a link to the relative path that a and b make
 * together (b may be ""): <a href="..."> with both through html_url. */
int html_link_start(struct buf *out, const char *a, const char *b);
/* A whole link to that path (html_link_start) whose text is text. */
int html_link(struct buf *out, const char *a, const char *b, const char *text);
/* The colour (#rrggbb) a run of status status is drawn in: validated and
 * succeeded green, failing and failed red, blocked amber, timed_out orange,
 * cancelled grey, interrupted purple, running blue, queued pale grey;
 * anything else dark grey. A static string. */
const char *html_status_colour(const char *status);
/* A class name for status: "s-" and its letters, digits and '_' (the
 * statuses are such words). Into out[32]. */
void html_status_class(const char *status, char out[32]);
/* The start of a page titled title (escaped here): doctype, head with the
 * inline style sheet, the opening body tag. */
int html_page_start(struct buf *out, const char *title);
/* The end of a page. */
int html_page_end(struct buf *out);
/* A duration of secs seconds as "0.4 s", "12 s", "3 m 05 s", "2 h 01 m"
 * into out. */
void html_duration(double secs, char *out, size_t size);

/* One run of an item, as the timeline draws it. */
struct tl_run {
	int run_no;
	int stage;          /* a stage run (else a recipe run) */
	char *name;         /* the stage or recipe */
	char status[16];
	char shown[112];    /* what is shown of the status when it is more than status
			     * (tl_run_shown); "" otherwise */
	int iteration;
	int round;          /* the n-th run of a stage that has rounds; 0: none */
	char *log_path;     /* item-relative */
	int64_t log_size;
	int started;        /* start holds its start */
	double start, end;  /* seconds since the epoch; end: its end, or now while it runs */
};

/* The runs of one item, by run number. */
struct timeline {
	struct tl_run *v;
	size_t n, cap;
	int uses_now;       /* a bar ends (or starts) at now: a run not ended */
};

/* What a person is shown of t's status, and the status whose class and
 * colour it wears: the run's own, but for a validating stage run that
 * succeeded while recipes of its batch (the recipe runs after it, before
 * the next stage run; a recipe's latest run there) did not validate:
 * "succeeded; 1 recipe timed out: 07-slow", worn as failing. */
const char *tl_run_shown(const struct tl_run *t);
const char *tl_run_tone(const struct tl_run *t);
/* Reads every run of item item_id into tl (empty it with timeline_free),
 * numbering the rounds of the stages that have them and judging the
 * validating stages' batches (the pipeline's configuration says which,
 * tl_run_shown); now (seconds since the epoch) ends the bars
 * of runs still running. 0 or a negative errno of the store. */
int timeline_load(struct engine *e, int64_t item_id, double now, struct timeline *tl);
/* Frees what tl holds; tl is empty after. */
void timeline_free(struct timeline *tl);
/* The timeline as one <svg> element: a time axis, then a row per run (a
 * heading row where the iteration changes), each bar a link to the run's
 * log (href relative to the item directory) with a <title> naming the
 * run, its status and duration; a paragraph when there are no runs. */
int timeline_svg(const struct timeline *tl, struct buf *out);
/* A small strip of the item's last runs, one square per run in its
 * status colour with a <title>, for a table row; nothing when no runs. */
int timeline_strip(const struct timeline *tl, struct buf *out);

#endif
