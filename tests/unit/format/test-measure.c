/*
 * test-measure.c - measured recipes' pure part (engine/format/measure.c):
 * the header lines and their errors, METRIC lines and $PACKET_METRICS JSON
 * and theirs, the medians, the interval of head/base (Hodges-Lehmann with
 * the Mann-Whitney statistic: its exact ends, its stability, its coverage
 * on simulated runs) and the budget's verdict in both directions.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "test.h"

/* The error measure_take leaves for the one line "# key: value". */
static void expect_bad(const char *key, const char *value, const char *why)
{
	struct recipe_measure m = {0};

	ASSERT_EQ(measure_take(&m, key, value), 1);
	ASSERT_STREQ(m.error, why);
	measure_clear(&m);
}

/* A parser of metrics (measure_parse_lines, measure_parse_json). */
typedef int parse_fn(const char *text, size_t len, struct measure_values *out, char *err,
		     size_t size);

/* parse refuses text with -EINVAL and the error why. */
static void expect_refused(parse_fn *parse, const char *text, const char *why)
{
	struct measure_values v = {0};
	char err[256] = "";

	ASSERT_EQ(parse(text, strlen(text), &v, err, sizeof(err)), -EINVAL);
	ASSERT_STREQ(err, why);
	measure_values_clear(&v);
}

TEST(headers)
{
	struct recipe_measure m = {0}, c;

	ASSERT_EQ(measure_take(&m, "summary", "x"), 0);
	ASSERT_EQ(measure_take(&m, "measure", "base"), 1);
	ASSERT_EQ(measure_repeat(&m), MEASURE_REPEAT_DEFAULT);
	ASSERT_EQ(measure_take(&m, "repeat", "12"), 1);
	ASSERT_EQ(measure_take(&m, "warmup", "0"), 1);
	ASSERT_EQ(measure_take(&m, "budget", "wall_s +2%"), 1);
	ASSERT_EQ(measure_take(&m, "budget", "tokens/s\t+10.5%"), 1);
	ASSERT_EQ(measure_finish(&m), 0);
	ASSERT(m.error == NULL);
	ASSERT_EQ(m.measured, 1);
	ASSERT_EQ(measure_repeat(&m), 12);
	ASSERT_EQ(m.warmup, 0);
	ASSERT_EQ(m.nbudgets, 2);
	ASSERT_STREQ(m.budgets[0].metric, "wall_s");
	ASSERT(m.budgets[0].percent == 2);
	ASSERT_STREQ(m.budgets[1].metric, "tokens/s");
	ASSERT(m.budgets[1].percent == 10.5);
	ASSERT_EQ(measure_copy(&c, &m), 0);
	ASSERT(c.budgets != m.budgets && c.nbudgets == 2 && c.repeat == 12);
	measure_clear(&c);
	/* The first bad line's reason stays. */
	ASSERT_EQ(measure_take(&m, "repeat", "3"), 1);
	ASSERT_STREQ(m.error, "# repeat: 3: given twice");
	ASSERT_EQ(measure_take(&m, "warmup", "x"), 1);
	ASSERT_STREQ(m.error, "# repeat: 3: given twice");
	measure_clear(&m);
	ASSERT(m.budgets == NULL && m.error == NULL && m.measured == 0);
	measure_clear(NULL);

	expect_bad("measure", "head", "# measure: head: the only measure is \"base\" (the item's merge-base)");
	expect_bad("repeat", "0", "# repeat: 0: not a whole number from 1 to 1000");
	expect_bad("repeat", "1001", "# repeat: 1001: not a whole number from 1 to 1000");
	expect_bad("repeat", "5 runs", "# repeat: 5 runs: not a whole number from 1 to 1000");
	expect_bad("warmup", "-1", "# warmup: -1: not a whole number from 0 to 1000");
	expect_bad("budget", "wall_s 2%", "# budget: wall_s 2%: the budget must be written +P% (e.g. +2%)");
	expect_bad("budget", "wall_s +2", "# budget: wall_s +2: the budget must be written +P% (e.g. +2%)");
	expect_bad("budget", "wall_s +x%", "# budget: wall_s +x%: P in +P% must be a number from 0 to 1000");
	expect_bad("budget", "wall_s +2000%", "# budget: wall_s +2000%: P in +P% must be a number from 0 to 1000");
	expect_bad("budget", "+2%", "# budget: +2%: the metric's name must be 1-64 characters of "
		   "[A-Za-z0-9_.:/-], then +P%");
	expect_bad("budget", "", "# budget: the metric's name must be 1-64 characters of "
		   "[A-Za-z0-9_.:/-], then +P%");

	memset(&m, 0, sizeof(m));
	ASSERT_EQ(measure_take(&m, "budget", "a +1%"), 1);
	ASSERT_EQ(measure_take(&m, "budget", "a +3%"), 1);
	ASSERT_STREQ(m.error, "# budget: a +3%: a second budget for the same metric");
	measure_clear(&m);
	ASSERT_EQ(measure_take(&m, "budget", "a +1%"), 1);
	ASSERT_EQ(measure_finish(&m), 0);
	ASSERT_STREQ(m.error, "# budget: needs \"# measure: base\"");
	measure_clear(&m);
	ASSERT_EQ(measure_finish(&m), 0);
	ASSERT(m.error == NULL);
}

TEST(lines)
{
	static const char out[] = "building\nMETRIC wall_s 1.25 s\nMETRICS x 1\n"
				  "METRIC\trps 3e3 req/s higher\r\nMETRIC n 4 lower\n"
				  " METRIC indented 1\nMETRIC wall_s 1.5 s\n";
	struct measure_values v = {0};
	char err[256] = "";

	ASSERT_EQ(measure_parse_lines(out, strlen(out), &v, err, sizeof(err)), 0);
	ASSERT_EQ(v.n, 3);
	ASSERT_STREQ(v.v[0].name, "wall_s");
	ASSERT(v.v[0].value == 1.5);
	ASSERT_STREQ(v.v[0].unit, "s");
	ASSERT_EQ(v.v[0].higher, 0);
	ASSERT_STREQ(v.v[1].name, "rps");
	ASSERT(v.v[1].value == 3000);
	ASSERT_STREQ(v.v[1].unit, "req/s");
	ASSERT_EQ(v.v[1].higher, 1);
	ASSERT_STREQ(v.v[2].unit, "");
	ASSERT_EQ(v.v[2].higher, 0);
	measure_values_clear(&v);

	expect_refused(measure_parse_lines, "METRIC t abc\n",
		       "METRIC t: value \"abc\" is no finite number");
	expect_refused(measure_parse_lines, "METRIC t inf s\n",
		       "METRIC t: value \"inf\" is no finite number");
	expect_refused(measure_parse_lines, "METRIC t\n",
		       "METRIC t: a METRIC line is METRIC NAME VALUE [UNIT] [lower|higher]");
	expect_refused(measure_parse_lines, "METRIC t 1 s lower extra\n",
		       "METRIC t 1 s lower extra: a METRIC line is "
		       "METRIC NAME VALUE [UNIT] [lower|higher]");
	expect_refused(measure_parse_lines, "METRIC t 1 lower s\n",
		       "METRIC t: \"lower\" is neither a unit (1-16 characters of "
		       "[A-Za-z0-9_.:/-]) nor lower or higher, in that order");
	expect_refused(measure_parse_lines, "METRIC t$ 1\n",
		       "METRIC t$: the name must be 1-64 characters of [A-Za-z0-9_.:/-]");
}

TEST(json)
{
	static const char j[] = "{\"wall_s\": {\"value\": 2.5, \"unit\": \"s\", \"better\": \"lower\"},"
				" \"rps\": {\"value\": 10, \"better\": \"higher\"}, \"n\": 3}";
	struct measure_values v = {0};
	char err[256] = "";

	ASSERT_EQ(measure_parse_json(j, strlen(j), &v, err, sizeof(err)), 0);
	ASSERT_EQ(v.n, 3);
	ASSERT(v.v[0].value == 2.5 && strcmp(v.v[0].unit, "s") == 0 && !v.v[0].higher);
	ASSERT(v.v[1].value == 10 && v.v[1].unit[0] == '\0' && v.v[1].higher);
	ASSERT(v.v[2].value == 3 && !v.v[2].higher);
	measure_values_clear(&v);
	expect_refused(measure_parse_json, "[1]", "$PACKET_METRICS: not a JSON object");
	expect_refused(measure_parse_json, "{\"a\": 1", "$PACKET_METRICS: not a JSON object");
	expect_refused(measure_parse_json, "{\"a\": \"1\"}",
		       "$PACKET_METRICS: \"a\": no finite number as its value");
	expect_refused(measure_parse_json, "{\"a\": {\"unit\": \"s\"}}",
		       "$PACKET_METRICS: \"a\": no finite number as its value");
	expect_refused(measure_parse_json, "{\"a\": {\"value\": 1, \"better\": \"up\"}}",
		       "$PACKET_METRICS: \"a\": \"better\" must be \"lower\" or \"higher\"");
	expect_refused(measure_parse_json, "{\"a\": {\"value\": 1, \"unit\": 5}}",
		       "$PACKET_METRICS: \"a\": \"unit\" must be 1-16 characters of "
		       "[A-Za-z0-9_.:/-]");
	expect_refused(measure_parse_json, "{\"a b\": 1}",
		       "$PACKET_METRICS: \"a b\": the name must be 1-64 characters of "
		       "[A-Za-z0-9_.:/-]");
}

TEST(stats)
{
	double base[] = { 1.00, 1.02, 0.98, 1.01, 0.99 };
	double slow[] = { 1.20, 1.22, 1.18, 1.21, 1.19 };
	double same[] = { 1.01, 0.99, 1.00, 1.02, 0.98 };
	double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };
	struct measure_stats st, again;

	ASSERT(measure_median(odd, 3) == 2);
	ASSERT(measure_median(even, 4) == 2.5);
	ASSERT_EQ(measure_compare(base, 5, slow, 5, &st), 0);
	ASSERT(st.nbase == 5 && st.nhead == 5);
	ASSERT(st.base_median == 1.00 && st.head_median == 1.20);
	ASSERT(st.base_min == 0.98 && st.base_max == 1.02);
	ASSERT(st.head_min == 1.18 && st.head_max == 1.22);
	ASSERT(fabs(st.ratio - 1.2) < 1e-12);
	ASSERT(st.ci_low <= st.ratio && st.ratio <= st.ci_high);
	ASSERT(st.ci_low > 1.15 && st.ci_high < 1.25);
	/* The inputs are left as they were, and the interval is stable. */
	ASSERT(base[0] == 1.00 && slow[0] == 1.20);
	ASSERT_EQ(measure_compare(base, 5, slow, 5, &again), 0);
	ASSERT(again.ci_low == st.ci_low && again.ci_high == st.ci_high);
	/* 20% slower: beyond +2% and +10%, not beyond +30%; lower is better. */
	ASSERT_EQ(measure_over_budget(&st, 0, 2), 1);
	ASSERT_EQ(measure_over_budget(&st, 0, 10), 1);
	ASSERT_EQ(measure_over_budget(&st, 0, 30), 0);
	/* Higher is better: 20% more is no regression. */
	ASSERT_EQ(measure_over_budget(&st, 1, 2), 0);
	ASSERT_EQ(measure_compare(slow, 5, base, 5, &st), 0);
	ASSERT_EQ(measure_over_budget(&st, 1, 2), 1);
	ASSERT_EQ(measure_over_budget(&st, 0, 0), 0);
	/* No change: the interval holds 1, never beyond a budget of 0%. */
	ASSERT_EQ(measure_compare(base, 5, same, 5, &st), 0);
	ASSERT(st.ci_low < 1 && st.ci_high > 1);
	ASSERT_EQ(measure_over_budget(&st, 0, 0), 0);
	ASSERT_EQ(measure_over_budget(&st, 1, 0), 0);
	/* Too few runs for 95% (one a side, three a side, three against
	 * four): unbounded, never beyond a budget; four a side suffice. */
	ASSERT_EQ(measure_compare(base, 1, slow, 1, &st), 0);
	ASSERT(fabs(st.ratio - 1.2) < 1e-12 && st.ci_low == 0 && isinf(st.ci_high));
	ASSERT_EQ(measure_over_budget(&st, 0, 0), 0);
	ASSERT_EQ(measure_over_budget(&st, 1, 0), 0);
	ASSERT_EQ(measure_compare(base, 3, slow, 3, &st), 0);
	ASSERT(st.ci_low == 0 && isinf(st.ci_high));
	ASSERT_EQ(measure_compare(base, 3, slow, 4, &st), 0);
	ASSERT(st.ci_low == 0 && isinf(st.ci_high));
	ASSERT_EQ(measure_compare(base, 4, slow, 4, &st), 0);
	ASSERT(st.ci_low > 1.15 && st.ci_high < 1.25);
	ASSERT_EQ(measure_over_budget(&st, 0, 10), 1);
	/* A base of zeros has no ratio and no interval. */
	{
		double zero[] = { 0, 0, 0 };

		ASSERT_EQ(measure_compare(zero, 3, slow, 3, &st), 0);
		ASSERT(isnan(st.ratio) && isnan(st.ci_low) && isnan(st.ci_high));
		ASSERT_EQ(measure_over_budget(&st, 0, 0), 0);
	}
	/* A value that is not positive: differences in units of the base
	 * median instead of logarithms. */
	{
		double b0[] = { 0, 1, 2, 3, 4 }, h0[] = { 5, 6, 7, 8, 9 };

		ASSERT_EQ(measure_compare(b0, 5, h0, 5, &st), 0);
		ASSERT(st.ratio == 3.5);
		/* Differences head - base of 1 (once), 2 (twice), ..., 9 (once)
		 * over the base median 2; 5 a side: k = 3, the 3rd smallest is
		 * 2, the 3rd largest 8. */
		ASSERT(fabs(st.ci_low - 2) < 1e-12 && fabs(st.ci_high - 5) < 1e-12);
	}
	ASSERT_EQ(measure_compare(base, 0, slow, 5, &st), -EINVAL);
}

/* The ends of the interval, checked by hand: 10 runs a side give the
 * 24th smallest and the 24th largest of the 100 ratios head_j/base_i
 * (P(U <= 23) = 0.0216 <= 0.025 < P(U <= 24) = 0.0262); 60 a side (the
 * normal approximation) the 1427th of 3600. */
/* With n runs a side, base_i = 2^(i/1000) and head_j = 2^((1000 + j)/1000)
 * (i, j = 0..n-1): the ratios are 2^((1000 + d)/1000) with d = j - i, and
 * the interval must be 2^((1000 - m)/1000) to 2^((1000 + m)/1000). */
static void expect_ends(int n, int m)
{
	double b[60], h[60];
	struct measure_stats st;
	int i;

	ASSERT(n <= 60);
	for (i = 0; i < n; i++) {
		b[i] = pow(2, i / 1000.0);
		h[i] = pow(2, (1000 + i) / 1000.0);
	}
	ASSERT_EQ(measure_compare(b, n, h, n, &st), 0);
	ASSERT(fabs(st.ci_low - pow(2, (1000 - m) / 1000.0)) < 1e-12);
	ASSERT(fabs(st.ci_high - pow(2, (1000 + m) / 1000.0)) < 1e-12);
}

TEST(ends)
{
	/* n = 10: j - i = d for 10 - |d| pairs: d <= -5 holds 1+2+3+4+5 = 15
	 * pairs, d = -4 six more (21), d = -3 seven more (28): the 24th is
	 * d = -3. */
	expect_ends(10, 3);
	/* n = 60: k = floor(1800 - 0.5 - 1.96 * sqrt(3600 * 121 / 12)) + 1 =
	 * 1427; d <= -m holds (60 - m)(61 - m)/2 pairs: 1378 for d <= -8, 1431
	 * for d <= -7, so the 1427th is d = -7. */
	expect_ends(60, 7);
}

static uint64_t sim_state;

/* A uniform number in (0, 1) from splitmix64. */
static double sim_uniform(void)
{
	uint64_t z = (sim_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* One simulated run of a benchmark whose true time is t: 2% normal
 * noise, and one run in eight slowed by interference of up to +50%. */
static double sim_run(double t)
{
	double g = sqrt(-2 * log(sim_uniform())) * cos(6.283185307179586 * sim_uniform());
	double v = t * (1 + 0.02 * g);

	if (sim_uniform() < 0.125)
		v *= 1 + 0.5 * sim_uniform();
	return v;
}

/* Of 200 simulated batches of n runs a side, head = base * factor: how
 * many a budget of +0% fails (lower is better, and, in *higher_out,
 * higher is better), and in *covered how many intervals hold factor. */
static int simulate(size_t n, double factor, int *higher_out, int *covered)
{
	double b[20], h[20];
	struct measure_stats st;
	int k, worse = 0, higher = 0;
	size_t i;

	*covered = 0;
	for (k = 0; k < 200; k++) {
		for (i = 0; i < n; i++) {
			b[i] = sim_run(1.0);
			h[i] = sim_run(factor);
		}
		ASSERT_EQ(measure_compare(b, n, h, n, &st), 0);
		worse += measure_over_budget(&st, 0, 0);
		higher += measure_over_budget(&st, 1, 0);
		*covered += st.ci_low <= factor && factor <= st.ci_high;
	}
	*higher_out = higher;
	return worse;
}

/* The interval's coverage on simulated runs: no change is flagged in at
 * most 5% of batches (each direction; 2.5% is the nominal rate) for any
 * number of runs, the interval holds the true factor in at least 93% of
 * them, and a 10% slowdown is flagged in at least 90% of batches of 10
 * runs a side (this noise, with its outliers, is like that of a busy
 * 2-core machine, tests/bench/stats.sh; 189 of 200 here). Deterministic
 * (a fixed seed). */
TEST(coverage)
{
	size_t sizes[] = { 1, 2, 3, 5, 10 }, i;
	int worse, higher, covered;

	sim_state = 42;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		worse = simulate(sizes[i], 1.0, &higher, &covered);
		ASSERT(worse <= 10);
		ASSERT(higher <= 10);
		ASSERT(covered >= 186);
	}
	worse = simulate(10, 1.10, &higher, &covered);
	ASSERT(worse >= 180);
	ASSERT(higher == 0);
	ASSERT(covered >= 186);
}

static char *render(const struct measure_recipe_runs *v, size_t n)
{
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(measure_render(v, n, &b), 0);
	return buf_steal(&b);
}

/*
 * r's verdict is want with the reason why_want, and its report shows both
 * heading and row.
 */
static void expect_shown(const struct measure_recipe_runs *r, enum measure_verdict want,
			 const char *why_want, const char *heading, const char *row)
{
	char why[256], *t;

	ASSERT_EQ(measure_verdict(r, why, sizeof(why)), want);
	ASSERT_STREQ(why, why_want);
	t = render(r, 1);
	ASSERT_CONTAINS(t, heading);
	ASSERT_CONTAINS(t, row);
	free(t);
}

TEST(report)
{
	static const double base[] = { 1.00, 1.02, 0.98, 1.01, 0.99 };
	static const double slow[] = { 1.20, 1.22, 1.18, 1.21, 1.19 };
	static const double rps_b[] = { 100, 101, 99 }, rps_h[] = { 100, 99, 101 };
	struct recipe_measure m = {0};
	struct measure_metric_runs mt[2];
	struct measure_recipe_runs r;
	char why[256], *t, *again;

	ASSERT_EQ(measure_take(&m, "measure", "base"), 1);
	ASSERT_EQ(measure_take(&m, "warmup", "1"), 1);
	ASSERT_EQ(measure_take(&m, "budget", "wall_s +2%"), 1);
	memset(mt, 0, sizeof(mt));
	strcpy(mt[0].name, "wall_s");
	strcpy(mt[0].unit, "s");
	mt[0].base = base;
	mt[0].nbase = 5;
	mt[0].head = slow;
	mt[0].nhead = 5;
	strcpy(mt[1].name, "rps");
	mt[1].higher = 1;
	mt[1].base = rps_b;
	mt[1].nbase = 3;
	mt[1].head = rps_h;
	mt[1].nhead = 3;
	r.recipe = "07-bench";
	r.base_commit = "0123456789abcdef0123456789abcdef01234567";
	r.head_commit = "fedcba9876543210fedcba9876543210fedcba98";
	r.measure = &m;
	r.metrics = mt;
	r.nmetrics = 2;

	/* 20% slower against a +2% budget: failing, saying why. */
	ASSERT_EQ(measure_verdict(&r, why, sizeof(why)), MEASURE_FAILING);
	ASSERT_CONTAINS(why, "wall_s: head/base 1.200, 95% CI 1.");
	ASSERT_CONTAINS(why, ", beyond the +2% budget");
	t = render(&r, 1);
	ASSERT_CONTAINS(t, "# Measurements\n\n## 07-bench: failing - wall_s: head/base 1.200");
	ASSERT_CONTAINS(t, "Base `0123456789ab` against head `fedcba987654`: 5 base and 5 head runs "
			"counted (repeat 5, warmup 1 a side, discarded)");
	ASSERT_CONTAINS(t, "| wall_s | s | lower | 1 | 1.2 | 1.200 (+20.0%) | 0.98-1.02 | 1.18-1.22 | 1.");
	ASSERT_CONTAINS(t, "| +2% | worse beyond budget |\n");
	/* rps: 3 runs a side, too few for a bounded 95% interval. */
	ASSERT_CONTAINS(t, "| rps | - | higher | 100 | 100 | 1.000 (+0.0%) | 99-101 | 99-101 | "
			"0.000-inf | none | - |\n");
	ASSERT_CONTAINS(t, "Hodges-Lehmann shift between the logarithms of the two sides");
	/* The same runs give the same text. */
	again = render(&r, 1);
	ASSERT_STREQ(t, again);
	free(again);
	free(t);

	/* Without a budget: validated, the change still shown. */
	m.nbudgets = 0;
	expect_shown(&r, MEASURE_VALIDATED, "", "## 07-bench: validated\n", "| 1.200 (+20.0%) |");
	m.nbudgets = 1;

	/* A budget +30%: kept. */
	m.budgets[0].percent = 30;
	ASSERT_EQ(measure_verdict(&r, why, sizeof(why)), MEASURE_VALIDATED);
	m.budgets[0].percent = 2;

	/* A budget for a metric no run reported fails. */
	strcpy(m.budgets[0].metric, "wall");
	ASSERT_EQ(measure_verdict(&r, why, sizeof(why)), MEASURE_FAILING);
	ASSERT_STREQ(why, "wall: the budget's metric was not reported by any run");
	strcpy(m.budgets[0].metric, "wall_s");

	/* A side without runs: incomplete, never validated. */
	mt[0].nhead = 0;
	expect_shown(&r, MEASURE_INCOMPLETE, "wall_s: no head run reported it",
		     "## 07-bench: incomplete - wall_s: no head run reported it",
		     "| wall_s | s | lower | - | - | - | - | - | - | see budget | a side has no runs |");
	r.nmetrics = 0;
	ASSERT_EQ(measure_verdict(&r, why, sizeof(why)), MEASURE_FAILING);
	m.nbudgets = 0;
	ASSERT_EQ(measure_verdict(&r, why, sizeof(why)), MEASURE_INCOMPLETE);
	ASSERT_STREQ(why, "no run reported a metric");
	m.nbudgets = 1;
	measure_clear(&m);

	t = render(NULL, 0);
	ASSERT_STREQ(t, "# Measurements\n\nNo measured recipe (# measure: base) has run at this head.\n");
	free(t);
}

/* measure_parse_row reads back each row that measure_render writes. */
static void expect_rows(const struct measure_recipe_runs *r, const char *first_verdict)
{
	struct measure_row row;
	char *t = render(r, 1), *line, *nl;
	int rows = 0;

	for (line = t; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (strncmp(line, "| ", 2) != 0 || strncmp(line, "| metric |", 10) == 0)
			continue;
		ASSERT_EQ(measure_parse_row(line, (size_t)(nl - line), &row), 0);
		ASSERT_STREQ(row.metric, r->metrics[rows].name);
		if (rows == 0)
			ASSERT_STREQ(row.verdict, first_verdict);
		rows++;
	}
	ASSERT_EQ(rows, (int)r->nmetrics);
	free(t);
}

TEST(rows)
{
	/* Four runs a side: fewer cannot reach 95% confidence (docs/measure.md). */
	static const double base[] = { 1.00, 1.02, 0.98, 1.01 }, slow[] = { 1.20, 1.22, 1.18, 1.21 };
	static const char *const bad[] = {
		"", "|", "| |", "|---|---|", "| metric | unit | better |",
		"| wall_s | s | lower | 1 | 1.2 | 1.200 (+20.0%) | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% |",
		"| wall_s | s | lower | 1 | 1.2 | 1.200 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | kept | x |",
		"| wall_s | s | sideways | 1 | 1.2 | 1.2 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | kept |",
		"| wall s | s | lower | 1 | 1.2 | 1.2 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | kept |",
		"| wall_s |  | lower | 1 | 1.2 | 1.2 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | kept |",
		"| wall_s | s | lower | 1 | 1.2 | 1.2 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | kept|",
		"| wall_s | s | lower | 1 | 1.2 | 1.2 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | a|b |",
		"| wall_s | s | lower | 1 | 1.2 | 1.2 | 0.98-1.02 | 1.18-1.22 | 1.1-1.3 | +2% | "
		"a verdict cell longer than its field |",
	};
	struct recipe_measure m = {0};
	struct measure_metric_runs mt;
	struct measure_recipe_runs r;
	struct measure_row row;
	size_t i;

	ASSERT_EQ(measure_take(&m, "measure", "base"), 1);
	ASSERT_EQ(measure_take(&m, "budget", "wall_s +2%"), 1);
	memset(&mt, 0, sizeof(mt));
	strcpy(mt.name, "wall_s");
	strcpy(mt.unit, "s");
	mt.base = base;
	mt.nbase = 4;
	mt.head = slow;
	mt.nhead = 4;
	r.recipe = "07-bench";
	r.base_commit = r.head_commit = "";
	r.measure = &m;
	r.metrics = &mt;
	r.nmetrics = 1;
	expect_rows(&r, "worse beyond budget");
	mt.nhead = 0; /* the short form: a side without runs */
	expect_rows(&r, "a side has no runs");
	measure_clear(&m);

	ASSERT_EQ(measure_parse_row("| wall_s | s | lower | 1 | 1.2 | 1.200 (+20.0%) | 0.98-1.02 | "
				    "1.18-1.22 | 1.168-1.232 | +2% | worse beyond budget |", 115, &row),
		  0);
	ASSERT_STREQ(row.unit, "s");
	ASSERT_STREQ(row.better, "lower");
	ASSERT_STREQ(row.base_median, "1");
	ASSERT_STREQ(row.head_median, "1.2");
	ASSERT_STREQ(row.ratio, "1.200 (+20.0%)");
	ASSERT_STREQ(row.base_range, "0.98-1.02");
	ASSERT_STREQ(row.head_range, "1.18-1.22");
	ASSERT_STREQ(row.ci, "1.168-1.232");
	ASSERT_STREQ(row.budget, "+2%");
	ASSERT_STREQ(row.verdict, "worse beyond budget");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(measure_parse_row(bad[i], strlen(bad[i]), &row), -EINVAL);
		ASSERT_STREQ(row.metric, ""); /* zeroed, also when refused midway */
		ASSERT_STREQ(row.verdict, "");
	}
}

int main(void)
{
	RUN(headers);
	RUN(lines);
	RUN(json);
	RUN(stats);
	RUN(ends);
	RUN(coverage);
	RUN(report);
	RUN(rows);
	return 0;
}
