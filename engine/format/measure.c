/*
 * measure.c - measured recipes' header lines, metrics and statistics (see
 * measure.h).
 *
 * Design: numbers are read with strtod and must be finite and whole-word
 * (nothing after them). The interval of head/base is the one that goes
 * with the Hodges-Lehmann estimate of a shift between the sides (Bauer
 * 1972; Hollander & Wolfe, "Nonparametric Statistical Methods", 4.3): the
 * N = nbase*nhead pairwise differences log(head_j) - log(base_i), sorted,
 * from the k-th smallest to the k-th largest, where k - 1 is the largest
 * value of the Mann-Whitney statistic U whose lower tail P(U <= k - 1) is
 * at most 2.5%. Under "head = base times a factor, plus the same noise"
 * it covers the factor with at least 95% probability whatever the noise's
 * distribution and however few the runs; with too few runs for that
 * (fewer than 4 a side, or 3 against 4) it is unbounded, 0-inf. U's
 * distribution is exact (counted) up to MEASURE_EXACT_MAX values a side,
 * normal (continuity-corrected) above. Deterministic: no resampling.
 *
 * No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "measure.h"

static void set_err(char *err, size_t size, const char *fmt, const char *a, const char *b)
{
	if (size)
		snprintf(err, size, fmt, a, b);
}

/* 1 when s[0..n) is 1..max characters of [A-Za-z0-9_.:/-]. */
static int word_ok(const char *s, size_t n, size_t max)
{
	size_t i;

	if (n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ':' || c == '/' || c == '-'))
			return 0;
	}
	return 1;
}

/* The finite number that is all of s, into *out; -1 when s is none. */
static int number(const char *s, double *out)
{
	char *end;

	if (!*s || *s == ' ' || *s == '\t')
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(*out))
		return -1;
	return 0;
}

/* The whole number 0..MEASURE_RUNS_MAX that is all of s (digits only), or -1. */
static int count(const char *s)
{
	int v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > MEASURE_RUNS_MAX)
			return -1;
	}
	return v;
}

static int fail(struct recipe_measure *m, const char *key, const char *value, const char *why)
{
	size_t n;

	if (m->error)
		return 1;
	n = strlen(key) + strlen(value) + strlen(why) + 16;
	m->error = malloc(n);
	if (!m->error)
		return -ENOMEM;
	if (*value)
		snprintf(m->error, n, "# %s: %s: %s", key, value, why);
	else
		snprintf(m->error, n, "# %s: %s", key, why);
	return 1;
}

/* "# budget: METRIC +P%". */
static int take_budget(struct recipe_measure *m, const char *value)
{
	const char *sp = value + strcspn(value, " \t"), *p = sp + strspn(sp, " \t");
	char num[64];
	size_t i, n = strlen(p);
	struct measure_budget *nb;
	double pct;

	if (!word_ok(value, (size_t)(sp - value), MEASURE_NAME_MAX))
		return fail(m, "budget", value, "the metric's name must be 1-64 characters of "
				"[A-Za-z0-9_.:/-], then +P%");
	if (n < 3 || p[0] != '+' || p[n - 1] != '%' || n - 2 >= sizeof(num))
		return fail(m, "budget", value, "the budget must be written +P% (e.g. +2%)");
	memcpy(num, p + 1, n - 2);
	num[n - 2] = '\0';
	if (number(num, &pct) || pct < 0 || pct > 1000)
		return fail(m, "budget", value, "P in +P% must be a number from 0 to 1000");
	for (i = 0; i < m->nbudgets; i++)
		if (strlen(m->budgets[i].metric) == (size_t)(sp - value) &&
		    memcmp(m->budgets[i].metric, value, (size_t)(sp - value)) == 0)
			return fail(m, "budget", value, "a second budget for the same metric");
	nb = realloc(m->budgets, (m->nbudgets + 1) * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	m->budgets = nb;
	memcpy(nb[m->nbudgets].metric, value, (size_t)(sp - value));
	nb[m->nbudgets].metric[sp - value] = '\0';
	nb[m->nbudgets].percent = pct;
	m->nbudgets++;
	return 1;
}

int measure_take(struct recipe_measure *m, const char *key, const char *value)
{
	int v;

	if (strcmp(key, "measure") == 0) {
		if (m->measured)
			return fail(m, key, value, "given twice");
		if (strcmp(value, "base") != 0)
			return fail(m, key, value, "the only measure is \"base\" (the item's merge-base)");
		m->measured = 1;
		return 1;
	}
	if (strcmp(key, "repeat") == 0 || strcmp(key, "warmup") == 0) {
		int rep = key[0] == 'r', *have = rep ? &m->have_repeat : &m->have_warmup;

		if (*have)
			return fail(m, key, value, "given twice");
		*have = 1;
		v = count(value);
		if (v < 0 || (rep && v == 0))
			return fail(m, key, value, rep ? "not a whole number from 1 to 1000" :
						    "not a whole number from 0 to 1000");
		if (rep)
			m->repeat = v;
		else
			m->warmup = v;
		return 1;
	}
	if (strcmp(key, "budget") == 0)
		return take_budget(m, value);
	return 0;
}

int measure_finish(struct recipe_measure *m)
{
	const char *key = m->have_repeat ? "repeat" : m->have_warmup ? "warmup" :
			  m->nbudgets ? "budget" : NULL;

	if (m->measured || !key)
		return 0;
	return fail(m, key, "", "needs \"# measure: base\"") < 0 ? -ENOMEM : 0;
}

int measure_repeat(const struct recipe_measure *m)
{
	return m->repeat > 0 ? m->repeat : MEASURE_REPEAT_DEFAULT;
}

int measure_copy(struct recipe_measure *dst, const struct recipe_measure *src)
{
	*dst = *src;
	dst->budgets = NULL;
	dst->error = NULL;
	if (src->nbudgets) {
		dst->budgets = malloc(src->nbudgets * sizeof(*dst->budgets));
		if (!dst->budgets)
			goto nomem;
		memcpy(dst->budgets, src->budgets, src->nbudgets * sizeof(*dst->budgets));
	}
	if (src->error && !(dst->error = strdup(src->error)))
		goto nomem;
	return 0;
nomem:
	measure_clear(dst);
	return -ENOMEM;
}

void measure_clear(struct recipe_measure *m)
{
	if (!m)
		return;
	free(m->budgets);
	free(m->error);
	memset(m, 0, sizeof(*m));
}

/* Sets out's metric name (to value, unit, higher), adding it when new. */
static int put(struct measure_values *out, const char *name, size_t nlen, double value,
	       const char *unit, size_t ulen, int higher)
{
	struct measure_value *v = NULL;
	size_t i;

	for (i = 0; i < out->n; i++)
		if (strlen(out->v[i].name) == nlen && memcmp(out->v[i].name, name, nlen) == 0)
			v = &out->v[i];
	if (!v) {
		if (util_grow(&out->v, &out->cap, out->n, sizeof(*out->v), 8))
			return -ENOMEM;
		v = &out->v[out->n++];
		memcpy(v->name, name, nlen);
		v->name[nlen] = '\0';
	}
	v->value = value;
	memcpy(v->unit, unit, ulen);
	v->unit[ulen] = '\0';
	v->higher = higher;
	return 0;
}

/* One METRIC line's words after "METRIC" (line[0..n), no newline). */
static int parse_line(const char *line, size_t n, struct measure_values *out, char *err, size_t size)
{
	char copy[256], whole[256], *w[6], *save = NULL, *t;
	int nw = 0, higher = 0, i;
	const char *unit = "";
	double v;

	if (n >= sizeof(copy)) {
		set_err(err, size, "a METRIC line longer than %s bytes%s", "255", "");
		return -EINVAL;
	}
	memcpy(copy, line, n);
	copy[n] = '\0';
	if (n && copy[n - 1] == '\r')
		copy[n - 1] = '\0';
	memcpy(whole, copy, n + 1);
	for (t = strtok_r(copy, " \t", &save); t && nw < 6; t = strtok_r(NULL, " \t", &save))
		w[nw++] = t;
	if (nw < 3 || nw > 5) {
		set_err(err, size, "%s: a METRIC line is METRIC NAME VALUE [UNIT] [lower|higher]%s",
			whole, "");
		return -EINVAL;
	}
	if (!word_ok(w[1], strlen(w[1]), MEASURE_NAME_MAX)) {
		set_err(err, size, "METRIC %s: the name must be 1-64 characters of [A-Za-z0-9_.:/-]%s",
			w[1], "");
		return -EINVAL;
	}
	if (number(w[2], &v)) {
		set_err(err, size, "METRIC %s: value \"%s\" is no finite number", w[1], w[2]);
		return -EINVAL;
	}
	for (i = 3; i < nw; i++) {
		if (i == nw - 1 && (strcmp(w[i], "lower") == 0 || strcmp(w[i], "higher") == 0)) {
			higher = w[i][0] == 'h';
		} else if (i == 3 && word_ok(w[i], strlen(w[i]), MEASURE_UNIT_MAX) &&
			   strcmp(w[i], "lower") != 0 && strcmp(w[i], "higher") != 0) {
			unit = w[i];
		} else {
			set_err(err, size, "METRIC %s: \"%s\" is neither a unit (1-16 characters of "
				"[A-Za-z0-9_.:/-]) nor lower or higher, in that order", w[1], w[i]);
			return -EINVAL;
		}
	}
	return put(out, w[1], strlen(w[1]), v, unit, strlen(unit), higher);
}

int measure_parse_lines(const char *text, size_t len, struct measure_values *out, char *err,
			size_t size)
{
	const char *p = text, *end = text + len, *nl;
	int rc;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) >= 7 && memcmp(p, "METRIC", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
			rc = parse_line(p, (size_t)(nl - p), out, err, size);
			if (rc)
				return rc;
		}
		p = nl + 1;
	}
	return 0;
}

int measure_parse_json(const char *text, size_t len, struct measure_values *out, char *err,
		       size_t size)
{
	cJSON *root = cJSON_ParseWithLength(text, len), *m, *v, *u, *b;
	int rc = 0;

	if (!cJSON_IsObject(root)) {
		set_err(err, size, "$PACKET_METRICS: not a JSON object%s%s", "", "");
		cJSON_Delete(root);
		return -EINVAL;
	}
	cJSON_ArrayForEach(m, root) {
		const char *unit = "";
		int higher = 0;

		if (!word_ok(m->string, strlen(m->string), MEASURE_NAME_MAX)) {
			set_err(err, size, "$PACKET_METRICS: \"%s\": the name must be 1-64 characters "
				"of [A-Za-z0-9_.:/-]%s", m->string, "");
			rc = -EINVAL;
			break;
		}
		v = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "value") : m;
		u = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "unit") : NULL;
		b = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "better") : NULL;
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
			set_err(err, size, "$PACKET_METRICS: \"%s\": %s", m->string,
				"no finite number as its value");
			rc = -EINVAL;
			break;
		}
		if (u && (!cJSON_IsString(u) ||
			  (*u->valuestring &&
			   !word_ok(u->valuestring, strlen(u->valuestring), MEASURE_UNIT_MAX)))) {
			set_err(err, size, "$PACKET_METRICS: \"%s\": %s", m->string,
				"\"unit\" must be 1-16 characters of [A-Za-z0-9_.:/-]");
			rc = -EINVAL;
			break;
		}
		if (b && (!cJSON_IsString(b) || (strcmp(b->valuestring, "lower") != 0 &&
						 strcmp(b->valuestring, "higher") != 0))) {
			set_err(err, size, "$PACKET_METRICS: \"%s\": %s", m->string,
				"\"better\" must be \"lower\" or \"higher\"");
			rc = -EINVAL;
			break;
		}
		if (u)
			unit = u->valuestring;
		higher = b && strcmp(b->valuestring, "higher") == 0;
		rc = put(out, m->string, strlen(m->string), v->valuedouble, unit, strlen(unit), higher);
		if (rc)
			break;
	}
	cJSON_Delete(root);
	return rc;
}

char *measure_values_json(const struct measure_values *v)
{
	cJSON *root = cJSON_CreateObject(), *m;
	char *out = NULL;
	size_t i;

	for (i = 0; root && i < v->n; i++) {
		m = cJSON_AddObjectToObject(root, v->v[i].name);
		if (!m || !cJSON_AddNumberToObject(m, "value", v->v[i].value) ||
		    !cJSON_AddStringToObject(m, "unit", v->v[i].unit) ||
		    !cJSON_AddStringToObject(m, "better", v->v[i].higher ? "higher" : "lower"))
			goto out;
	}
	if (root)
		out = cJSON_PrintUnformatted(root);
out:
	cJSON_Delete(root);
	return out;
}

void measure_values_clear(struct measure_values *out)
{
	if (!out)
		return;
	free(out->v);
	memset(out, 0, sizeof(*out));
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double measure_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The null distribution of the Mann-Whitney statistic U for sides of m
 * and n values: cdf[u] = P(U <= u) for u = 0..m*n, exact. w(a, b, u), the
 * number of orderings of a and b values with U = u, obeys w(a, b, u) =
 * w(a, b - 1, u) + w(a - 1, b, u - b); the table holds w(a, b, .) for all
 * a <= m of the current b. Used for m, n <= MEASURE_EXACT_MAX. Returns 0
 * or -ENOMEM.
 */
static int mw_cdf(size_t m, size_t n, double *cdf)
{
	size_t N = m * n, a, b, u, stride = N + 1;
	double *w = calloc((m + 1) * stride, sizeof(double)), total = 0;

	if (!w)
		return -ENOMEM;
	for (a = 0; a <= m; a++)
		w[a * stride] = 1; /* b = 0: one ordering, U = 0 */
	for (b = 1; b <= n; b++)
		for (a = 1; a <= m; a++) /* row a, still of b - 1, plus row a - 1, already of b */
			for (u = b; u <= N; u++)
				w[a * stride + u] += w[(a - 1) * stride + u - b];
	for (u = 0; u <= N; u++)
		total += w[m * stride + u];
	for (u = 0; u <= N; u++)
		cdf[u] = (u ? cdf[u - 1] : 0) + w[m * stride + u] / total;
	free(w);
	return 0;
}

/*
 * How many of the N = m*n sorted pairwise differences lie below the 95%
 * interval's lower end (and, by symmetry, above its upper end): the
 * largest k with P(U <= k - 1) <= 0.025, 0 when even U = 0 is likelier
 * (the interval is then unbounded). Exact for small sides, else the
 * normal approximation with continuity correction. -ENOMEM.
 */
static long mw_cut(size_t m, size_t n)
{
	double N = (double)m * (double)n, *cdf, sd;
	long k = 0;

	if (m <= MEASURE_EXACT_MAX && n <= MEASURE_EXACT_MAX) {
		cdf = malloc((m * n + 1) * sizeof(double));
		if (!cdf || mw_cdf(m, n, cdf)) {
			free(cdf);
			return -ENOMEM;
		}
		while ((double)k < N / 2 && cdf[k] <= 0.025 + 1e-12)
			k++;
		free(cdf);
		return k;
	}
	sd = sqrt(N * (double)(m + n + 1) / 12);
	k = (long)floor(N / 2 - 0.5 - 1.959963984540054 * sd) + 1;
	return k < 0 ? 0 : k;
}

int measure_compare(const double *base, size_t nbase, const double *head, size_t nhead,
		    struct measure_stats *out)
{
	double *b, *h, *d = NULL, scale;
	size_t i, j, N = nbase * nhead;
	int logs = 1;
	long k;

	memset(out, 0, sizeof(*out));
	if (!nbase || !nhead)
		return -EINVAL;
	b = malloc((nbase + nhead) * sizeof(double));
	if (!b)
		return -ENOMEM;
	h = b + nbase;
	out->nbase = nbase;
	out->nhead = nhead;
	memcpy(b, base, nbase * sizeof(double));
	memcpy(h, head, nhead * sizeof(double));
	out->base_median = measure_median(b, nbase);
	out->head_median = measure_median(h, nhead);
	out->base_min = b[0];
	out->base_max = b[nbase - 1];
	out->head_min = h[0];
	out->head_max = h[nhead - 1];
	out->ratio = out->base_median != 0 ? out->head_median / out->base_median : NAN;
	out->ci_low = out->ci_high = NAN;
	if (!(out->base_median > 0))
		goto done;
	/* Logs when every value is positive (a change by a factor), else
	 * differences in units of the base median (a change by an amount). */
	logs = b[0] > 0 && h[0] > 0;
	scale = out->base_median;
	k = mw_cut(nbase, nhead);
	if (k == 0) {
		out->ci_low = logs ? 0 : -INFINITY;
		out->ci_high = INFINITY;
		goto done;
	}
	if (k < 0 || !(d = malloc(N * sizeof(double)))) {
		free(b);
		return -ENOMEM;
	}
	for (i = 0; i < nbase; i++)
		for (j = 0; j < nhead; j++)
			d[i * nhead + j] = logs ? log(h[j]) - log(b[i]) : (h[j] - b[i]) / scale;
	qsort(d, N, sizeof(double), dcmp);
	out->ci_low = logs ? exp(d[k - 1]) : 1 + d[k - 1];
	out->ci_high = logs ? exp(d[N - (size_t)k]) : 1 + d[N - (size_t)k];
done:
	free(d);
	free(b);
	return 0;
}

int measure_over_budget(const struct measure_stats *st, int higher, double percent)
{
	if (isnan(st->ci_low) || isnan(st->ci_high))
		return 0;
	if (higher)
		return st->ci_high < 1 - percent / 100;
	return st->ci_low > 1 + percent / 100;
}
