/*
 * test-testcount.c - test summaries read from test runners' output
 * (engine/format/testcount.c). The samples are what the tools print: meson 1.0
 * and ctest 3.25 captured from tiny projects, pytest 7.2 from a test file
 * with passing, failing, skipped and xfail tests, automake 1.16's parallel
 * test harness, and the plain "N passed, M failed" line of tests/run.sh.
 * Each tool is checked for a run with tests, a run with none and a run
 * whose tests were all skipped; the last summary in the text wins.
 *
 * JUnit XML: the files of tests/data/good/junit (under
 * $PACKETFS_SOURCE_ROOT) are counted against the table junit_good, which
 * names every one of them (meson 1.0's and ctest 3.25's files captured
 * from tiny projects, pytest 7.2's by hand in its layout); every file of
 * tests/data/bad/junit is refused with -EINVAL and a message naming it,
 * among them entity expansion (billion laughs) and external entities.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "testcount.h"

/* Scans text; checks the tool and the counts (ran, failed). */
static void expect(const char *text, enum testcount_tool tool, long ran, long failed)
{
	struct testcount tc;
	int found;

	memset(&tc, 0x55, sizeof(tc));
	found = testcount_scan(text, strlen(text), &tc);
	if (found != (tool != TESTCOUNT_NONE) || tc.tool != tool || tc.ran != ran ||
	    tc.failed != failed)
		FAIL_AT("scan of <<%s>>: found %d tool %s ran %ld failed %ld; want tool %s ran %ld "
			"failed %ld", text, found, testcount_tool_name(tc.tool), tc.ran, tc.failed,
			testcount_tool_name(tool), ran, failed);
}

static const char meson_mixed[] =
	"ninja: Entering directory `/tmp/tc/m/b'\n"
	"ninja: no work to do.\n"
	"1/4 ok1  OK              0.13s\n"
	"2/4 ok2  OK              0.07s\n"
	"3/4 bad  FAIL            0.13s   exit status 1\n"
	">>> MALLOC_PERTURB_=70 /tmp/tc/m/b/bad\n"
	"\n"
	"4/4 skip SKIP            0.08s   exit status 77\n"
	"\n"
	"Ok:                 2   \n"
	"Expected Fail:      0   \n"
	"Fail:               1   \n"
	"Unexpected Pass:    0   \n"
	"Skipped:            1   \n"
	"Timeout:            0   \n"
	"\n"
	"Full log written to /tmp/tc/m/b/meson-logs/testlog.txt\n";

static const char meson_skipped[] =
	"1/1 skip SKIP            0.05s   exit status 77\n"
	"\n"
	"Ok:                 0   \n"
	"Expected Fail:      0   \n"
	"Fail:               0   \n"
	"Unexpected Pass:    0   \n"
	"Skipped:            1   \n"
	"Timeout:            0   \n"
	"\n"
	"Full log written to /tmp/tc/m3/b/meson-logs/testlog.txt\n";

static const char meson_none[] = "ninja: Entering directory `/tmp/tc/m2/b'\n"
				 "ninja: no work to do.\n"
				 "No tests defined.\n";

/* meson on a terminal: colour escapes around the counts. */
static const char meson_colour[] =
	"\033[32mOk:                 3   \033[0m\n"
	"Expected Fail:      0   \n"
	"\033[31mFail:               0   \033[0m\n"
	"Unexpected Pass:    0   \n"
	"Skipped:            0   \n"
	"Timeout:            1   \r\n";

static const char ctest_fail[] =
	"Test project /tmp/tc/c/b\n"
	"    Start 1: ok1\n"
	"1/3 Test #1: ok1 ..............................   Passed    0.02 sec\n"
	"    Start 2: ok2\n"
	"2/3 Test #2: ok2 ..............................   Passed    0.02 sec\n"
	"    Start 3: bad\n"
	"3/3 Test #3: bad ..............................***Failed    0.02 sec\n"
	"\n"
	"67% tests passed, 1 tests failed out of 3\n"
	"\n"
	"Total Test time (real) =   0.06 sec\n"
	"\n"
	"The following tests FAILED:\n"
	"\t  3 - bad (Failed)\n"
	"Errors while running CTest\n"
	"Output from these tests are in: /tmp/tc/c/b/Testing/Temporary/LastTest.log\n"
	"Use \"--rerun-failed --output-on-failure\" to re-run the failed cases verbosely.\n";

static const char ctest_pass[] =
	"Test project /tmp/tc/c/b\n"
	"    Start 1: ok1\n"
	"1/2 Test #1: ok1 ..............................   Passed    0.01 sec\n"
	"    Start 2: ok2\n"
	"2/2 Test #2: ok2 ..............................   Passed    0.01 sec\n"
	"\n"
	"100% tests passed, 0 tests failed out of 2\n"
	"\n"
	"Total Test time (real) =   0.03 sec\n";

static const char ctest_none[] = "Test project /tmp/tc/c2/b\n"
				 "No tests were found!!!\n";

static const char ctest_skipped[] =
	"Test project /tmp/tc/c3/b\n"
	"    Start 1: skip\n"
	"1/1 Test #1: skip .............................***Skipped   0.01 sec\n"
	"\n"
	"100% tests passed, 0 tests failed out of 1\n"
	"\n"
	"Total Test time (real) =   0.01 sec\n"
	"\n"
	"The following tests did not run:\n"
	"\t  1 - skip (Skipped)\n";

static const char ctest_some_skipped[] =
	"100% tests passed, 0 tests failed out of 3\n"
	"\n"
	"Total Test time (real) =   0.01 sec\n"
	"\n"
	"The following tests did not run:\n"
	"\t  1 - skip (Skipped)\n"
	"\t  3 - gpu test (Skipped)\n"
	"\t  9 - odd (Skipped) name (Disabled)\n"
	"\t  4 - another (Skipped)\n";

static const char pytest_mixed[] =
	"============================= test session starts ==============================\n"
	"platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0+repack\n"
	"rootdir: /tmp/tc/p\n"
	"collected 5 items\n"
	"\n"
	"test_a.py ..Fsx                                                          [100%]\n"
	"\n"
	"=================================== FAILURES ===================================\n"
	"____________________________________ test_c ____________________________________\n"
	"\n"
	"    def test_c(): assert 1 == 2\n"
	"E   assert 1 == 2\n"
	"\n"
	"test_a.py:4: AssertionError\n"
	"=========================== short test summary info ============================\n"
	"FAILED test_a.py::test_c - assert 1 == 2\n"
	"============== 1 failed, 2 passed, 1 skipped, 1 xfailed in 0.03s ===============\n";

static const char pytest_none[] =
	"============================= test session starts ==============================\n"
	"platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0+repack\n"
	"rootdir: /tmp/tc/p/e\n"
	"collected 0 items\n"
	"\n"
	"============================ no tests ran in 0.00s =============================\n";

static const char automake_mixed[] =
	"PASS: t1\n"
	"PASS: t2\n"
	"FAIL: t3\n"
	"SKIP: t4\n"
	"============================================================================\n"
	"Testsuite summary for hello 1.0\n"
	"============================================================================\n"
	"# TOTAL: 4\n"
	"# PASS:  2\n"
	"# SKIP:  1\n"
	"# XFAIL: 0\n"
	"# FAIL:  1\n"
	"# XPASS: 0\n"
	"# ERROR: 0\n"
	"============================================================================\n"
	"See ./test-suite.log\n"
	"============================================================================\n"
	"make[3]: *** [Makefile:1138: test-suite.log] Error 1\n";

static const char automake_none[] =
	"make  check-TESTS\n"
	"make[2]: Entering directory '/tmp/hello'\n"
	"============================================================================\n"
	"Testsuite summary for hello 1.0\n"
	"============================================================================\n"
	"# TOTAL: 0\n"
	"# PASS:  0\n"
	"# SKIP:  0\n"
	"# XFAIL: 0\n"
	"# FAIL:  0\n"
	"# XPASS: 0\n"
	"# ERROR: 0\n"
	"============================================================================\n"
	"make[2]: Leaving directory '/tmp/hello'\n";

static const char automake_skipped[] =
	"SKIP: t1\n"
	"SKIP: t2\n"
	"============================================================================\n"
	"Testsuite summary for hello 1.0\n"
	"============================================================================\n"
	"# TOTAL: 2\n"
	"# PASS:  0\n"
	"# SKIP:  2\n"
	"# XFAIL: 0\n"
	"# FAIL:  0\n"
	"# XPASS: 0\n"
	"# ERROR: 0\n"
	"============================================================================\n";

/* with --enable-color-tests (or a terminal) */
static const char automake_colour[] =
	"\033[0;32mPASS\033[m: t1\n"
	"\033[0;32m============================================================================\033[m\n"
	"\033[0;32mTestsuite summary for hello 1.0\033[m\n"
	"\033[0;32m============================================================================\033[m\n"
	"# TOTAL: 1\n"
	"\033[0;32m# PASS: \033[m 1\n"
	"# SKIP:  0\n"
	"# XFAIL: 0\n"
	"# FAIL:  0\n"
	"# XPASS: 0\n"
	"# ERROR: 0\n";

/* The summaries of each tool (the samples above and single lines): the
 * tool and the counts (ran, failed) a scan of the text finds. */
static const struct {
	const char *text;
	enum testcount_tool tool;
	long ran, failed;
} summaries[] = {
	/* meson test */
	{ meson_mixed, TESTCOUNT_MESON, 3, 1 },
	{ meson_skipped, TESTCOUNT_MESON, 0, 0 },
	{ meson_none, TESTCOUNT_MESON, 0, 0 },
	{ meson_colour, TESTCOUNT_MESON, 4, 1 },
	/* ctest */
	{ ctest_fail, TESTCOUNT_CTEST, 3, 1 },
	{ ctest_pass, TESTCOUNT_CTEST, 2, 0 },
	{ ctest_none, TESTCOUNT_CTEST, 0, 0 },
	{ ctest_skipped, TESTCOUNT_CTEST, 0, 0 },
	/* the list ends at the first line that is not a skipped test */
	{ ctest_some_skipped, TESTCOUNT_CTEST, 1, 0 },
	/* pytest */
	{ pytest_mixed, TESTCOUNT_PYTEST, 4, 1 },
	{ pytest_none, TESTCOUNT_PYTEST, 0, 0 },
	/* -q: no frame */
	{ "..                                                                       [100%]\n"
	  "2 passed in 0.01s\n", TESTCOUNT_PYTEST, 2, 0 },
	{ "1 failed, 2 passed, 1 skipped, 1 xfailed in 0.02s\n", TESTCOUNT_PYTEST, 4, 1 },
	{ "======================= 1 skipped, 4 deselected in 0.01s =======================\n",
	  TESTCOUNT_PYTEST, 0, 0 },
	{ "==== 3 passed, 2 warnings in 62.40s (0:01:02) ====\n", TESTCOUNT_PYTEST, 3, 0 },
	{ "==== 1 passed, 1 error in 0.05s ====\n", TESTCOUNT_PYTEST, 2, 1 },
	/* automake (make check) */
	{ automake_mixed, TESTCOUNT_AUTOMAKE, 3, 1 },
	{ automake_none, TESTCOUNT_AUTOMAKE, 0, 0 },
	{ automake_skipped, TESTCOUNT_AUTOMAKE, 0, 0 },
	{ automake_colour, TESTCOUNT_AUTOMAKE, 1, 0 },
	/* tests/run.sh's "N passed, M failed" */
	{ "PASS pipeline/full\nFAIL pipeline/rerun\n12 passed, 1 failed\n", TESTCOUNT_PLAIN,
	  13, 1 },
	{ "0 passed, 0 failed\n", TESTCOUNT_PLAIN, 0, 0 },
	{ "result: 4 passed, 0 failed, 2 skipped\n", TESTCOUNT_PLAIN, 4, 0 },
	/* ctest's line is ctest's */
	{ "100% tests passed, 0 tests failed out of 7\n", TESTCOUNT_CTEST, 7, 0 },
	/* near misses: no summary. meson's "Fail:" outside the block, an "Ok:"
	 * line that does not hold a count only */
	{ "Fail: 0\nSkipped: 3\n", TESTCOUNT_NONE, 0, 0 },
	{ "Ok: 3 of them\n", TESTCOUNT_NONE, 0, 0 },
	/* not pytest's: an unknown word, or no time */
	{ "3 passed, 2 bananas in 0.1s\n", TESTCOUNT_NONE, 0, 0 },
	{ "3 passed in the end\n", TESTCOUNT_NONE, 0, 0 },
	/* not a count of its own (plain) */
	{ "v1.5 passed, 0 failed\n", TESTCOUNT_NONE, 0, 0 },
	{ "run 3 passed, 2 failedover\n", TESTCOUNT_NONE, 0, 0 },
};

TEST(summaries)
{
	size_t i;

	for (i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++)
		expect(summaries[i].text, summaries[i].tool, summaries[i].ran, summaries[i].failed);
}

TEST(no_summary)
{
	struct testcount tc;

	expect("", TESTCOUNT_NONE, 0, 0);
	expect("cc -Wall -o hello hello.c\nhello, new world\n", TESTCOUNT_NONE, 0, 0);
	/* what recipes/02-unit-tests.sh says of itself */
	expect("02-unit-tests: 3 tests passed\n02-unit-tests: validated\n", TESTCOUNT_NONE, 0, 0);
	/* the engine's own log header and footer */
	expect("# packetfs recipe log\n# recipe: 02-unit-tests\n# summary: run the unit tests "
	       "(meson test, make check or make test, ctest)\n# gpus: none\n\n"
	       "# packetfs: exit code 0 after 0.1 s\n", TESTCOUNT_NONE, 0, 0);
	ASSERT_EQ(testcount_scan(NULL, 0, &tc), 0);
	ASSERT_EQ(tc.tool, TESTCOUNT_NONE);
	ASSERT_STREQ(testcount_tool_name(TESTCOUNT_NONE), "");
	ASSERT_STREQ(testcount_tool_name(TESTCOUNT_MESON), "meson test");
	ASSERT_STREQ(testcount_tool_name(TESTCOUNT_AUTOMAKE), "make check");
}

TEST(last_wins)
{
	char text[4096];

	/* tests ran, then a second runner ran none: the last word is "none" */
	snprintf(text, sizeof(text), "%s%s", ctest_pass, pytest_none);
	expect(text, TESTCOUNT_PYTEST, 0, 0);
	snprintf(text, sizeof(text), "%s%s", meson_none, ctest_pass);
	expect(text, TESTCOUNT_CTEST, 2, 0);
	snprintf(text, sizeof(text), "%s%s", meson_mixed, automake_none);
	expect(text, TESTCOUNT_AUTOMAKE, 0, 0);
	snprintf(text, sizeof(text), "%sunrelated output after it\n", meson_mixed);
	expect(text, TESTCOUNT_MESON, 3, 1);
	/* a block cut short still counts what it said */
	expect("Ok: 5\nExpected Fail: 0\n", TESTCOUNT_MESON, 5, 0);
	/* no newline at the end, and a NUL inside */
	expect("2 passed in 0.01s", TESTCOUNT_PYTEST, 2, 0);
	{
		static const char nul[] = "no tests ran in 0.01s\0" "3 passed in 0.1s";
		struct testcount tc;

		ASSERT_EQ(testcount_scan(nul, sizeof(nul) - 1, &tc), 1);
		ASSERT_EQ(tc.tool, TESTCOUNT_PYTEST);
		ASSERT_EQ(tc.ran, 3);
	}
	/* a very long line does not overflow */
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	expect(text, TESTCOUNT_NONE, 0, 0);
}

/* The skipped counts of summaries. */
TEST(skipped)
{
	struct testcount tc;

	ASSERT_EQ(testcount_scan(meson_mixed, strlen(meson_mixed), &tc), 1);
	ASSERT_EQ(tc.skipped, 1);
	ASSERT_EQ(testcount_scan(ctest_some_skipped, strlen(ctest_some_skipped), &tc), 1);
	ASSERT_EQ(tc.skipped, 2);
	ASSERT_EQ(testcount_scan(pytest_mixed, strlen(pytest_mixed), &tc), 1);
	ASSERT_EQ(tc.skipped, 1);
	ASSERT_EQ(testcount_scan(automake_skipped, strlen(automake_skipped), &tc), 1);
	ASSERT_EQ(tc.skipped, 2);
	ASSERT_EQ(testcount_scan(ctest_pass, strlen(ctest_pass), &tc), 1);
	ASSERT_EQ(tc.skipped, 0);
}

/* ---- JUnit XML ---- */

static const struct {
	const char *file;
	long ran, failed, skipped;
} junit_good[] = {
	{ "meson-mixed.xml", 2, 1, 1 },   /* ok, fail, skip (exit 77) */
	{ "ctest-mixed.xml", 2, 1, 1 },   /* the same tests under ctest --output-junit */
	{ "pytest-mixed.xml", 4, 2, 2 },  /* a setup <error> fails; xfail is <skipped> */
	{ "nested.xml", 4, 1, 0 },        /* suites in suites; CDATA is no element */
	{ "zero.xml", 0, 0, 0 },          /* <testsuites/> */
	{ "zero-suite.xml", 0, 0, 0 },    /* pytest with nothing collected */
	{ "all-skipped.xml", 0, 0, 2 },
	{ "attrs-only.xml", 5, 2, 1 },    /* leaf suites' attributes, "many" ignored */
	{ "attrs-ignored.xml", 2, 1, 0 }, /* testcases win over attributes; failure over skipped */
	{ "doctype.xml", 1, 0, 0 },       /* its external DTD is not fetched */
};

/* The directory tests/data/<kind>/junit. */
static void data_dir(const char *kind, char *dir, size_t size)
{
	const char *root = getenv("PACKETFS_SOURCE_ROOT");

	if (!root)
		FAIL_AT("PACKETFS_SOURCE_ROOT is not set");
	snprintf(dir, size, "%s/tests/data/%s/junit", root, kind);
}

/* Calls check(dir, name) for every file name of the directory dir of
 * tests/data/<kind>/junit (dot files left out), in readdir's order; returns
 * how many there were. */
static size_t each_data_file(const char *kind, void (*check)(const char *dir, const char *name))
{
	char dir[4096];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	data_dir(kind, dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		FAIL_AT("cannot open %s", dir);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		check(dir, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The file dir/name counts as its row of junit_good says. */
static void expect_good_file(const char *dir, const char *name)
{
	char path[8192], err[256];
	struct testcount tc;
	size_t k;

	for (k = 0; k < sizeof(junit_good) / sizeof(junit_good[0]); k++)
		if (strcmp(junit_good[k].file, name) == 0)
			break;
	if (k == sizeof(junit_good) / sizeof(junit_good[0]))
		FAIL_AT("%s/%s is not in junit_good", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(&tc, 0x55, sizeof(tc));
	if (testcount_junit_file(path, &tc, err, sizeof(err)) != 0)
		FAIL_AT("%s: %s", name, err);
	if (tc.tool != TESTCOUNT_JUNIT || tc.ran != junit_good[k].ran ||
	    tc.failed != junit_good[k].failed || tc.skipped != junit_good[k].skipped)
		FAIL_AT("%s: ran %ld failed %ld skipped %ld; want %ld %ld %ld", name, tc.ran,
			tc.failed, tc.skipped, junit_good[k].ran, junit_good[k].failed,
			junit_good[k].skipped);
}

TEST(junit_data_good)
{
	ASSERT_EQ(each_data_file("good", expect_good_file),
		  sizeof(junit_good) / sizeof(junit_good[0]));
}

/* Reads tests/data/bad/junit/file expecting -EINVAL and a message holding
 * the file's name and want. */
static void expect_bad_file(const char *file, const char *want)
{
	char dir[4096], path[8192], err[256];
	struct testcount tc;
	struct timespec t0, t1;
	int rc;

	data_dir("bad", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	memset(err, 'x', sizeof(err));
	memset(&tc, 0x55, sizeof(tc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = testcount_junit_file(path, &tc, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != -EINVAL)
		FAIL_AT("%s: got %d (%s), want -EINVAL", file, rc, err);
	ASSERT(memchr(err, '\0', sizeof(err)) != NULL);
	ASSERT_CONTAINS(err, file);
	ASSERT_CONTAINS(err, want);
	ASSERT_EQ(tc.tool, TESTCOUNT_NONE);
	ASSERT_EQ(tc.ran, 0);
	/* nothing was expanded: well under a second */
	ASSERT((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1000);
}

/* dir/name is refused with a message naming it. */
static void expect_refused(const char *dir, const char *name)
{
	expect_bad_file(name, ": ");
}

TEST(junit_data_bad)
{
	ASSERT(each_data_file("bad", expect_refused) >= 9);
	/* what the messages say */
	expect_bad_file("wrong-root.xml", "the root element is <test-run>, not <testsuites> or "
			"<testsuite>");
	expect_bad_file("truncated.xml", "line ");
	expect_bad_file("mismatched.xml", "line 3: ");
	expect_bad_file("empty.xml", "empty");
	expect_bad_file("billion-laughs.xml", "entity");
	expect_bad_file("entity-testcases.xml", "refers to the entity &cases;");
	expect_bad_file("external-entity.xml", "refers to the entity &passwd;");
}

/* testcount_junit on a string, named "junit.xml". */
static int junit_text(const char *xml, struct testcount *tc, char *err, size_t errlen)
{
	return testcount_junit(xml, strlen(xml), NULL, tc, err, errlen);
}

TEST(junit_buffer)
{
	static const char one[] = "<testsuite><testcase name=\"a\"/></testsuite>";
	struct testcount tc;
	char err[128] = "x";

	ASSERT_EQ(junit_text(one, &tc, err, sizeof(err)), 0);
	ASSERT_STREQ(err, "");
	ASSERT_EQ(tc.tool, TESTCOUNT_JUNIT);
	ASSERT_EQ(tc.ran, 1);
	/* a testcase counts only as a child of a <testsuite> */
	ASSERT_EQ(junit_text("<testsuites><testcase/><testsuite><x><testcase/></x></testsuite>"
			     "</testsuites>", &tc, err, sizeof(err)), 0);
	ASSERT_EQ(tc.ran, 0);
	/* a namespace prefix on the element names is not in the way */
	ASSERT_EQ(junit_text("<j:testsuite xmlns:j=\"urn:x\"><j:testcase/></j:testsuite>", &tc, err,
			     sizeof(err)), 0);
	ASSERT_EQ(tc.ran, 1);
	/* the name names the document; err may be NULL */
	ASSERT_EQ(testcount_junit("<testsuite>", 11, "cut.xml", &tc, err, sizeof(err)), -EINVAL);
	ASSERT_CONTAINS(err, "cut.xml: line 1: ");
	ASSERT_EQ(junit_text("<html/>", &tc, NULL, 0), -EINVAL);
	ASSERT_EQ(junit_text("<html/>", &tc, err, sizeof(err)), -EINVAL);
	ASSERT_CONTAINS(err, "junit.xml: the root element is <html>");
	ASSERT_EQ(testcount_junit(one, (size_t)TESTCOUNT_JUNIT_MAX + 1, NULL, &tc, err,
				  sizeof(err)), -EFBIG);
	ASSERT_EQ(testcount_junit(NULL, 0, NULL, &tc, err, sizeof(err)), -EINVAL);
	/* a short err buffer is cut, and terminated */
	ASSERT_EQ(junit_text("<html/>", &tc, err, 8), -EINVAL);
	ASSERT_STREQ(err, "junit.x");
}

TEST(junit_file)
{
	char dir[] = "/tmp/test-testcount-XXXXXX", path[256], err[256];
	struct testcount tc;
	int fd;

	if (getenv("TMPDIR")) {
		ASSERT(strlen(getenv("TMPDIR")) < 200);
	}
	ASSERT(mkdtemp(dir) != NULL);
	/* no file */
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	ASSERT_EQ(testcount_junit_file(path, &tc, err, sizeof(err)), -ENOENT);
	ASSERT_CONTAINS(err, "junit.xml: ");
	ASSERT_EQ(tc.tool, TESTCOUNT_NONE);
	/* a good one */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, "<testsuite><testcase/><testcase/></testsuite>\n", 46), 46);
	close(fd);
	ASSERT_EQ(testcount_junit_file(path, &tc, err, sizeof(err)), 0);
	ASSERT_EQ(tc.ran, 2);
	/* a symbolic link is not followed */
	snprintf(path, sizeof(path), "%s/link.xml", dir);
	ASSERT_EQ(symlink("junit.xml", path), 0);
	ASSERT_EQ(testcount_junit_file(path, &tc, err, sizeof(err)), -ELOOP);
	ASSERT_CONTAINS(err, "link.xml: a symbolic link");
	unlink(path);
	/* a FIFO is refused, not waited on */
	snprintf(path, sizeof(path), "%s/fifo.xml", dir);
	ASSERT_EQ(mkfifo(path, 0600), 0);
	ASSERT_EQ(testcount_junit_file(path, &tc, err, sizeof(err)), -EINVAL);
	ASSERT_CONTAINS(err, "fifo.xml: not a regular file");
	unlink(path);
	/* a directory */
	ASSERT_EQ(testcount_junit_file(dir, &tc, err, sizeof(err)), -EINVAL);
	/* over the limit (sparse: nothing is written) */
	snprintf(path, sizeof(path), "%s/huge.xml", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT(fd >= 0);
	ASSERT_EQ(ftruncate(fd, TESTCOUNT_JUNIT_MAX + 1), 0);
	close(fd);
	ASSERT_EQ(testcount_junit_file(path, &tc, err, sizeof(err)), -EFBIG);
	ASSERT_CONTAINS(err, "huge.xml: larger than 67108864 bytes");
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	unlink(path);
	ASSERT_EQ(rmdir(dir), 0);
}

TEST(outcome_and_note)
{
	struct testcount tc = {TESTCOUNT_JUNIT, 0, 0, 0};
	char note[128];

	ASSERT_EQ(testcount_outcome(&tc), TESTCOUNT_NO_TESTS);
	ASSERT_STREQ(testcount_note(&tc, note, sizeof(note)), "no tests ran (JUnit XML)");
	tc.skipped = 3; /* skipped tests did not run */
	ASSERT_EQ(testcount_outcome(&tc), TESTCOUNT_NO_TESTS);
	tc.ran = 7;
	tc.failed = 2;
	ASSERT_EQ(testcount_outcome(&tc), TESTCOUNT_FAILED);
	ASSERT_STREQ(testcount_note(&tc, note, sizeof(note)), "2 of 7 tests failed (JUnit XML)");
	tc.failed = 0;
	ASSERT_EQ(testcount_outcome(&tc), TESTCOUNT_PASSED);
	ASSERT_STREQ(testcount_note(&tc, note, sizeof(note)), "7 tests ran, 3 skipped (JUnit XML)");
	tc.ran = 1;
	tc.skipped = 0;
	ASSERT_STREQ(testcount_note(&tc, note, sizeof(note)), "1 test ran (JUnit XML)");
	tc.failed = 1;
	ASSERT_STREQ(testcount_note(&tc, note, sizeof(note)), "1 of 1 test failed (JUnit XML)");
	tc.tool = TESTCOUNT_PYTEST;
	ASSERT_STREQ(testcount_note(&tc, note, 12), "1 of 1 test");
	/* no count: the exit status stands, nothing to say */
	memset(&tc, 0, sizeof(tc));
	ASSERT_EQ(testcount_outcome(&tc), TESTCOUNT_PASSED);
	ASSERT_STREQ(testcount_note(&tc, note, sizeof(note)), "");
	ASSERT_STREQ(testcount_tool_name(TESTCOUNT_JUNIT), "JUnit XML");
}

int main(void)
{
	RUN(summaries);
	RUN(no_summary);
	RUN(last_wins);
	RUN(skipped);
	RUN(junit_data_good);
	RUN(junit_data_bad);
	RUN(junit_buffer);
	RUN(junit_file);
	RUN(outcome_and_note);
	return 0;
}
