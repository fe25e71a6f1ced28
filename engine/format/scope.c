/*
 * scope.c - the plan's scope block, its keep patterns and its comparison
 * with a change (scope.h).
 *
 * Design: the block is found with the fenced-block walk recipe_plan.c
 * uses (recipe__md_next), so that a ```scope block quoted inside another
 * block does not count. Patterns are matched by a wildmatch in the manner
 * of git's (wildmatch.c, WM_PATHNAME): libgit2's git_pathspec does not
 * give "a/" + "**" + "/b" its zero-directory match nor keep '*' within a
 * component, so its answers would differ from `git diff -- ':(glob)PAT'`.
 * The match is a recursion over the '*' of the pattern that gives up
 * early (WM_ABORT_ALL when the text ran out, WM_ABORT_TO_STARSTAR when a
 * single '*' met a '/'), so a pattern costs O(len(pattern) * len(path))
 * steps per '*' at worst, not an exponential search. The comparison sorts
 * the planned paths and the changes and finds each by binary search, then
 * matches every changed path against every keep pattern: forty patterns on
 * a thousand paths is forty thousand matches (tests/bench/scope.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe_int.h"
#include "scope.h"

#define WM_NOMATCH 0
#define WM_MATCH 1
#define WM_ABORT_ALL (-1)
#define WM_ABORT_TO_STARSTAR (-2)

/* The end of the bracket expression that starts at p ('['), or NULL when
 * it is not closed. A ']' right after "[" or "[!" is a member. */
static const char *bracket_end(const char *p)
{
	p++;
	if (*p == '!' || *p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p && *p != ']'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p : NULL;
}

/* Whether c is a member of the bracket expression [p, end). */
static int bracket_has(const char *p, const char *end, unsigned char c)
{
	int neg = 0, in = 0;
	unsigned char lo, hi;

	p++;
	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end)
			p++;
		lo = hi = (unsigned char)*p;
		if (p + 2 < end && p[1] == '-') {
			p += 2;
			if (*p == '\\' && p + 1 < end)
				p++;
			hi = (unsigned char)*p;
		}
		if (c >= lo && c <= hi)
			in = 1;
	}
	return in != neg;
}

static int wild(const char *pat, const char *p, const char *text)
{
	const char *prev, *end;
	int match_slash, matched;

	for (; *p; text++, p++) {
		if (!*text && *p != '*')
			return WM_ABORT_ALL;
		switch (*p) {
		case '\\':
			if (p[1])
				p++;
			/* fall through */
		default:
			if (*text != *p)
				return WM_NOMATCH;
			continue;
		case '?':
			if (*text == '/')
				return WM_NOMATCH;
			continue;
		case '[':
			end = bracket_end(p);
			if (!end) {
				if (*text != '[')
					return WM_NOMATCH;
				continue;
			}
			if (*text == '/' || !bracket_has(p, end, (unsigned char)*text))
				return WM_NOMATCH;
			p = end;
			continue;
		case '*':
			if (p[1] == '*') {
				prev = p - 1;
				while (p[1] == '*')
					p++;
				p++;
				/* "**" as a whole component crosses directories. */
				if ((prev < pat || *prev == '/') && (!*p || *p == '/')) {
					if (*p == '/' && wild(pat, p + 1, text) == WM_MATCH)
						return WM_MATCH;
					match_slash = 1;
				} else {
					match_slash = 0;
				}
			} else {
				p++;
				match_slash = 0;
			}
			if (!*p)
				return match_slash || !strchr(text, '/') ? WM_MATCH : WM_NOMATCH;
			for (; *text; text++) {
				matched = wild(pat, p, text);
				if (matched != WM_NOMATCH) {
					if (!match_slash || matched != WM_ABORT_TO_STARSTAR)
						return matched;
				} else if (!match_slash && *text == '/') {
					return WM_ABORT_TO_STARSTAR;
				}
			}
			return WM_ABORT_ALL;
		}
	}
	return *text ? WM_NOMATCH : WM_MATCH;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

int scope_match(const char *pattern, const char *path)
{
	size_t n = strlen(pattern);

	if (!has_glob(pattern)) {
		/* A plain path names itself and everything under it. */
		while (n > 0 && pattern[n - 1] == '/')
			n--;
		return strncmp(path, pattern, n) == 0 && (path[n] == '\0' || path[n] == '/');
	}
	if (n > 0 && pattern[n - 1] == '/') {
		/* "dir*" + "/": the directories it matches, and what they hold. */
		char *dir = strndup(pattern, n - 1);
		const char *s;
		int m = 0;

		if (!dir)
			return 0;
		for (s = strchr(path, '/'); s && !m; s = strchr(s + 1, '/')) {
			char *lead = strndup(path, (size_t)(s - path));

			m = lead && wild(dir, dir, lead) == WM_MATCH;
			free(lead);
		}
		free(dir);
		return m;
	}
	return wild(pattern, pattern, path) == WM_MATCH;
}

void scope_free(struct scope *sc)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		free(sc->v[i].path);
	free(sc->v);
	sc->v = NULL;
	sc->n = 0;
}

/* Why the path (keep: the pattern) [s, e) is malformed, or NULL. */
static const char *bad_path(const char *s, const char *e, int keep)
{
	const char *c, *comp = s;

	if (s == e)
		return "a path is missing";
	if (*s == '/')
		return "an absolute path (paths are relative to the repository root)";
	for (c = s; c <= e; c++) {
		if (c < e && ((unsigned char)*c < 0x20 || *c == 0x7f))
			return "a control character in the path";
		if (c < e && *c != '/')
			continue;
		if ((c - comp == 1 && comp[0] == '.') ||
		    (c - comp == 2 && comp[0] == '.' && comp[1] == '.'))
			return "a \".\" or \"..\" component";
		if (c - comp == 0 && !(keep && c == e))
			return "an empty path component";
		comp = c + 1;
	}
	if (!keep && memchr(s, '*', (size_t)(e - s)))
		return "a glob character in a path (only keep takes patterns)";
	if (!keep && (memchr(s, '?', (size_t)(e - s)) || memchr(s, '[', (size_t)(e - s))))
		return "a glob character in a path (only keep takes patterns)";
	return NULL;
}

/* Reads the line [s, e), line lineno of plan.md, into sc. */
static int scope_line(const char *s, const char *e, int lineno, struct scope *sc, char *err,
		      size_t size)
{
	static const struct {
		const char *word;
		enum scope_verb verb;
	} verbs[] = { { "edit", SCOPE_EDIT }, { "add", SCOPE_ADD }, { "delete", SCOPE_DELETE },
		      { "keep", SCOPE_KEEP } };
	const char *w, *why;
	struct scope_entry *v;
	size_t k, i;
	char *path;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (s == e || *s == '#')
		return 0;
	for (w = s; w < e && *w != ' ' && *w != '\t'; w++)
		;
	for (k = 0; k < sizeof(verbs) / sizeof(verbs[0]); k++)
		if ((size_t)(w - s) == strlen(verbs[k].word) && memcmp(s, verbs[k].word, (size_t)(w - s)) == 0)
			break;
	if (k == sizeof(verbs) / sizeof(verbs[0])) {
		snprintf(err, size, "plan.md: line %d: \"%.*s\" is not edit, add, delete or keep",
			 lineno, (int)(w - s > 40 ? 40 : w - s), s);
		for (path = err; *path; path++)
			if ((unsigned char)*path < 0x20)
				*path = '?';
		return -EINVAL;
	}
	while (w < e && (*w == ' ' || *w == '\t'))
		w++;
	if (memchr(w, '\0', (size_t)(e - w)))
		why = "a NUL byte in the path";
	else
		why = bad_path(w, e, verbs[k].verb == SCOPE_KEEP);
	if (why) {
		snprintf(err, size, "plan.md: line %d: %s %s", lineno, verbs[k].word, why);
		return -EINVAL;
	}
	if (!(path = strndup(w, (size_t)(e - w))))
		return -ENOMEM;
	if (verbs[k].verb == SCOPE_KEEP) {
		const char *c;

		for (c = path; *c; c++) {
			if (*c == '\\' && c[1]) {
				c++;
			} else if (*c == '[' && !(c = bracket_end(c))) {
				snprintf(err, size, "plan.md: line %d: keep an unclosed '[' in the pattern",
					 lineno);
				free(path);
				return -EINVAL;
			}
		}
	}
	for (i = 0; verbs[k].verb != SCOPE_KEEP && i < sc->n; i++) {
		if (sc->v[i].verb != SCOPE_KEEP && strcmp(sc->v[i].path, path) == 0) {
			snprintf(err, size, "plan.md: line %d: %.200s is already planned on line %d",
				 lineno, path, sc->v[i].line);
			free(path);
			return -EINVAL;
		}
	}
	v = realloc(sc->v, (sc->n + 1) * sizeof(*v));
	if (!v) {
		free(path);
		return -ENOMEM;
	}
	sc->v = v;
	sc->v[sc->n++] = (struct scope_entry){ verbs[k].verb, path, lineno };
	return 0;
}

int scope_parse(const char *plan, size_t len, struct scope *sc, char *err, size_t size)
{
	static const char kind[] = "scope";
	struct md_walk w = { plan, plan + len, 0, 0 };
	const char *s, *e, *info, *info_end;
	int line, lineno = 0, ours = 0, found = 0, rc;

	sc->v = NULL;
	sc->n = 0;
	while ((line = recipe__md_next(&w, &s, &e, &info, &info_end)) >= 0) {
		lineno++;
		if (line == MD_OPEN) {
			ours = !found && (size_t)(info_end - info) == sizeof(kind) - 1 &&
			       memcmp(info, kind, sizeof(kind) - 1) == 0;
			found |= ours;
		} else if (line == MD_CLOSE && ours) {
			break;
		} else if (line == MD_CODE && ours) {
			rc = scope_line(s, e, lineno, sc, err, size);
			if (rc)
				return rc;
		}
	}
	return found;
}

/* Appends path to md as a Markdown code span (a fence one backtick longer
 * than its longest run of backticks). */
static int code_span(struct buf *md, const char *path)
{
	size_t run = 0, longest = 0, k;
	const char *c;
	int rc = 0;

	for (c = path; *c; c++) {
		run = *c == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	for (k = 0; k <= longest && rc == 0; k++)
		rc = buf_puts(md, "`");
	if (rc == 0)
		rc = buf_printf(md, "%s%s%s", longest || path[0] == '`' ? " " : "", path,
				longest ? " " : "");
	for (k = 0; k <= longest && rc == 0; k++)
		rc = buf_puts(md, "`");
	return rc;
}

static const char *did_word(char did)
{
	return did == 'A' ? "added" : did == 'D' ? "deleted" : "edited";
}

/* Appends "edited", "added (renamed from `x`)" for change c. */
static int what_done(struct buf *md, const struct scope_change *c)
{
	int rc = buf_puts(md, did_word(c->did));

	if (rc == 0 && c->other) {
		rc = buf_puts(md, c->did == 'D' ? " (renamed to " : " (renamed from ");
		rc = rc ? rc : code_span(md, c->other);
		rc = rc ? rc : buf_puts(md, ")");
	}
	return rc;
}

/* The planned paths and the changes, each sorted by path, so that a
 * lookup is a binary search (a seed plan lists hundreds of paths). */
struct scope_index {
	const char **plan; /* planned paths */
	size_t nplan;
	const struct scope_change **chg; /* changes; equal paths in ch's order */
	size_t n;
};

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_change(const void *a, const void *b)
{
	const struct scope_change *x = *(const struct scope_change *const *)a;
	const struct scope_change *y = *(const struct scope_change *const *)b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x > y) - (x < y);
}

static int index_make(struct scope_index *ix, const struct scope *sc,
		      const struct scope_change *ch, size_t n)
{
	size_t i;

	ix->nplan = 0;
	ix->n = n;
	ix->plan = malloc((sc->n + 1) * sizeof(*ix->plan));
	ix->chg = malloc((n + 1) * sizeof(*ix->chg));
	if (!ix->plan || !ix->chg) {
		free(ix->plan);
		free(ix->chg);
		ix->plan = NULL;
		ix->chg = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < sc->n; i++)
		if (sc->v[i].verb != SCOPE_KEEP)
			ix->plan[ix->nplan++] = sc->v[i].path;
	for (i = 0; i < n; i++)
		ix->chg[i] = &ch[i];
	qsort(ix->plan, ix->nplan, sizeof(*ix->plan), cmp_path);
	qsort(ix->chg, n, sizeof(*ix->chg), cmp_change);
	return 0;
}

static int planned(const struct scope_index *ix, const char *path)
{
	return ix->nplan && bsearch(&path, ix->plan, ix->nplan, sizeof(*ix->plan), cmp_path);
}

/* The first change (in ch's order) of path, or NULL. */
static const struct scope_change *change_of(const struct scope_index *ix, const char *path)
{
	size_t lo = 0, hi = ix->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(ix->chg[mid]->path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && strcmp(ix->chg[lo]->path, path) == 0 ? ix->chg[lo] : NULL;
}

static int kept_by_any(const struct scope *sc, const char *path)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		if (sc->v[i].verb == SCOPE_KEEP && scope_match(sc->v[i].path, path))
			return 1;
	return 0;
}

/* validation/scope.md's sections. */
static int render(const struct scope *sc, const struct scope_index *ix,
		  const struct scope_change *ch, size_t n, const char *head,
		  const struct scope_result *res, struct buf *md)
{
	const struct scope_change *c;
	static const char *verb_word[] = { "edit", "add", "delete", "keep" };
	char summary[96];
	size_t i, j, hits;
	int rc;

	scope_summary(res, summary, sizeof(summary));
	rc = buf_printf(md, "# Scope [%s]\n\nHead: %s\n\n## Planned paths\n\n", summary,
			head && head[0] ? head : "unknown");
	for (i = 0, hits = 0; rc == 0 && i < sc->n; i++) {
		if (sc->v[i].verb == SCOPE_KEEP)
			continue;
		hits++;
		rc = buf_printf(md, "- %s ", verb_word[sc->v[i].verb]);
		rc = rc ? rc : code_span(md, sc->v[i].path);
		rc = rc ? rc : buf_puts(md, ": ");
		c = change_of(ix, sc->v[i].path);
		if (rc == 0)
			rc = c ? what_done(md, c) : buf_puts(md, "untouched");
		rc = rc ? rc : buf_puts(md, "\n");
	}
	if (rc == 0 && !hits)
		rc = buf_puts(md, "None.\n");
	rc = rc ? rc : buf_puts(md, "\n## Outside the plan\n\n");
	for (j = 0, hits = 0; rc == 0 && j < n; j++) {
		if (planned(ix, ch[j].path))
			continue;
		hits++;
		rc = buf_puts(md, "- ");
		rc = rc ? rc : code_span(md, ch[j].path);
		rc = rc ? rc : buf_puts(md, ": ");
		rc = rc ? rc : what_done(md, &ch[j]);
		rc = rc ? rc : buf_puts(md, "\n");
	}
	if (rc == 0 && !hits)
		rc = buf_puts(md, "None.\n");
	rc = rc ? rc : buf_puts(md, "\n## Keep (do not touch)\n\n");
	for (i = 0, hits = 0; rc == 0 && i < sc->n; i++) {
		size_t matched = 0;

		if (sc->v[i].verb != SCOPE_KEEP)
			continue;
		hits++;
		rc = buf_puts(md, "- ");
		rc = rc ? rc : code_span(md, sc->v[i].path);
		rc = rc ? rc : buf_puts(md, ":");
		for (j = 0; rc == 0 && j < n; j++) {
			if (!scope_match(sc->v[i].path, ch[j].path))
				continue;
			rc = buf_puts(md, matched++ ? ", " : " TOUCHED ");
			rc = rc ? rc : code_span(md, ch[j].path);
			rc = rc ? rc : buf_printf(md, " (%s)", did_word(ch[j].did));
		}
		rc = rc ? rc : buf_puts(md, matched ? "\n" : " untouched\n");
	}
	if (rc == 0 && !hits)
		rc = buf_puts(md, "None.\n");
	return rc ? rc : buf_puts(md, "\nGenerated from plan.md's scope block and change.diff — "
				 "do not edit by hand.\n");
}

int scope_check(const struct scope *sc, const struct scope_change *ch, size_t n,
		const char *head, struct buf *md, struct buf *kept, struct scope_result *res)
{
	struct scope_index ix;
	size_t j;
	int rc;

	res->outside = res->kept = 0;
	rc = index_make(&ix, sc, ch, n);
	for (j = 0; j < n && rc == 0; j++) {
		if (!planned(&ix, ch[j].path))
			res->outside++;
		/* A path counted once however many changes name it. */
		if (change_of(&ix, ch[j].path) != &ch[j] || !kept_by_any(sc, ch[j].path))
			continue;
		if (kept)
			rc = buf_printf(kept, "%s%s", res->kept ? ", " : "", ch[j].path);
		res->kept++;
	}
	if (rc == 0 && md)
		rc = render(sc, &ix, ch, n, head, res, md);
	free(ix.plan);
	free(ix.chg);
	return rc;
}

void scope_summary(const struct scope_result *r, char *out, size_t size)
{
	if (!r->outside && !r->kept)
		snprintf(out, size, "clean");
	else if (!r->outside)
		snprintf(out, size, "%zu kept path%s touched", r->kept, r->kept == 1 ? "" : "s");
	else if (!r->kept)
		snprintf(out, size, "%zu outside the plan", r->outside);
	else
		snprintf(out, size, "%zu kept path%s touched, %zu outside the plan", r->kept,
			 r->kept == 1 ? "" : "s", r->outside);
}
