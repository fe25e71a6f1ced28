/*
 * top_render.c - the text of a `packetfs top` frame (top.h): the header
 * line, the line naming the columns and one row per item, each fitted to
 * the width of the screen in display columns.
 *
 * A row: a two-column mark ("> " for the selected item), then ITEM, STATE,
 * STAGE, TEMPLATE (only when some item has one: the path its plan chose),
 * RUNNING (each run's name and elapsed time), EVIDENCE (n/m) and
 * LAST ERROR, which takes the rest of the line. Columns keep their
 * positions from row to row (the widths come from the whole model, capped
 * so that a long name or stage leaves room for the rest); a line wider than
 * the screen is cut, so the narrowest terminal still gets the start of
 * every line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "top.h"

#define STATE_W 7
#define STATE_HELD_W 14 /* "waiting (held)" */
#define RUNNING_W 22
#define EVIDENCE_W 8
#define GAP "  "

int top_fit(char *out, size_t size, const char *s, int width, int pad)
{
	mbstate_t st;
	size_t len = strlen(s), o = 0;
	int cols = 0;

	memset(&st, 0, sizeof(st));
	while (len && cols < width) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, len, &st);
		int w;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			/* No character: one byte shown as '?'. */
			memset(&st, 0, sizeof(st));
			n = 1;
			wc = L'?';
			w = 1;
		} else {
			w = wcwidth(wc);
		}
		if (w < 0 || wc < 0x20 || wc == 0x7f) {
			wc = L'?';
			w = 1;
		}
		if (cols + w > width)
			break;
		if (wc == L'?' || n == 1) {
			if (o + 2 > size)
				break;
			out[o++] = wc == L'?' ? '?' : *s;
		} else {
			if (o + n + 1 > size)
				break;
			memcpy(out + o, s, n);
			o += n;
		}
		cols += w;
		s += n;
		len -= n;
	}
	while (pad && cols < width && o + 2 <= size) {
		out[o++] = ' ';
		cols++;
	}
	out[o] = '\0';
	return cols;
}

void top_elapsed(char *out, int64_t secs)
{
	int s;

	/* Past 9999 days it stays there. */
	s = secs < 0 ? 0 : secs > 9999LL * 86400 ? 9999 * 86400 : (int)secs;
	if (s < 60)
		snprintf(out, 16, "%ds", s);
	else if (s < 3600)
		snprintf(out, 16, "%dm%02ds", s / 60 % 60, s % 60);
	else if (s < 86400)
		snprintf(out, 16, "%dh%02dm", s / 3600 % 24, s / 60 % 60);
	else
		snprintf(out, 16, "%dd%02dh", s / 86400 % 10000, s / 3600 % 24);
}

void top_render_header(const struct top_model *m, int64_t now, int width, char *out, size_t size)
{
	size_t counts[TOP_NSTATES], other, len;
	char line[1024], clock[16];
	time_t t = (time_t)now;
	struct tm tm;
	int k, first = 1;

	top_model_counts(m, counts, &other);
	localtime_r(&t, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	len = (size_t)snprintf(line, sizeof(line), "%s  %zu item%s", clock, m->n, m->n == 1 ? "" : "s");
	for (k = 0; k <= TOP_NSTATES && len < sizeof(line); k++) {
		size_t c = k < TOP_NSTATES ? counts[k] : other;

		if (c)
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s %zu %s",
						first ? ":" : ",", c,
						k < TOP_NSTATES ? top_states[k] : "unread");
		first &= !c;
	}
	if (len < sizeof(line))
		snprintf(line + len, sizeof(line) - len, "  %s", m->root);
	top_fit(out, size, line, width, 0);
}

/* The widths of the ITEM and STAGE columns for a screen width columns
 * wide: the longest in the model, capped to leave room for the rest. */
static void column_widths(const struct top_model *m, int width, int *name_w, int *stage_w)
{
	int cap = width / 3 > 16 ? width / 3 : 16;

	*name_w = m->name_w < cap ? m->name_w : cap;
	*stage_w = m->stage_w < 12 ? m->stage_w : 12;
}

/* The width of the STATE column: room for "waiting (held)" when an item
 * of m is held, else for the longest state. */
static int state_width(const struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->items[i].hold)
			return STATE_HELD_W;
	return STATE_W;
}

/* The line of the columns' texts, cols[0..6], fitted into out: cols[6],
 * the template, goes after the stage when some item has one. */
static void render_line(const struct top_model *m, const char *mark, const char *const cols[7],
			int width, char *out, size_t size)
{
	int name_w, stage_w;
	int w[6];
	const char *c[6];
	char line[4096], field[512];
	size_t len, k, n = 0;

	column_widths(m, width, &name_w, &stage_w);
	w[n] = name_w;
	c[n++] = cols[0];
	w[n] = state_width(m);
	c[n++] = cols[1];
	w[n] = stage_w;
	c[n++] = cols[2];
	if (m->template_w) {
		w[n] = m->template_w < 16 ? m->template_w : 16;
		c[n++] = cols[6];
	}
	w[n] = RUNNING_W;
	c[n++] = cols[3];
	w[n] = EVIDENCE_W;
	c[n++] = cols[4];
	len = (size_t)snprintf(line, sizeof(line), "%s", mark);
	for (k = 0; k < n; k++) {
		top_fit(field, sizeof(field), c[k], w[k], 1);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s" GAP, field);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	snprintf(line + len, sizeof(line) - len, "%s", cols[5]);
	len = (size_t)top_fit(out, size, line, width, 0);
	/* No trailing blanks (a row without an error). */
	len = strlen(out);
	while (len && out[len - 1] == ' ')
		out[--len] = '\0';
}

void top_render_columns(const struct top_model *m, int width, char *out, size_t size)
{
	static const char *const titles[7] = {
		"ITEM", "STATE", "STAGE", "RUNNING", "EVIDENCE", "LAST ERROR", "TEMPLATE",
	};

	render_line(m, "  ", titles, width, out, size);
}

void top_render_row(const struct top_model *m, size_t i, int64_t now_ms, int width, int selected,
		    char *out, size_t size)
{
	const struct top_item *it = &m->items[i];
	char running[256] = "", el[16], state[32], err[256];
	const char *cols[7];
	size_t len = 0;
	int k;

	for (k = 0; k < it->nruns && len < sizeof(running); k++) {
		top_elapsed(el, (now_ms - it->runs[k].start_ms) / 1000);
		len += (size_t)snprintf(running + len, sizeof(running) - len, "%s%s %s",
					k ? ", " : "", it->runs[k].name, el);
	}
	if (it->more_runs && len < sizeof(running))
		snprintf(running + len, sizeof(running) - len, " +%d", it->more_runs);
	/* A held item advances only by hand: its state says so. */
	snprintf(state, sizeof(state), "%s%s", it->state[0] ? it->state : "?",
		 it->hold ? " (held)" : "");
	if (it->error)
		snprintf(err, sizeof(err), "status.json: %s", strerror(-it->error));
	cols[0] = it->name;
	cols[1] = state;
	cols[2] = it->stage[0] ? it->stage : "-";
	cols[3] = running[0] ? running : "-";
	cols[4] = it->evidence[0] ? it->evidence : "-";
	cols[5] = it->error ? err : it->last_error;
	cols[6] = it->template[0] ? it->template : "-";
	render_line(m, selected ? "> " : "  ", cols, width, out, size);
}
