/*
 * view_html.c - what the HTML pages share (view_html.h): escaping, links,
 * the colours of run statuses and the page frame with its style sheet;
 * and which pages follow a change the engine reports (view_html_changed).
 *
 * Escaping. Text becomes HTML text by replacing & < > " ' with the XML
 * entities; a byte sequence that is not UTF-8 (a diff of a Latin-1 file),
 * and a control character XML does not allow (all below 0x20 but tab,
 * newline and carriage return, and DEL), becomes U+FFFD, so that the page
 * stays valid UTF-8 and well-formed XML whatever the store holds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "view_html.h"

int html_text_n(struct buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, n;
	int rc = 0;

	while (i < len && rc == 0) {
		const char *rep = NULL;
		unsigned c = p[i];

		n = 1;
		if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"')
			rep = "&quot;";
		else if (c == '\'')
			rep = "&#39;";
		else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			rep = "\xef\xbf\xbd";
		else if (c >= 0x80 && (n = util_utf8_char(p + i, len - i, NULL)) == 0)
			rep = "\xef\xbf\xbd", n = 1;
		if (!rep) {
			i += n;
			continue;
		}
		if (i > run)
			rc = buf_append(out, s + run, i - run);
		if (rc == 0)
			rc = buf_puts(out, rep);
		i += n;
		run = i;
	}
	if (rc == 0 && i > run)
		rc = buf_append(out, s + run, i - run);
	return rc;
}

int html_text(struct buf *out, const char *s)
{
	return s ? html_text_n(out, s, strlen(s)) : 0;
}

int html_url(struct buf *out, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	int rc = 0;

	for (p = (const unsigned char *)path; *p && rc == 0; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '.' || *p == '_' || *p == '~' || *p == '/') {
			rc = buf_append(out, p, 1);
		} else {
			char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};

			rc = buf_append(out, e, 3);
		}
	}
	return rc;
}

int html_link_start(struct buf *out, const char *a, const char *b)
{
	int rc = buf_puts(out, "<a href=\"");

	if (rc == 0)
		rc = html_url(out, a);
	if (rc == 0)
		rc = html_url(out, b);
	return rc ? rc : buf_puts(out, "\">");
}

int html_link(struct buf *out, const char *a, const char *b, const char *text)
{
	int rc = html_link_start(out, a, b);

	if (rc == 0)
		rc = html_text(out, text);
	return rc ? rc : buf_puts(out, "</a>");
}

static const struct {
	const char *status, *colour;
} colours[] = {
	{"validated", "#2e9d4f"},   {"succeeded", "#2e9d4f"}, {"failing", "#d93f3f"},
	{"failed", "#d93f3f"},      {"blocked", "#e0a500"},   {"timed_out", "#e8710a"},
	{"cancelled", "#8a8f98"},   {"interrupted", "#9c4dcc"}, {"running", "#3b7ddd"},
	{"queued", "#c8ccd2"},
};

const char *html_status_colour(const char *status)
{
	size_t i;

	for (i = 0; status && i < sizeof(colours) / sizeof(colours[0]); i++)
		if (strcmp(colours[i].status, status) == 0)
			return colours[i].colour;
	return "#555b66";
}

void html_status_class(const char *status, char out[32])
{
	size_t o = 2;

	memcpy(out, "s-", 2);
	for (; status && *status && o < 31; status++)
		if ((*status >= 'a' && *status <= 'z') || (*status >= '0' && *status <= '9') ||
		    *status == '_')
			out[o++] = *status;
	if (o == 2)
		out[o++] = 'x';
	out[o] = '\0';
}

void html_duration(double secs, char *out, size_t size)
{
	long s;

	if (secs < 0)
		secs = 0;
	if (secs < 10) {
		snprintf(out, size, "%.1f s", secs);
		return;
	}
	s = (long)(secs + 0.5);
	if (s < 60)
		snprintf(out, size, "%ld s", s);
	else if (s < 3600)
		snprintf(out, size, "%ld m %02ld s", s / 60, s % 60);
	else
		snprintf(out, size, "%ld h %02ld m", s / 3600, s % 3600 / 60);
}

/* The style sheet of both pages: the status colours as html_status_colour
 * gives them, for the state and status cells. */
static const char style[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em 2em;"
	"color:#1d2126;background:#fff;max-width:80em}\n"
	"h1{font-size:1.5em;margin:0 0 .4em}h2{font-size:1.2em;margin:1.6em 0 .5em;"
	"border-bottom:1px solid #dde1e6;padding-bottom:.2em}h3{font-size:1em;margin:1em 0 .4em}\n"
	"table{border-collapse:collapse;font-size:.92em}th,td{border:1px solid #dde1e6;"
	"padding:.25em .6em;text-align:left;vertical-align:top}th{background:#f3f5f7}\n"
	"table.facts th{width:9em}code,pre{font-family:ui-monospace,'DejaVu Sans Mono',monospace}\n"
	"td.err{color:#a52a2a;max-width:30em;overflow-wrap:anywhere}\n"
	".st{font-weight:600}.s-validated,.s-succeeded,.s-done{color:#1f7a3a}"
	".s-failing,.s-failed{color:#b42323}.s-blocked{color:#9a7000}.s-timed_out{color:#b35300}"
	".s-cancelled,.s-missing,.s-stale{color:#5c626b}.s-interrupted{color:#7a2fa6}"
	".s-running,.s-queued,.s-waiting{color:#2559a8}\n"
	"svg.timeline{display:block;max-width:100%;height:auto;margin:.5em 0}\n"
	"svg.timeline text{font-size:12px;fill:#1d2126}svg.timeline text.tick{fill:#5c626b}\n"
	"svg.timeline text.group{font-weight:600}svg.strip{vertical-align:middle}\n"
	"pre.diff{background:#f8f9fa;border:1px solid #dde1e6;padding:.6em;overflow-x:auto;"
	"font-size:.85em;line-height:1.35}\n"
	"pre.diff .add{color:#116329;background:#e6ffec}pre.diff .del{color:#82071e;"
	"background:#ffebe9}pre.diff .hunk{color:#0550ae}pre.diff .file{font-weight:600}\n"
	"ul.logs{font-size:.92em}p.note{color:#5c626b;font-size:.9em}\n";

int html_page_start(struct buf *out, const char *title)
{
	int rc = buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
			  "<meta charset=\"utf-8\" />\n"
			  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n"
			  "<title>");

	if (rc == 0)
		rc = html_text(out, title);
	if (rc == 0)
		rc = buf_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
	return rc;
}

int html_page_end(struct buf *out)
{
	return buf_puts(out, "</body>\n</html>\n");
}

void view_html_changed(struct engine *e, const char *item, const char *rel,
		       enum engine_change what)
{
	char path[ITEM_NAME_MAX + 32];

	if (!e->watch_fn)
		return;
	/* An item archived (item NULL, rel its name) leaves the index. */
	if (!item && what == ENGINE_ARCHIVED) {
		e->watch_fn(e->watch_arg, "/index.html", ENGINE_MODIFIED);
		return;
	}
	if (!item || what == ENGINE_TIMES)
		return;
	if (strcmp(rel, "status") != 0 && strcmp(rel, "validation/evidence.md") != 0 &&
	    strcmp(rel, "change.diff") != 0)
		return;
	if ((size_t)snprintf(path, sizeof(path), "/%s/report.html", item) < sizeof(path))
		e->watch_fn(e->watch_arg, path, ENGINE_MODIFIED);
	if (strcmp(rel, "status") == 0)
		e->watch_fn(e->watch_arg, "/index.html", ENGINE_MODIFIED);
}
