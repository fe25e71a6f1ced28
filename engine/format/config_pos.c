/*
 * config_pos.c - where in the text of pipeline.json a refused field is,
 * which allowed key an unknown one was likely meant to be (config_int.h),
 * and the text with another "repo" (config_set_repo, config.h).
 *
 * Design: cJSON keeps no offsets, so a refusal's field path ("stages[2].run",
 * as config__join makes them) is followed again through the text, which
 * cJSON has already accepted as JSON: a small scanner skips whole values
 * (strings with their escapes, nested objects and arrays) to reach the key
 * or array element the path names. Keys are compared as written between
 * their quotes; a path that cannot be followed (a key with escapes or a '.'
 * in it, a field that is missing) has no position. With repeated keys the
 * first is found. Cost: one pass over the text at most.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* p at '"': just past the closing quote. */
static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

/* p at a value: just past it. */
static const char *skip_value(const char *p)
{
	int depth = 0;

	if (*p == '"')
		return skip_string(p);
	if (*p != '{' && *p != '[') {
		while (*p && !strchr(",]} \t\r\n", *p))
			p++;
		return p;
	}
	do {
		if (*p == '"') {
			p = skip_string(p);
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		p++;
	} while (*p && depth > 0);
	return p;
}

/* p at an object: the key key[len] in it (at its opening quote), or NULL. */
static const char *find_key(const char *p, const char *key, size_t len)
{
	const char *k;

	if (*p != '{')
		return NULL;
	p = skip_ws(p + 1);
	while (*p == '"') {
		k = p;
		p = skip_string(p);
		if ((size_t)(p - k) == len + 2 && memcmp(k + 1, key, len) == 0)
			return k;
		p = skip_ws(p);
		if (*p != ':')
			return NULL;
		p = skip_value(skip_ws(p + 1));
		p = skip_ws(p);
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
	return NULL;
}

/* p at an array: its element n, or NULL. */
static const char *find_element(const char *p, unsigned long n)
{
	if (*p != '[')
		return NULL;
	p = skip_ws(p + 1);
	while (*p && *p != ']') {
		if (n-- == 0)
			return p;
		p = skip_ws(skip_value(p));
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
	return NULL;
}

int config__locate(const char *text, const char *path, int *line, int *col)
{
	const char *p = skip_ws(text), *at = NULL, *c = path, *q;
	size_t len;

	while (*c) {
		if (*c == '[') {
			char *e;
			unsigned long n = strtoul(c + 1, &e, 10);

			if (*e != ']')
				return -1;
			at = p = find_element(p, n);
			c = e + 1;
		} else {
			len = strcspn(c, ".[");
			at = find_key(p, c, len);
			if (!at)
				return -1;
			/* Go on at the key's value. */
			q = skip_ws(skip_string(at));
			p = *q == ':' ? skip_ws(q + 1) : q;
			c += len;
		}
		if (!at)
			return -1;
		if (*c == '.')
			c++;
	}
	if (!at)
		return -1;
	*line = 1;
	*col = 1;
	for (q = text; q < at; q++) {
		if (*q == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
	return 0;
}

/* The edit distance of a and b with adjacent transpositions counted as one
 * (optimal string alignment); both shorter than 64 bytes. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[65][65], best;

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

const char *config__suggest(const char *key, const char *const *known)
{
	const char *best = NULL;
	size_t i, d, best_d = (size_t)-1, len = strlen(key);

	for (i = 0; known && known[i]; i++) {
		d = distance(key, known[i]);
		if (d < best_d) {
			best_d = d;
			best = known[i];
		}
	}
	/* Close enough to be a slip: at most 2 edits, and at most a third
	 * of the key for short keys. */
	if (!best || best_d > 2 || best_d * 3 > (len > 3 ? len : 3))
		return NULL;
	return best;
}

char *config_set_repo(const char *json, const char *repo)
{
	const char *p = skip_ws(json), *at, *v, *end, *first;
	cJSON *j = cJSON_CreateString(repo);
	char *q = j ? cJSON_PrintUnformatted(j) : NULL, *out = NULL;
	size_t ql, n;

	cJSON_Delete(j);
	if (!q || *p != '{')
		goto done;
	ql = strlen(q);
	at = find_key(p, "repo", 4);
	if (at) { /* the value replaced */
		v = skip_ws(skip_string(at));
		if (*v != ':')
			goto done;
		v = skip_ws(v + 1);
		end = skip_value(v);
		n = strlen(json) - (size_t)(end - v) + ql + 1;
		out = malloc(n);
		if (out)
			snprintf(out, n, "%.*s%s%s", (int)(v - json), json, q, end);
		goto done;
	}
	/* A first member, with the blank that comes before the next one. */
	first = skip_ws(p + 1);
	n = strlen(json) + 2 * (size_t)(first - p) + ql + 16;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%.*s\"repo\": %s%s%.*s%s", (int)(first - json), json, q,
			 *first == '}' ? "" : ",", *first == '}' ? 0 : (int)(first - p - 1), p + 1,
			 first);
done:
	free(q);
	return out;
}
