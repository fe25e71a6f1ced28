/*
 * fuzz-metrics-json.c - the JSON of $PACKET_METRICS (measure_parse_json,
 * engine/format/measure.c): the input as the file a measured run wrote.
 *
 * Contract checked: 0, or -EINVAL with a reason, or -ENOMEM; the metrics
 * are well formed (fuzz-metric.h) and survive the registry's JSON; the
 * same input read twice into the same values changes nothing (a metric
 * reported twice keeps its last value).
 */
#include "fuzz-metric.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct measure_values v = {0};
	char err[256];
	size_t n;
	int rc;

	err[0] = '\0';
	rc = measure_parse_json((const char *)data, size, &v, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	CHECK(rc != -EINVAL || err[0]);
	check_metrics(&v);
	if (rc == 0) {
		n = v.n;
		rc = measure_parse_json((const char *)data, size, &v, err, sizeof(err));
		CHECK(rc == 0 || rc == -ENOMEM);
		CHECK(rc != 0 || v.n == n);
	}
	measure_values_clear(&v);
	return 0;
}
