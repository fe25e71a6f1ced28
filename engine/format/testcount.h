/*
 * testcount.h - how many tests a test runner ran, read from the closing
 * summary it printed. The engine uses it on the log of a recipe that exited
 * 0: a recipe whose test runner ran no test is not validated evidence
 * (SPEC §6, docs/guide.md "Recipes").
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
 * JUnit XML (testcount_junit, testcount_junit_file) is read before any log:
 * a run that writes it to $PACKET_JUNIT has its tests counted from it
 * (SPEC §6 "Test counts"). It is read as Jenkins' and GitLab's readers do:
 * the root is <testsuites> or <testsuite>, suites nest, and each
 * <testcase> of a <testsuite> is one test; one with a <failure> or
 * <error> child failed, one with a <skipped> child (and neither of those)
 * did not run.
 * The tests/failures/errors/skipped attributes of the suites are used only
 * when the file holds no <testcase> at all. libxml2 reads it streaming,
 * without the network, DTDs or entity expansion: a file that refers to an
 * entity (billion laughs, external entities) is refused, not expanded.
 *
 * testcount_scan, testcount_tool_name, testcount_outcome and
 * testcount_note are pure functions over memory; the JUnit readers use
 * libxml2, initialised once (pthread_once), and keep no state of their
 * own. All are thread-safe.
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
	TESTCOUNT_JUNIT,
};

/* One test summary. */
struct testcount {
	enum testcount_tool tool; /* TESTCOUNT_NONE: no summary found */
	long ran;                 /* tests that ran (not skipped), >= 0 */
	long failed;              /* of those, failed, errored, timed out or
				   * unexpectedly passed, as the tool counts */
	long skipped;             /* tests that were skipped, where the summary
				   * says (meson, ctest, pytest, automake, JUnit);
				   * 0 otherwise */
};

/* What counts make of a run whose command exited 0 (testcount_outcome). */
enum testcount_outcome {
	TESTCOUNT_PASSED = 0, /* tests ran and none failed (or no count): the exit
			       * status stands */
	TESTCOUNT_NO_TESTS,   /* no test ran: never validated */
	TESTCOUNT_FAILED,     /* a test failed: failing, whatever the exit status */
};

/* The largest JUnit XML file read, in bytes (64 MiB). */
#define TESTCOUNT_JUNIT_MAX (64L * 1024 * 1024)

/*
 * Scans text (len bytes; need not be NUL-terminated; NUL bytes end a line)
 * for test summaries and stores the last one, the one that ends last in the
 * text, in *out. Returns 1 when a summary was found, 0 when none was
 * (then out->tool is TESTCOUNT_NONE and the counts are 0). A line longer
 * than 1 KiB is judged by its first 1 KiB.
 */
int testcount_scan(const char *text, size_t len, struct testcount *out);

/* The tool's name as people call it: "meson test", "ctest", "pytest",
 * "make check", "test summary", "JUnit XML"; "" for TESTCOUNT_NONE. Static
 * string. */
const char *testcount_tool_name(enum testcount_tool tool);

/*
 * Counts the tests of the JUnit XML document data (len bytes, at most
 * TESTCOUNT_JUNIT_MAX) into *out (tool TESTCOUNT_JUNIT; ran excludes
 * skipped tests). name (NULL: "junit.xml") names the document in messages.
 * Returns 0; -EINVAL when it is not well-formed XML, refers to an entity,
 * or its root is not <testsuites> or <testsuite>; -EFBIG when len is over
 * the limit; -ENOMEM. On error *out is zeroed and err (errlen bytes, may
 * be NULL) says why, with the line where the parser says.
 */
int testcount_junit(const char *data, size_t len, const char *name, struct testcount *out,
		    char *err, size_t errlen);

/*
 * testcount_junit on the file at path, which must be a regular file (a
 * symbolic link is not followed: -ELOOP; a FIFO or device: -EINVAL, never
 * waited on). It is streamed to the parser, never held whole in memory.
 * Returns 0, -ENOENT when there is no file, -EFBIG when it is larger than
 * TESTCOUNT_JUNIT_MAX (or grows past it while read), -EINVAL when it is
 * empty, testcount_junit's errors, or another negative errno of open or
 * read; err says why (errlen bytes, may be NULL).
 */
int testcount_junit_file(const char *path, struct testcount *out, char *err, size_t errlen);

/* What the counts tc make of a run that exited 0: TESTCOUNT_NO_TESTS when
 * tc->ran is 0, TESTCOUNT_FAILED when tc->failed > 0, else (and for
 * TESTCOUNT_NONE: no count, nothing to go by) TESTCOUNT_PASSED. */
enum testcount_outcome testcount_outcome(const struct testcount *tc);

/*
 * Writes what tc says, for a registry note, into buf (size bytes, always
 * terminated): "no tests ran (JUnit XML)", "2 of 7 tests failed (JUnit
 * XML)", "7 tests ran, 1 skipped (JUnit XML)", "1 test ran (pytest)".
 * Returns buf.
 */
char *testcount_note(const struct testcount *tc, char *buf, size_t size);

#endif
