/*
 * fuzz-metric.c - METRIC lines (measure_parse_lines, engine/format/
 * measure.c): the input as the standard output of a measured run, read
 * from its log.
 *
 * Contract checked: 0, or -EINVAL with a reason, or -ENOMEM; never more
 * metrics than lines that start with "METRIC "; the metrics (those before
 * the bad line too) are well formed (fuzz-metric.h) and survive the
 * registry's JSON (measure_values_json, then measure_parse_json).
 */
#include "fuzz-metric.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct measure_values v = {0};
	const char *text = (const char *)data;
	size_t lines = 0, i;
	char err[256];
	int rc;

	for (i = 0; i + 7 <= size; i++)
		if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, "METRIC", 6) == 0)
			lines++;
	err[0] = '\0';
	rc = measure_parse_lines(text, size, &v, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	CHECK(rc != -EINVAL || err[0]);
	CHECK(v.n <= lines);
	check_metrics(&v);
	measure_values_clear(&v);
	CHECK(v.n == 0 && v.v == NULL);
	return 0;
}
