/*
 * measure.h - measured recipes (SPEC §6 "Measured recipes"): the header
 * lines that make a recipe measured, the metrics a run reports, and the
 * statistics that compare the base's runs with the head's.
 *
 * Header lines (within a recipe's first 30 lines, read by recipe.c):
 *
 *   # measure: base        the recipe is measured against the item's base
 *   # repeat: N            runs a side that count, 1..1000 (default 5)
 *   # warmup: K            runs a side before them, discarded, 0..1000 (default 0)
 *   # budget: METRIC +P%   the head may be worse than the base in METRIC by
 *                          at most P percent (0 <= P <= 1000), one line a metric
 *
 * Each of measure, repeat and warmup may appear once; repeat, warmup and
 * budget need a measure line. The first bad line is kept as the recipe's
 * measure error, a sentence naming the line and why ("# repeat: x: not a
 * whole number from 1 to 1000"); a recipe with one is blocked with it and
 * runs nothing.
 *
 * Metrics. A run reports each metric as one line of its standard output,
 *
 *   METRIC NAME VALUE [UNIT] [lower|higher]
 *
 * ("METRIC" at the start of the line, words separated by blanks; NAME of
 * 1-64 characters from [A-Za-z0-9_.:/-], VALUE a finite decimal number,
 * UNIT 1-16 characters from the same set, "lower" (the default) or
 * "higher" the better direction), or as a JSON object in the file named by
 * $PACKET_METRICS: {"NAME": {"value": V, "unit": "s", "better": "lower"}}
 * or {"NAME": V}. A metric reported twice keeps its last value.
 *
 * Statistics. Per metric: the median, minimum and maximum of each side,
 * the ratio head median / base median, and a 95% confidence interval for
 * head/base: the distribution-free interval of the Hodges-Lehmann shift
 * between the logarithms of the two sides (from the pairwise differences
 * log(head) - log(base) and the Mann-Whitney statistic's exact
 * distribution; measure.c says how). It covers the true factor with at
 * least 95% probability whatever the noise's distribution; with fewer
 * than 4 runs a side it is unbounded (0-inf). The same runs always give
 * the same interval. The head is worse beyond a budget of P% with
 * confidence when the whole interval lies beyond 1 + P/100 (lower is
 * better) or below 1 - P/100 (higher is better).
 *
 * measure_report.c turns a recipe's runs into its verdict and its part of
 * validation/measurements.md.
 *
 * Pure: no I/O; every function may be called from any thread on objects
 * that thread owns.
 */
#ifndef PACKETFS_MEASURE_H
#define PACKETFS_MEASURE_H

#include <stddef.h>

#include "util.h"

#define MEASURE_REPEAT_DEFAULT 5
#define MEASURE_RUNS_MAX 1000
#define MEASURE_NAME_MAX 64
#define MEASURE_UNIT_MAX 16
#define MEASURE_EXACT_MAX 50 /* U's exact distribution up to this many runs a side */

struct measure_budget {
	char metric[MEASURE_NAME_MAX + 1];
	double percent; /* P of "+P%" */
};

/* A recipe's measure header lines. All zero (measured 0) is a recipe
 * that is not measured; measure_clear frees what measure_take added. */
struct recipe_measure {
	int measured;                   /* 1 for "# measure: base" */
	int repeat;                     /* runs a side; 0 until set: measure_repeat() */
	int warmup;                     /* discarded runs a side, default 0 */
	int have_repeat, have_warmup;
	struct measure_budget *budgets; /* in order, one per metric */
	size_t nbudgets;
	char *error;                    /* NULL, or the first bad line's reason */
};

/*
 * Takes one header line "# key: value" of a recipe (key one of "measure",
 * "repeat", "warmup", "budget"; value trimmed). Returns 1 when key is one
 * of them (a bad value then sets m->error, once), 0 when it is none of
 * them (m untouched), -ENOMEM. Call measure_finish after the last line.
 */
int measure_take(struct recipe_measure *m, const char *key, const char *value);

/* After the last header line: sets m->error when repeat, warmup or budget
 * came without "# measure: base". Returns 0 or -ENOMEM. */
int measure_finish(struct recipe_measure *m);

/* The runs a side that count: m->repeat, or MEASURE_REPEAT_DEFAULT. */
int measure_repeat(const struct recipe_measure *m);

/* Deep copy into dst (zeroed first). Returns 0 or -ENOMEM (dst cleared). */
int measure_copy(struct recipe_measure *dst, const struct recipe_measure *src);

/* Frees what m holds and zeroes it; NULL allowed. */
void measure_clear(struct recipe_measure *m);

/* One reported metric. */
struct measure_value {
	char name[MEASURE_NAME_MAX + 1];
	char unit[MEASURE_UNIT_MAX + 1]; /* "" when none was given */
	int higher;                      /* 1: higher is better; 0: lower is */
	double value;
};

/* The metrics of one run, in the order first reported. */
struct measure_values {
	struct measure_value *v;
	size_t n, cap;
};

/*
 * Adds the METRIC lines of a run's standard output text[0..len) to out.
 * Lines that do not start with "METRIC " are not metric lines. Returns 0;
 * -EINVAL when a METRIC line is malformed, with err (size bytes, may be 0)
 * saying which and why ("METRIC t abc: value \"abc\" is no finite
 * number"); -ENOMEM. On an error out keeps the lines before it.
 */
int measure_parse_lines(const char *text, size_t len, struct measure_values *out, char *err,
			size_t size);

/*
 * Adds the metrics of a $PACKET_METRICS JSON text[0..len) to out: an
 * object whose members are numbers or objects with a number "value" and
 * optional string "unit" and "better" ("lower" or "higher"). Returns 0,
 * -EINVAL with err saying why, -ENOMEM.
 */
int measure_parse_json(const char *text, size_t len, struct measure_values *out, char *err,
		       size_t size);

/* The values v as the JSON object of a registry line's "metrics",
 * {"NAME": {"value": V, "unit": "U", "better": "lower"|"higher"}, ...} in
 * v's order (a value with no unit has "unit": ""); caller frees. NULL on
 * ENOMEM. */
char *measure_values_json(const struct measure_values *v);

/* Frees out's values and empties it; NULL allowed. */
void measure_values_clear(struct measure_values *out);

/* The comparison of one metric's base runs with its head runs. */
struct measure_stats {
	size_t nbase, nhead;
	double base_median, base_min, base_max;
	double head_median, head_min, head_max;
	double ratio;            /* head median / base median; NAN when base median is 0 */
	double ci_low, ci_high;  /* 95% interval of head/base (Hodges-Lehmann, Mann-Whitney):
				  * 0 and INFINITY when unbounded (too few runs); NAN when
				  * undefined (the base median is not positive) */
};

/*
 * Compares base[0..nbase) with head[0..nhead) (each at least 1 value).
 * Deterministic: the same input always gives the same output. A side
 * with a value that is not positive is compared by differences in units
 * of the base median rather than by logarithms (the unbounded interval
 * is then -INFINITY to INFINITY). Returns 0, -EINVAL (a side empty),
 * -ENOMEM.
 */
int measure_compare(const double *base, size_t nbase, const double *head, size_t nhead,
		    struct measure_stats *out);

/* The verdict of st against a budget of percent (>= 0) for a metric
 * whose better direction is higher (1) or lower (0): 1 when the head is
 * worse beyond the budget with confidence (the whole interval beyond it),
 * else 0 (an undefined interval is never beyond). */
int measure_over_budget(const struct measure_stats *st, int higher, double percent);

/* The median of v[0..n) (n >= 1); v is sorted in place. */
double measure_median(double *v, size_t n);

/* One metric's values over a measured recipe's counted runs (warmups
 * left out), each side in run order. */
struct measure_metric_runs {
	char name[MEASURE_NAME_MAX + 1];
	char unit[MEASURE_UNIT_MAX + 1];
	int higher;
	const double *base;
	size_t nbase;
	const double *head;
	size_t nhead;
};

/* A measured recipe's runs at one head, for its verdict and its part of
 * validation/measurements.md (measure_report.c). */
struct measure_recipe_runs {
	const char *recipe;
	const char *base_commit, *head_commit;  /* 40 hex digits, or "" when unknown */
	const struct recipe_measure *measure;   /* its header lines: budgets, repeat, warmup */
	const struct measure_metric_runs *metrics;
	size_t nmetrics;
};

enum measure_verdict {
	MEASURE_VALIDATED,  /* both sides ran, every budget kept */
	MEASURE_FAILING,    /* a metric worse beyond its budget with confidence, or a
			     * budgeted metric that no run reported */
	MEASURE_INCOMPLETE, /* no metric, or a metric with a side that has no runs */
};

/* The verdict of r, with why in why (size bytes, may be 0): the first
 * failing metric ("wall_s: head/base 1.200, 95% CI 1.18-1.22, beyond the
 * +2% budget"), the missing one, or "" when validated. Returns the verdict,
 * or -ENOMEM. */
int measure_verdict(const struct measure_recipe_runs *r, char *why, size_t size);

/*
 * Appends validation/measurements.md's text for the measured recipes
 * v[0..n) to out: per recipe its verdict, the commits, the runs a side,
 * then a table with per metric both medians, their ratio (and the change
 * in percent), each side's spread (minimum-maximum), the 95% interval of
 * the ratio, the budget and whether it is kept; then the statistic's
 * name. n 0 gives a text saying that no measured recipe ran. Returns 0 or
 * -ENOMEM.
 */
int measure_render(const struct measure_recipe_runs *v, size_t n, struct buf *out);

/* One metric's row of measure_render's table, its cells as text. */
struct measure_row {
	char metric[MEASURE_NAME_MAX + 1];
	char unit[MEASURE_UNIT_MAX + 1];  /* "-" when none */
	char better[8];                   /* "lower" or "higher" */
	char base_median[32], head_median[32];
	char ratio[48];                   /* "1.200 (+20.0%)" or "-" */
	char base_range[64], head_range[64];  /* "MIN-MAX" or "-" */
	char ci[48];                      /* "LOW-HIGH" or "-" */
	char budget[32];                  /* "+P%", "none" or "see budget" */
	char verdict[32];                 /* "-", "kept", "worse beyond budget" or
					   * "a side has no runs" */
};

/*
 * Reads one table row that measure_render wrote, "| wall_s | s | lower |
 * ... | kept |" (line[0..len), no newline), into *row: for readers of
 * measurements.md such as junit.xml's measurements suite. Returns 0, or
 * -EINVAL for any other line: not eleven cells between "| " and " |", a
 * cell too long for its field or empty, a metric name or unit outside the
 * METRIC line's alphabet, a direction other than lower or higher (*row
 * is then all zero).
 */
int measure_parse_row(const char *line, size_t len, struct measure_row *row);

#endif
