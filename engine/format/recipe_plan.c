/*
 * recipe_plan.c - the Markdown the pipeline reads (see recipe.h): plan.md's
 * recipe list, disposition and header lines, and the markers of the stage
 * documents.
 *
 * Design: a text is walked line by line (md_next) with CommonMark's fenced
 * code blocks: a line of three or more '`' or '~' (indented at most three
 * spaces; a backtick fence with no backtick after it) opens a block whose
 * first info word names its kind; the block ends at a fence of the same
 * character at least as long with only blanks after it, or at the end of
 * the text. recipe_plan_names reads the first block of its kind and skips
 * the others whole, so an example inside them does not count; a
 * disposition, a header line or a marker counts only outside every block. A repeated
 * recipe name keeps its first place (recipe__names_dedupe: O(n log n), as
 * plan.md is read at every stat of status). Texts are read by their
 * length: a NUL byte ends neither a line nor the text.
 *
 * No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "recipe.h"
#include "recipe_int.h"
#include "util.h"

/*
 * If the line [s, e) is a fence, its character, length and (for an opening
 * fence) the info word [*info, *info_end); 0 when it is not one. A line of
 * backticks followed by a backtick is no fence (CommonMark: it would be an
 * inline code span).
 */
static int fence(const char *s, const char *e, char *ch, size_t *count, const char **info,
		 const char **info_end)
{
	const char *p = s;
	size_t n = 0;

	while (p < e && *p == ' ' && p - s < 3)
		p++;
	if (p == e || (*p != '`' && *p != '~'))
		return 0;
	*ch = *p;
	while (p < e && *p == *ch) {
		p++;
		n++;
	}
	if (n < 3 || (*ch == '`' && memchr(p, '`', (size_t)(e - p))))
		return 0;
	*count = n;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	*info = p;
	while (p < e && *p != ' ' && *p != '\t' && *p != '\r')
		p++;
	*info_end = p;
	return 1;
}

static int blank_from(const char *p, const char *e)
{
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

/* The next line of w: [*s, *e) without its newline, and what it is (for
 * MD_OPEN the info word is [*info, *info_end)); -1 at the end of the text. */
static int md_next(struct md_walk *w, const char **s, const char **e, const char **info,
		   const char **info_end)
{
	const char *nl;
	size_t count;
	char ch;

	if (w->p >= w->end)
		return -1;
	nl = memchr(w->p, '\n', (size_t)(w->end - w->p));
	*s = w->p;
	*e = nl ? nl : w->end;
	w->p = nl ? nl + 1 : w->end;
	if (!fence(*s, *e, &ch, &count, info, info_end))
		return w->ch ? MD_CODE : MD_TEXT;
	if (!w->ch) {
		w->ch = ch;
		w->count = count;
		return MD_OPEN;
	}
	if (ch == w->ch && count >= w->count && blank_from(*info, *e)) {
		w->ch = 0;
		return MD_CLOSE;
	}
	return MD_CODE;
}

/* Adds the name on the line [s, e) to *l unless blank or a comment. */
static int plan_line(const char *s, const char *e, struct recipe_names *l)
{
	char *name;
	size_t n;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (e - s >= 2 && s[0] == '-' && s[1] == ' ') {
		s += 2;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
	}
	if (s == e || *s == '#')
		return 0;
	/* A NUL byte would end the name early (or leave it empty): it stands
	 * as the two characters "\0", which no recipe name holds. */
	name = malloc(2 * (size_t)(e - s) + 1);
	if (!name)
		return -ENOMEM;
	for (n = 0; s < e; s++) {
		if (*s) {
			name[n++] = *s;
		} else {
			name[n++] = '\\';
			name[n++] = '0';
		}
	}
	name[n] = '\0';
	return recipe__names_take(l, name);
}

int recipe_plan_names(const char *plan, size_t len, char ***names)
{
	static const char kind[] = "validation-recipes";
	struct md_walk w = { plan, plan + len, 0, 0 };
	const char *s, *e, *info, *info_end;
	struct recipe_names l = { NULL, 0, 0 };
	int line, ours = 0, rc = 0;

	while (rc == 0 && (line = md_next(&w, &s, &e, &info, &info_end)) >= 0) {
		if (line == MD_OPEN) {
			ours = (size_t)(info_end - info) == sizeof(kind) - 1 &&
			       memcmp(info, kind, sizeof(kind) - 1) == 0;
			if (ours && !(l.v = calloc(1, sizeof(char *))))
				return -ENOMEM;
			l.cap = (size_t)ours;
		} else if (line == MD_CLOSE && ours) {
			break;
		} else if (line == MD_CODE && ours) {
			rc = plan_line(s, e, &l);
		}
	}
	if (rc == 0)
		rc = recipe__names_dedupe(&l);
	if (rc) {
		strv_free(l.v);
		return rc;
	}
	if (!l.v)
		return -ENOENT;
	*names = l.v;
	return 0;
}

/* The bytes [s, e) for a message: at most 40, a control byte (NUL
 * included) as '?', into out[size]. */
static void shown(const char *s, const char *e, char *out, size_t size)
{
	size_t n = 0;

	for (; s < e && n < 40 && n + 1 < size; s++)
		out[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	out[n] = '\0';
}

int recipe_plan_disposition(const char *plan, size_t len, char *out, size_t size)
{
	static const char key[] = "Disposition:";
	struct md_walk md = { plan, plan + len, 0, 0 };
	const char *p, *le, *info, *info_end, *w, *we, *c;
	char word[41];
	int line;

	while ((line = md_next(&md, &p, &le, &info, &info_end)) >= 0) {
		if (line != MD_TEXT || (size_t)(le - p) < sizeof(key) - 1 ||
		    memcmp(p, key, sizeof(key) - 1) != 0)
			continue;
		for (w = p + sizeof(key) - 1; w < le && (*w == ' ' || *w == '\t'); w++)
			;
		for (we = le; we > w && (we[-1] == ' ' || we[-1] == '\t' || we[-1] == '\r'); we--)
			;
		if (we == w || (size_t)(we - w) >= size) {
			snprintf(out, size, "plan.md: \"Disposition:\" needs one word (e.g. duplicate)");
			return -EINVAL;
		}
		for (c = w; c < we; c++) {
			if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
			      *c == '_' || *c == '-')) {
				shown(w, we, word, sizeof(word));
				snprintf(out, size, "plan.md: \"Disposition: %s\" is not one word of "
					 "[a-z0-9._-]", word);
				return -EINVAL;
			}
		}
		snprintf(out, size, "%.*s", (int)(we - w), w);
		return 1;
	}
	return 0;
}

int recipe_plan_header(const char *plan, size_t len, struct plan_header *out, char *err,
		       size_t errlen)
{
	static const char *const keys[] = { "Route:", "Template:", "Engine:", "Review request:" };
	char *slot[4] = { out->route, out->template, out->engine, out->review_request };
	int seen[4] = { 0, 0, 0, 0 };
	struct md_walk md = { plan, plan + len, 0, 0 };
	const char *p, *le, *info, *info_end, *w, *we, *c;
	char shown_value[41];
	size_t k, kl;
	int line;

	for (k = 0; k < 4; k++)
		slot[k][0] = '\0';
	while ((line = md_next(&md, &p, &le, &info, &info_end)) >= 0) {
		if (line != MD_TEXT)
			continue;
		for (k = 0; k < 4; k++) {
			kl = strlen(keys[k]);
			if (!seen[k] && (size_t)(le - p) >= kl && memcmp(p, keys[k], kl) == 0)
				break;
		}
		if (k == 4)
			continue;
		seen[k] = 1;
		for (w = p + kl; w < le && (*w == ' ' || *w == '\t'); w++)
			;
		for (we = le; we > w && (we[-1] == ' ' || we[-1] == '\t' || we[-1] == '\r'); we--)
			;
		if (we == w) {
			snprintf(err, errlen, "plan.md: \"%s\" needs a value", keys[k]);
			return -EINVAL;
		}
		for (c = w; c < we; c++) {
			if ((unsigned char)*c < 0x20 || *c == 0x7f) {
				shown(w, we, shown_value, sizeof(shown_value));
				snprintf(err, errlen, "plan.md: \"%s %s\" holds a control character",
					 keys[k], shown_value);
				return -EINVAL;
			}
		}
		if ((size_t)(we - w) >= PLAN_HEADER_MAX) {
			snprintf(err, errlen, "plan.md: \"%s\" is longer than %d bytes", keys[k],
				 PLAN_HEADER_MAX - 1);
			return -EINVAL;
		}
		snprintf(slot[k], PLAN_HEADER_MAX, "%.*s", (int)(we - w), w);
	}
	return 0;
}

void recipe_doc_marker(const char *text, size_t len, const char *key, char *out, size_t size)
{
	struct md_walk md = { text, text + len, 0, 0 };
	const char *p, *le, *info, *info_end, *w;
	size_t klen = strlen(key), n;
	int line;

	out[0] = '\0';
	while ((line = md_next(&md, &p, &le, &info, &info_end)) >= 0) {
		if (line != MD_TEXT)
			continue;
		for (n = 0; p < le && *p == ' ' && n < 3; n++)
			p++;
		if ((size_t)(le - p) < 4 + klen || memcmp(p, "## ", 3) != 0 ||
		    strncasecmp(p + 3, key, klen) != 0 || p[3 + klen] != ':')
			continue;
		/* (A match holds no NUL byte: key holds none.) */
		for (p += 4 + klen; p < le && (*p == ' ' || *p == '*' || *p == '`'); p++)
			;
		for (w = p; w < le && *w != ' ' && *w != '\t' && *w != '\r' && *w != '*' &&
			    *w != '`'; w++)
			;
		for (n = 0; p < w && n + 1 < size; p++)
			out[n++] = *p ? *p : '?';
		out[n] = '\0';
	}
}

int recipe__md_next(struct md_walk *w, const char **s, const char **e, const char **info,
		    const char **info_end)
{
	return md_next(w, s, e, info, info_end);
}
