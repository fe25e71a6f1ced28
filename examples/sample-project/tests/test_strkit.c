/*
 * test_strkit.c - unit tests of strkit.
 *
 * Each CHECK prints one line; the program ends with "N passed, M failed"
 * and exits 1 when any check failed.
 */
#include "strkit.h"

#include <stdio.h>
#include <string.h>

static int passed;
static int failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
			printf("ok   %s\n", #cond);                                                \
		} else {                                                                           \
			failed++;                                                                  \
			printf("FAIL %s (%s:%d)\n", #cond, __FILE__, __LINE__);                    \
		}                                                                                  \
	} while (0)

static void test_trim(void)
{
	char a[] = "  hello world \t\n";
	char b[] = "   ";
	char c[] = "";
	char d[] = "x";

	CHECK(strcmp(str_trim(a), "hello world") == 0);
	CHECK(strcmp(str_trim(b), "") == 0);
	CHECK(strcmp(str_trim(c), "") == 0);
	CHECK(strcmp(str_trim(d), "x") == 0);
}

static void test_count_char(void)
{
	CHECK(str_count_char("banana", 'a') == 3);
	CHECK(str_count_char("banana", 'z') == 0);
	CHECK(str_count_char("", 'a') == 0);
	CHECK(str_count_char("abc", '\0') == 0);
}

static void test_starts_with(void)
{
	CHECK(str_starts_with("packetfs", "packet"));
	CHECK(!str_starts_with("packet", "packetfs"));
	CHECK(str_starts_with("anything", ""));
	CHECK(!str_starts_with("", "a"));
}

int main(void)
{
	test_trim();
	test_count_char();
	test_starts_with();
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
