/*
 * view_index.c - MOUNT/index.html (SPEC §3, §9): every live item at a
 * glance, one self-contained page (view_html.h).
 *
 * One table row per item, by name: the name linking to ITEM/report.html,
 * its state, stage, evidence ("n/m validated"), what runs, its last error
 * and its updated time, all read from the item's status.json rendering so
 * that the row says what status says, and a strip of its last runs
 * (view_timeline.c). Archived items are not listed; .archive/ holds them,
 * each with its own report.html.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "view_html.h"

struct index_walk {
	struct engine *e;
	struct buf *out;
	double now;
	size_t items;
	int rc;
	int *clocked;
	char *base;  /* the last base asked of repo_rev_is_ref; NULL: none */
	int base_ref; /* its answer */
};

/* Whether the row of it is made of the store's rows, the configuration
 * and the refs alone (view_index's clocked): no run going nor state kept
 * out of the store, and a base that is a ref. Items mostly share a base,
 * so the last one's answer is kept. */
static int row_stampable(struct index_walk *w, const struct item *it)
{
	const struct pfs_config *cfg = pipeline_config_get(w->e->pl);

	if (view_unstampable(w->e, it->id))
		return 0;
	if (!cfg->repo)
		return 1;
	if (!w->base || strcmp(w->base, it->base) != 0) {
		free(w->base);
		w->base = strdup(it->base);
		w->base_ref = w->base && repo_rev_is_ref(cfg->repo, it->base);
	}
	return w->base_ref;
}

/* The string member key of o, or "". */
static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* A cell of text; cls (may be NULL) its class. */
static int cell(struct buf *out, const char *text, const char *cls)
{
	int rc = cls ? buf_printf(out, "<td class=\"%s\">", cls) : buf_puts(out, "<td>");

	if (rc == 0)
		rc = html_text(out, text);
	return rc ? rc : buf_puts(out, "</td>");
}

/* A second line in a cell, under what it shows: "<br /><small>", label as
 * it stands, text escaped, "</small>". 0 or the error of buf_puts. */
static int cell_note(struct buf *out, const char *label, const char *text)
{
	int rc = buf_printf(out, "<br /><small>%s", label);

	if (rc == 0)
		rc = html_text(out, text);
	return rc ? rc : buf_puts(out, "</small>");
}

static int item_row(struct index_walk *w, const struct item *it)
{
	struct buf *out = w->out;
	struct timeline tl;
	struct buf sj;
	cJSON *st = NULL;
	char cls[48], stcls[32];
	int rc;

	buf_init(&sj);
	memset(&tl, 0, sizeof(tl));
	if (!row_stampable(w, it))
		*w->clocked = 1;
	rc = view_status(w->e, it, 1, &sj);
	if (rc == 0) {
		st = cJSON_Parse(sj.data ? sj.data : "");
		rc = st ? 0 : -ENOMEM;
	}
	if (rc == 0)
		rc = timeline_load(w->e, it->id, w->now, &tl);
	if (tl.uses_now)
		*w->clocked = 1;
	if (rc == 0)
		rc = buf_puts(out, "<tr><td>");
	if (rc == 0)
		rc = html_link(out, it->name, "/report.html", it->name);
	if (rc == 0 && jstr(st, "title")[0])
		rc = cell_note(out, "", jstr(st, "title"));
	if (rc == 0)
		rc = buf_puts(out, "</td>");
	html_status_class(jstr(st, "state"), stcls);
	snprintf(cls, sizeof(cls), "st %s", stcls);
	/* A held item advances only by hand: its state says so. */
	if (rc == 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "hold"))) {
		char held[48];

		snprintf(held, sizeof(held), "%s (held)", jstr(st, "state"));
		rc = cell(out, held, cls);
	} else if (rc == 0) {
		rc = cell(out, jstr(st, "state"), cls);
	}
	if (rc == 0 && !jstr(st, "template")[0]) {
		rc = cell(out, jstr(st, "stage"), NULL);
	} else if (rc == 0) {
		/* The stage, and under it the template the plan chose (SPEC §5
		 * "Routes and templates"). */
		rc = buf_puts(out, "<td>");
		if (rc == 0)
			rc = html_text(out, jstr(st, "stage"));
		if (rc == 0)
			rc = cell_note(out, "template ", jstr(st, "template"));
		if (rc == 0)
			rc = buf_puts(out, "</td>");
	}
	if (rc == 0)
		rc = cell(out, jstr(st, "evidence"), NULL);
	if (rc == 0)
		rc = cell(out, jstr(st, "running"), NULL);
	if (rc == 0)
		rc = cell(out, jstr(st, "last_error"), "err");
	if (rc == 0)
		rc = cell(out, jstr(st, "updated"), NULL);
	if (rc == 0)
		rc = buf_puts(out, "<td>");
	if (rc == 0)
		rc = timeline_strip(&tl, out);
	if (rc == 0)
		rc = buf_puts(out, "</td></tr>\n");
	timeline_free(&tl);
	cJSON_Delete(st);
	buf_free(&sj);
	return rc;
}

static int each_item(void *arg, const struct item *it)
{
	struct index_walk *w = arg;

	w->rc = item_row(w, it);
	w->items++;
	return w->rc != 0;
}

int view_index(struct engine *e, struct buf *out, int *clocked)
{
	struct index_walk w = {e, NULL, (double)util_now_ns() / 1e9, 0, 0, clocked, NULL, 0};
	struct buf rows;
	int rc;

	*clocked = 0;
	buf_init(&rows);
	w.out = &rows;
	rc = store_item_each(e->store, 0, each_item, &w);
	if (rc == 0)
		rc = w.rc;
	if (rc == 0)
		rc = html_page_start(out, "packetfs \xe2\x80\x94 work items");
	if (rc == 0)
		rc = buf_printf(out, "<h1>Work items</h1>\n<p class=\"note\">%zu item%s; "
				"each name links to the item's report. Archived items are in "
				"<a href=\".archive/\">.archive/</a>.</p>\n",
				w.items, w.items == 1 ? "" : "s");
	if (rc == 0 && w.items)
		rc = buf_puts(out, "<table class=\"items\">\n<tr><th>item</th><th>state</th>"
			      "<th>stage</th><th>evidence</th><th>running</th><th>last error</th>"
			      "<th>updated</th><th>runs</th></tr>\n");
	if (rc == 0 && rows.len)
		rc = buf_append(out, rows.data, rows.len);
	if (rc == 0 && w.items)
		rc = buf_puts(out, "</table>\n");
	if (rc == 0)
		rc = html_page_end(out);
	buf_free(&rows);
	free(w.base);
	return rc;
}
