/*
 * ctlline.c - the syntax of ctl's command lines (ctlline.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "ctlline.h"

/* Bytes of a line shown before "...". */
#define SHOWN_MAX 60

/* The verbs of SPEC §4 and what their argument names. */
static const struct {
	const char *name;
	enum ctl_arg kind;
} verbs[] = {
	{"advance", CTL_ARG_NONE}, {"run", CTL_ARG_STAGE}, {"rerun", CTL_ARG_RECIPE},
	{"cancel", CTL_ARG_NONE},  {"approve", CTL_ARG_NONE}, {"hold", CTL_ARG_NONE},
	{"release", CTL_ARG_NONE}, {"archive", CTL_ARG_NONE}, {"probe", CTL_ARG_NONE},
};
#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

/* The first words of a line: verb, argument and whether more follow. */
struct words {
	const char *w[2]; /* w[0] the verb, w[1] the first argument */
	size_t len[2];
	int n;            /* words in the line, counted up to 3 (3: two arguments or more) */
};

/* Whether c separates words (a '\r' before the newline counts as one). */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Whether c may not stand in a command line: a control character other
 * than tab and CR (NUL included), or DEL. */
static int is_control(char c)
{
	unsigned char u = (unsigned char)c;

	return (u < 0x20 && !is_space(c)) || u == 0x7f;
}

/* Splits the len bytes at s (no newline) into words. */
static void split(const char *s, size_t len, struct words *out)
{
	size_t i = 0, start;

	memset(out, 0, sizeof(*out));
	while (out->n < 3) {
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && !is_space(s[i]))
			i++;
		if (out->n < 2) {
			out->w[out->n] = s + start;
			out->len[out->n] = i - start;
		}
		out->n++;
	}
}

/* The index in verbs of word 0 of w, or -1. */
static int verb_of(const struct words *w)
{
	size_t i;

	for (i = 0; w->n > 0 && i < NVERBS; i++)
		if (w->len[0] == strlen(verbs[i].name) &&
		    memcmp(w->w[0], verbs[i].name, w->len[0]) == 0)
			return (int)i;
	return -1;
}

static int refuse(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int ctl_line_parse(const char *s, size_t len, struct ctl_line *out, char *why, size_t size)
{
	static const char *const what[] = {"", "stage", "recipe"};
	struct words w;
	size_t i;
	int v;

	memset(out, 0, sizeof(*out));
	if (len > CTL_LINE_MAX)
		return refuse(why, size, "line too long (%zu bytes, at most %d)", len, CTL_LINE_MAX);
	for (i = 0; i < len; i++)
		if (is_control(s[i]))
			return refuse(why, size, "control character (byte 0x%02x) in the line",
				      (unsigned char)s[i]);
	split(s, len, &w);
	if (w.n == 0)
		return refuse(why, size, "empty command");
	v = verb_of(&w);
	if (v < 0) {
		const char *names[NVERBS], *meant;
		char word[16];

		for (i = 0; i < NVERBS; i++)
			names[i] = verbs[i].name;
		meant = NULL;
		if (w.len[0] < sizeof(word)) {
			memcpy(word, w.w[0], w.len[0]);
			word[w.len[0]] = '\0';
			meant = ctl_line_suggest(word, names, NVERBS);
		}
		if (meant)
			return refuse(why, size, "unknown verb (did you mean \"%s\"?)", meant);
		return refuse(why, size, "unknown verb");
	}
	out->verb = verbs[v].name;
	out->kind = verbs[v].kind;
	if (out->kind == CTL_ARG_NONE && w.n > 1)
		return refuse(why, size, "%s takes no argument", out->verb);
	if (out->kind != CTL_ARG_NONE && w.n == 1)
		return refuse(why, size, "%s needs a %s name", out->verb, what[out->kind]);
	if (out->kind != CTL_ARG_NONE && w.n > 2)
		return refuse(why, size, "%s takes one %s name, not more", out->verb,
			      what[out->kind]);
	if (out->kind != CTL_ARG_NONE) {
		out->arg = w.w[1];
		out->arg_len = w.len[1];
	}
	return 0;
}

enum ctl_prefix ctl_line_prefix(const char *s, size_t len, struct ctl_line *out)
{
	struct words w;
	size_t i;
	int v;

	memset(out, 0, sizeof(*out));
	if (len > CTL_LINE_MAX)
		return CTL_PREFIX_NO;
	for (i = 0; i < len; i++)
		if (is_control(s[i]))
			return CTL_PREFIX_NO;
	split(s, len, &w);
	if (w.n == 0)
		return CTL_PREFIX_YES;
	if (w.n == 1 && !is_space(s[len - 1]))
		for (i = 0; i < NVERBS; i++)
			if (w.len[0] < strlen(verbs[i].name) &&
			    memcmp(verbs[i].name, w.w[0], w.len[0]) == 0)
				return CTL_PREFIX_YES;
	v = verb_of(&w);
	if (v < 0 || verbs[v].kind == CTL_ARG_NONE)
		return CTL_PREFIX_NO;
	if (w.n == 1)
		return CTL_PREFIX_YES;
	if (w.n > 2 || is_space(s[len - 1]))
		return CTL_PREFIX_NO; /* the name has ended */
	out->verb = verbs[v].name;
	out->kind = verbs[v].kind;
	out->arg = w.w[1];
	out->arg_len = w.len[1];
	return CTL_PREFIX_NAME;
}

int ctl_line_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_space(s[i]))
			return 0;
	return 1;
}

void ctl_line_shown(const char *s, size_t len, char *out, size_t size)
{
	size_t i, n = 0;

	while (len && is_space(*s))
		s++, len--;
	while (len && is_space(s[len - 1]))
		len--;
	for (i = 0; i < len && i < SHOWN_MAX && n + 4 < size; i++)
		out[n++] = is_control(s[i]) ? '?' : s[i];
	if (i < len && n + 4 <= size) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

const char *ctl_line_suggest(const char *word, const char *const *known, size_t n)
{
	const char **list, *meant;

	if (n == 0)
		return NULL;
	list = malloc((n + 1) * sizeof(*list));
	if (!list)
		return NULL; /* only a hint: none without memory */
	memcpy(list, known, n * sizeof(*list));
	list[n] = NULL;
	meant = config__suggest(word, list);
	free(list);
	return meant;
}
