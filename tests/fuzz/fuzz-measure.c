/*
 * fuzz-measure.c - the measure header lines of a recipe (measure_take,
 * measure_finish, engine/format/measure.c) and the rows of
 * measurements.md's table (measure_parse_row, measure_report.c): each
 * input line "KEY: VALUE" (value trimmed, as recipe.c hands them over) is
 * one header line, and each line is also tried as a table row.
 *
 * Contract checked: measure_take answers 1 for its four keys, 0 (and
 * leaves the header untouched) for any other, or -ENOMEM; once an error
 * is set it stays the first one; without an error every value is in its
 * range (repeat 0 or 1-1000, warmup 0-1000, budgets 0-1000% on distinct
 * valid metric names) and repeat, warmup and budget come with a measure
 * line; an error names its line ("# KEY: ..."); measure_copy equals its
 * original. A row is read whole (eleven non-empty cells, a valid metric,
 * unit and direction) or refused with -EINVAL and zeroed.
 */
#include <errno.h>

#include "fuzz.h"
#include "measure.h"

static int word(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n >= 1 && n <= max &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/-") == n;
}

static void check_row(const char *line, size_t len)
{
	static const struct measure_row zero;
	struct measure_row row;
	int rc = measure_parse_row(line, len, &row);

	CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		CHECK(memcmp(&row, &zero, sizeof(row)) == 0);
		return;
	}
	CHECK(word(row.metric, MEASURE_NAME_MAX) && word(row.unit, MEASURE_UNIT_MAX));
	CHECK(strcmp(row.better, "lower") == 0 || strcmp(row.better, "higher") == 0);
	CHECK(row.base_median[0] && row.head_median[0] && row.ratio[0] && row.base_range[0] &&
	      row.head_range[0] && row.ci[0] && row.budget[0] && row.verdict[0]);
	CHECK(!strchr(row.verdict, '|') && !strchr(row.ci, '|'));
}

static void check_header(const struct recipe_measure *m)
{
	struct recipe_measure c;
	size_t i, k;

	if (m->error) {
		CHECK(strncmp(m->error, "# ", 2) == 0);
	} else {
		CHECK(m->repeat >= 0 && m->repeat <= MEASURE_RUNS_MAX);
		CHECK(m->warmup >= 0 && m->warmup <= MEASURE_RUNS_MAX);
		CHECK(!m->have_repeat || m->repeat >= 1);
		CHECK(m->measured || (!m->have_repeat && !m->have_warmup && !m->nbudgets));
		for (i = 0; i < m->nbudgets; i++) {
			CHECK(word(m->budgets[i].metric, MEASURE_NAME_MAX));
			CHECK(m->budgets[i].percent >= 0 && m->budgets[i].percent <= 1000);
			for (k = 0; k < i; k++)
				CHECK(strcmp(m->budgets[i].metric, m->budgets[k].metric) != 0);
		}
	}
	CHECK(measure_repeat(m) >= 1 && measure_repeat(m) <= MEASURE_RUNS_MAX);
	if (measure_copy(&c, m) == 0) {
		CHECK(c.measured == m->measured && c.repeat == m->repeat && c.warmup == m->warmup);
		CHECK(c.nbudgets == m->nbudgets);
		CHECK(!m->nbudgets || memcmp(c.budgets, m->budgets,
					     m->nbudgets * sizeof(*m->budgets)) == 0);
		CHECK((c.error == NULL) == (m->error == NULL));
		CHECK(!m->error || strcmp(c.error, m->error) == 0);
		measure_clear(&c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recipe_measure m = {0};
	char *text = fuzz_cstr(data, size), *line, *nl, *colon, *v, *end, *first = NULL;
	int rc, nomem = 0;

	if (!text)
		return 0;
	for (line = text; line && !nomem; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		check_row(line, nl ? (size_t)(nl - line) : strlen(line));
		if (nl)
			*nl = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		for (end = v + strlen(v); end > v && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		*end = '\0';
		{
			struct recipe_measure before = m;

			rc = measure_take(&m, line, v);
			CHECK(rc == 1 || rc == 0 || rc == -ENOMEM);
			if (rc == 0) {
				CHECK(memcmp(&before, &m, sizeof(m)) == 0);
				CHECK(strcmp(line, "measure") && strcmp(line, "repeat") &&
				      strcmp(line, "warmup") && strcmp(line, "budget"));
			}
		}
		nomem = rc == -ENOMEM;
		if (m.error && !first)
			first = strdup(m.error);
		CHECK(!first || !m.error || strcmp(first, m.error) == 0);
	}
	if (!nomem && measure_finish(&m) == 0)
		check_header(&m);
	free(first);
	measure_clear(&m);
	free(text);
	return 0;
}
