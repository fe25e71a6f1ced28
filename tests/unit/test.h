/*
 * test.h - assertion macros for the unit tests. Each test program is one
 * process (meson runs each in its own); a failed assertion prints both
 * values with file and line and exits 1. TEST(name) declares a case and
 * RUN(name) runs it, printing "ok name"; TEST_MAIN_IN(dir, CASE(a), ...)
 * is the main of a program whose cases share one scratch directory.
 */
#ifndef PACKETFS_TEST_H
#define PACKETFS_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

/* Removes dir and all below it (rm -rf). Returns 0, or 1 when rm fails:
 * main's exit status. */
static inline int test_rmtree(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}

/* Runs a shell command made printf-style (at most 4 KiB); returns its exit
 * status, or -1 when it did not exit. SH(...) asserts it exits 0. */
static inline int test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int test_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
#define SH(...) ASSERT_EQ(test_sh(__VA_ARGS__), 0)

/* One case of a table of cases: its name and its TEST function. CASE(x)
 * names test_x; a table ends with { NULL, NULL }. */
struct test_case {
	const char *name;
	void (*run)(void);
};
#define CASE(name) { #name, test_##name }

/* The main of a test program that works in one scratch directory: makes
 * dir (a mkdtemp template such as "/tmp/pfs-x-XXXXXX", filled in place,
 * so a static array the cases read), runs each of cases in order as RUN
 * does, then removes dir with all in it. Returns main's exit status; a
 * failed case exits 1 first and leaves dir for a look. */
static inline int test_main_in(char *dir, const struct test_case *cases)
{
	ASSERT(mkdtemp(dir) != NULL);
	for (; cases->name; cases++) {
		cases->run();
		printf("ok %s\n", cases->name);
	}
	return test_rmtree(dir);
}

/* Defines main as test_main_in(dir, the CASE(...) arguments in order). */
#define TEST_MAIN_IN(dir, ...)                                              \
	int main(void)                                                      \
	{                                                                   \
		static const struct test_case cases_[] = { __VA_ARGS__,     \
							   { NULL, NULL } }; \
		return test_main_in(dir, cases_);                           \
	}

#endif
