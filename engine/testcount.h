/*
 * testcount.h - how many tests a test runner ran, read from the closing
 * summary it printed. The engine uses it on the log of a recipe that exited
 * 0: a recipe whose test runner ran no test is not validated evidence
 * (SPEC §6, README "Recipes and evidence").
 *
 * Recognised summaries (what each tool prints at the end of a run):
 *   meson test   the block "Ok: N / Expected Fail: N / Fail: N /
 *                Unexpected Pass: N / Skipped: N / Timeout: N", or
 *                "No tests defined."
 *   ctest        "100% tests passed, 0 tests failed out of N" (with the
 *                "(Skipped)" lines of "The following tests did not run:"
 *                taken off N), or "No tests were found!!!"
 *   pytest       "==== 3 passed, 1 skipped in 0.12s ====",
 *                "1 failed, 2 passed in 0.30s", "no tests ran in 0.01s"
 *   make check   automake's "# TOTAL: N / # PASS: N / # SKIP: N / # XFAIL: N /
 *                # FAIL: N / # XPASS: N / # ERROR: N" block
 *   plain        a line holding "N passed, M failed"
 * Colour escapes and carriage returns are ignored. Skipped and deselected
 * tests did not run; errors, expected failures and timeouts did.
 *
 * Pure functions over memory: thread-safe.
 */
#ifndef PACKETFS_TESTCOUNT_H
#define PACKETFS_TESTCOUNT_H

#include <stddef.h>

enum testcount_tool {
	TESTCOUNT_NONE = 0,
	TESTCOUNT_MESON,
	TESTCOUNT_CTEST,
	TESTCOUNT_PYTEST,
	TESTCOUNT_AUTOMAKE,
	TESTCOUNT_PLAIN,
};

/* One test summary. */
struct testcount {
	enum testcount_tool tool; /* TESTCOUNT_NONE: no summary found */
	long ran;                 /* tests that ran (not skipped), >= 0 */
	long failed;              /* of those, failed, errored, timed out or
				   * unexpectedly passed, as the tool counts */
};

/*
 * Scans text (len bytes; need not be NUL-terminated; NUL bytes end a line)
 * for test summaries and stores the last one, the one that ends last in the
 * text, in *out. Returns 1 when a summary was found, 0 when none was
 * (then out->tool is TESTCOUNT_NONE and the counts are 0). A line longer
 * than 1 KiB is judged by its first 1 KiB.
 */
int testcount_scan(const char *text, size_t len, struct testcount *out);

/* The tool's name as people call it: "meson test", "ctest", "pytest",
 * "make check", "test summary"; "" for TESTCOUNT_NONE. Static string. */
const char *testcount_tool_name(enum testcount_tool tool);

#endif
