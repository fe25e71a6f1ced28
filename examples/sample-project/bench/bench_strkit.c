/*
 * bench_strkit.c - how fast str_count_char counts, for a measured recipe
 * (recipes/07-bench.sh): counts one character in a 4 MiB string a number
 * of times and prints the best time per byte as a metric line,
 *
 *   METRIC count_char_ns_per_byte VALUE ns lower
 *
 * the format packetfs reads (docs/measure.md). The best of the rounds, not
 * their mean, so that a round the machine interrupted does not count.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strkit.h"

#define LEN (4u << 20)
#define ROUNDS 20

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
	char *s = malloc(LEN + 1);
	double best = 0, t0, t;
	size_t i, total = 0;

	if (!s)
		return 1;
	for (i = 0; i < LEN; i++)
		s[i] = (char)('a' + i % 26);
	s[LEN] = '\0';
	for (i = 0; i < ROUNDS; i++) {
		t0 = now_ns();
		total += str_count_char(s, 'q');
		t = now_ns() - t0;
		if (i == 0 || t < best)
			best = t;
	}
	free(s);
	printf("counted %zu\n", total);
	printf("METRIC count_char_ns_per_byte %.4f ns lower\n", best / LEN);
	return 0;
}
