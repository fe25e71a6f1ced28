/*
 * test.h - assertion macros for the unit tests. Each test program is one
 * process (meson runs each in its own); a failed assertion prints both
 * values with file and line and exits 1. TEST(name) declares a case and
 * RUN(name) runs it, printing "ok name".
 */
#ifndef PACKETFS_TEST_H
#define PACKETFS_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL_AT(...)                                                     \
	do {                                                             \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);         \
		fprintf(stderr, __VA_ARGS__);                            \
		fputc('\n', stderr);                                     \
		exit(1);                                                 \
	} while (0)

#define ASSERT(c)                                                        \
	do {                                                             \
		if (!(c))                                                \
			FAIL_AT("assertion failed: %s", #c);             \
	} while (0)

#define ASSERT_EQ(a, b)                                                  \
	do {                                                             \
		long long a_ = (long long)(a), b_ = (long long)(b);      \
		if (a_ != b_)                                            \
			FAIL_AT("%s == %s: %lld != %lld", #a, #b, a_, b_); \
	} while (0)

#define ASSERT_STREQ(a, b)                                               \
	do {                                                             \
		const char *a_ = (a), *b_ = (b);                         \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                   \
			FAIL_AT("%s == %s: \"%s\" != \"%s\"", #a, #b,    \
				a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} while (0)

#define ASSERT_CONTAINS(hay, needle)                                     \
	do {                                                             \
		const char *h_ = (hay), *n_ = (needle);                  \
		if (!h_ || !strstr(h_, n_))                              \
			FAIL_AT("%s contains \"%s\": got \"%s\"", #hay, n_, \
				h_ ? h_ : "(null)");                     \
	} while (0)

#define TEST(name) static void test_##name(void)
#define RUN(name)                                   \
	do {                                        \
		test_##name();                      \
		printf("ok %s\n", #name);           \
	} while (0)

#endif
