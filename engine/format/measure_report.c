/*
 * measure_report.c - a measured recipe's verdict and the text of
 * validation/measurements.md (see measure.h).
 *
 * Design: every number goes through measure_compare, so the file shows
 * exactly what the verdict read; numbers are printed with %.4g (the ratio
 * with %.3f and the change in percent with %+.1f%%), so equal runs give an
 * equal file. A metric's budget is found by name in the recipe's budget
 * lines; a budget line naming a metric that no run reported fails the
 * recipe, since a typo must not let a regression through.
 *
 * measure_parse_row reads a table row back (junit.xml's measurements
 * suite): the row's cells never hold " | " (names and units come from
 * [A-Za-z0-9_.:/-], the rest are numbers and fixed words).
 *
 * No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"

/* The budget line of r for metric name, or NULL. */
static const struct measure_budget *budget_of(const struct measure_recipe_runs *r,
					      const char *name)
{
	size_t i;

	for (i = 0; r->measure && i < r->measure->nbudgets; i++)
		if (strcmp(r->measure->budgets[i].metric, name) == 0)
			return &r->measure->budgets[i];
	return NULL;
}

/* The metric of r named name, or NULL. */
static const struct measure_metric_runs *metric_of(const struct measure_recipe_runs *r,
						   const char *name)
{
	size_t i;

	for (i = 0; i < r->nmetrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}

static void say(char *why, size_t size, const char *fmt, const char *name, double a, double b,
		double c, double pct)
{
	if (size)
		snprintf(why, size, fmt, name, a, b, c, pct);
}

int measure_verdict(const struct measure_recipe_runs *r, char *why, size_t size)
{
	const struct measure_budget *b;
	struct measure_stats st;
	size_t i;
	int rc;

	if (size)
		why[0] = '\0';
	for (i = 0; r->measure && i < r->measure->nbudgets; i++)
		if (!metric_of(r, r->measure->budgets[i].metric)) {
			if (size)
				snprintf(why, size, "%s: the budget's metric was not reported by any run",
					 r->measure->budgets[i].metric);
			return MEASURE_FAILING;
		}
	if (r->nmetrics == 0) {
		if (size)
			snprintf(why, size, "no run reported a metric");
		return MEASURE_INCOMPLETE;
	}
	for (i = 0; i < r->nmetrics; i++) {
		const struct measure_metric_runs *m = &r->metrics[i];

		if (!m->nbase || !m->nhead) {
			if (size)
				snprintf(why, size, "%s: no %s run reported it", m->name,
					 m->nbase ? "head" : "base");
			return MEASURE_INCOMPLETE;
		}
	}
	for (i = 0; i < r->nmetrics; i++) {
		const struct measure_metric_runs *m = &r->metrics[i];

		b = budget_of(r, m->name);
		if (!b)
			continue;
		rc = measure_compare(m->base, m->nbase, m->head, m->nhead, &st);
		if (rc)
			return rc;
		if (measure_over_budget(&st, m->higher, b->percent)) {
			say(why, size, "%s: head/base %.3f, 95%% CI %.3f-%.3f, beyond the +%g%% budget",
			    m->name, st.ratio, st.ci_low, st.ci_high, b->percent);
			return MEASURE_FAILING;
		}
	}
	return MEASURE_VALIDATED;
}

static const char *verdict_word(int v)
{
	return v == MEASURE_VALIDATED ? "validated" : v == MEASURE_FAILING ? "failing" : "incomplete";
}

/* One metric's table row. */
static int row(const struct measure_recipe_runs *r, const struct measure_metric_runs *m,
	       struct buf *out)
{
	const struct measure_budget *b = budget_of(r, m->name);
	struct measure_stats st;
	char ratio[64] = "-", ci[64] = "-", budget[64] = "none", kept[64] = "-";
	int rc;

	if (!m->nbase || !m->nhead)
		return buf_printf(out, "| %s | %s | %s | - | - | - | - | - | - | %s | a side has no runs |\n",
				  m->name, m->unit[0] ? m->unit : "-", m->higher ? "higher" : "lower",
				  b ? "see budget" : "none") < 0 ? -ENOMEM : 0;
	rc = measure_compare(m->base, m->nbase, m->head, m->nhead, &st);
	if (rc)
		return rc;
	if (!isnan(st.ratio))
		snprintf(ratio, sizeof(ratio), "%.3f (%+.1f%%)", st.ratio, (st.ratio - 1) * 100);
	if (!isnan(st.ci_low))
		snprintf(ci, sizeof(ci), "%.3f-%.3f", st.ci_low, st.ci_high);
	if (b) {
		snprintf(budget, sizeof(budget), "+%g%%", b->percent);
		snprintf(kept, sizeof(kept), "%s", measure_over_budget(&st, m->higher, b->percent)
							   ? "worse beyond budget" : "kept");
	}
	rc = buf_printf(out, "| %s | %s | %s | %.4g | %.4g | %s | %.4g-%.4g | %.4g-%.4g | %s | %s | %s |\n",
			m->name, m->unit[0] ? m->unit : "-", m->higher ? "higher" : "lower",
			st.base_median, st.head_median, ratio, st.base_min, st.base_max, st.head_min,
			st.head_max, ci, budget, kept);
	return rc < 0 ? -ENOMEM : 0;
}

int measure_render(const struct measure_recipe_runs *v, size_t n, struct buf *out)
{
	char why[256];
	size_t i, k;
	int verdict, rc = 0;

	if (buf_puts(out, "# Measurements\n\n"))
		return -ENOMEM;
	if (n == 0)
		return buf_puts(out, "No measured recipe (# measure: base) has run at this head.\n")
			       ? -ENOMEM : 0;
	for (i = 0; i < n && !rc; i++) {
		const struct measure_recipe_runs *r = &v[i];
		size_t most_b = 0, most_h = 0;

		verdict = measure_verdict(r, why, sizeof(why));
		if (verdict < 0)
			return verdict;
		for (k = 0; k < r->nmetrics; k++) {
			most_b = r->metrics[k].nbase > most_b ? r->metrics[k].nbase : most_b;
			most_h = r->metrics[k].nhead > most_h ? r->metrics[k].nhead : most_h;
		}
		rc = buf_printf(out, "## %s: %s%s%s\n\nBase `%.12s` against head `%.12s`: %zu base "
				"and %zu head runs counted (repeat %d, warmup %d a side, discarded), "
				"base and head alternating.\n\n",
				r->recipe, verdict_word(verdict), why[0] ? " - " : "", why,
				r->base_commit[0] ? r->base_commit : "unknown",
				r->head_commit[0] ? r->head_commit : "unknown", most_b, most_h,
				r->measure ? measure_repeat(r->measure) : MEASURE_REPEAT_DEFAULT,
				r->measure ? r->measure->warmup : 0) < 0 ? -ENOMEM : 0;
		if (!rc && r->nmetrics)
			rc = buf_puts(out, "| metric | unit | better | base median | head median | "
					   "head/base | base min-max | head min-max | 95% CI of head/base "
					   "| budget | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
				     ? -ENOMEM : 0;
		for (k = 0; !rc && k < r->nmetrics; k++)
			rc = row(r, &r->metrics[k], out);
		if (!rc && buf_puts(out, "\n"))
			rc = -ENOMEM;
	}
	if (!rc && buf_puts(out, "The interval is the 95% confidence interval of the "
				 "Hodges-Lehmann shift between the logarithms of the two sides "
				 "(distribution-free, from the Mann-Whitney statistic: at least 95% "
				 "coverage whatever the noise; unbounded, 0-inf, with fewer than 4 runs "
				 "a side). A budget +P% fails the recipe when the whole interval lies "
				 "beyond 1 + P/100 (lower is better) or below 1 - P/100 (higher is "
				 "better).\n"))
		rc = -ENOMEM;
	return rc;
}

/* Whether s is 1..max characters of [A-Za-z0-9_.:/-] ("-" allowed). */
static int word_ok(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/-",
			    s[i]))
			return 0;
	return 1;
}

static int row_cells(const char *line, size_t len, struct measure_row *row)
{
	char *const cell[11] = { row->metric, row->unit, row->better, row->base_median,
				 row->head_median, row->ratio, row->base_range, row->head_range,
				 row->ci, row->budget, row->verdict };
	const size_t size[11] = { sizeof(row->metric), sizeof(row->unit), sizeof(row->better),
				  sizeof(row->base_median), sizeof(row->head_median),
				  sizeof(row->ratio), sizeof(row->base_range),
				  sizeof(row->head_range), sizeof(row->ci), sizeof(row->budget),
				  sizeof(row->verdict) };
	const char *p = line, *end = line + len, *bar;
	size_t k, n;

	memset(row, 0, sizeof(*row));
	if (len < 4 || memcmp(line, "| ", 2) != 0 || memcmp(end - 2, " |", 2) != 0)
		return -EINVAL;
	p += 2;
	for (k = 0; k < 11; k++) {
		for (bar = p; bar + 3 <= end && memcmp(bar, " | ", 3) != 0; bar++)
			;
		if (k == 10)
			bar = end - 2;
		else if (bar + 3 > end)
			return -EINVAL;
		if (bar < p)
			return -EINVAL;
		n = (size_t)(bar - p);
		if (n == 0 || n >= size[k] || memchr(p, '\0', n) || memchr(p, '|', n))
			return -EINVAL;
		memcpy(cell[k], p, n);
		cell[k][n] = '\0';
		p = bar + 3;
	}
	if (!word_ok(row->metric, MEASURE_NAME_MAX) || !word_ok(row->unit, MEASURE_UNIT_MAX) ||
	    (strcmp(row->better, "lower") != 0 && strcmp(row->better, "higher") != 0))
		return -EINVAL;
	return 0;
}

int measure_parse_row(const char *line, size_t len, struct measure_row *row)
{
	int rc = row_cells(line, len, row);

	if (rc)
		memset(row, 0, sizeof(*row));
	return rc;
}
