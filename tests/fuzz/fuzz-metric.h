/*
 * fuzz-metric.h - what the metric harnesses (fuzz-metric.c,
 * fuzz-metrics-json.c) check on the metrics a parser gave back: each name
 * and unit is in the METRIC line's alphabet and length, each value finite,
 * no name twice; and measure_values_json's JSON, read back by
 * measure_parse_json, gives the same metrics (values within cJSON's
 * printing precision).
 */
#ifndef PACKETFS_FUZZ_METRIC_H
#define PACKETFS_FUZZ_METRIC_H

#include <errno.h>
#include <float.h>
#include <math.h>

#include "fuzz.h"
#include "measure.h"

/* Whether s is lo..max characters of [A-Za-z0-9_.:/-]. */
static inline int metric_word(const char *s, size_t lo, size_t max)
{
	size_t n = strlen(s);

	return n >= lo && n <= max &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/-") == n;
}

static inline void check_metrics(const struct measure_values *v)
{
	struct measure_values back = {0};
	char err[256];
	size_t i, k;
	char *json;

	CHECK(v->n <= v->cap);
	for (i = 0; i < v->n; i++) {
		CHECK(metric_word(v->v[i].name, 1, MEASURE_NAME_MAX));
		CHECK(metric_word(v->v[i].unit, 0, MEASURE_UNIT_MAX));
		CHECK(isfinite(v->v[i].value));
		CHECK(v->v[i].higher == 0 || v->v[i].higher == 1);
		for (k = 0; k < i; k++)
			CHECK(strcmp(v->v[k].name, v->v[i].name) != 0);
	}
	if (v->n == 0)
		return;
	json = measure_values_json(v);
	if (!json)
		return; /* out of memory */
	err[0] = '\0';
	if (measure_parse_json(json, strlen(json), &back, err, sizeof(err)) == -ENOMEM) {
		free(json);
		measure_values_clear(&back);
		return;
	}
	if (back.n != v->n)
		fprintf(stderr, "round trip: %s -> %s\n", json, err);
	CHECK(back.n == v->n);
	for (i = 0; i < v->n; i++) {
		CHECK(strcmp(back.v[i].name, v->v[i].name) == 0);
		CHECK(strcmp(back.v[i].unit, v->v[i].unit) == 0);
		CHECK(back.v[i].higher == v->v[i].higher);
		/* cJSON prints 15 significant digits when they read back within
		 * its DBL_EPSILON, else 17: the value comes back within that. */
		CHECK(fabs(back.v[i].value - v->v[i].value) <=
		      fabs(v->v[i].value) * 4 * DBL_EPSILON);
	}
	free(json);
	measure_values_clear(&back);
}

#endif
