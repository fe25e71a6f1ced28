/*
 * testcount.c - the number of tests a test runner ran, from its closing
 * summary (see testcount.h for the formats).
 *
 * Design: one pass over the text, a line at a time. Each line is first
 * cleaned (colour escapes and '\r' dropped, trailing blanks cut, at most
 * LINE_SCAN bytes kept), then tried against each format. Two formats are
 * blocks of "Key: N" lines (meson's "Ok:" ... "Timeout:", automake's
 * "# TOTAL:" ... "# ERROR:"): the first key opens the block, each further
 * key of the same block updates it, any other line closes it. ctest's
 * list of tests that did not run follows its summary and takes its
 * skipped tests off the count. Every line that completes or updates a
 * summary makes it the last one found, so the result is the summary that
 * ends last in the text.
 * JUnit XML is testcount_junit.c's.
 *
 * No shared state: thread-safe.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testcount.h"

#define LINE_SCAN 1024

enum block { B_NONE, B_MESON, B_AUTOMAKE, B_CTEST_SKIPS };

struct scan {
	struct testcount last;
	int have;
	enum block block;
	long v[7]; /* the counts of the open block, by key index */
};

static const char *const meson_keys[] = {
	"Ok:", "Expected Fail:", "Fail:", "Unexpected Pass:", "Skipped:", "Timeout:", NULL,
};

static const char *const automake_keys[] = {
	"# TOTAL:", "# PASS:", "# SKIP:", "# XFAIL:", "# FAIL:", "# XPASS:", "# ERROR:", NULL,
};

const char *testcount_tool_name(enum testcount_tool tool)
{
	switch (tool) {
	case TESTCOUNT_MESON:
		return "meson test";
	case TESTCOUNT_CTEST:
		return "ctest";
	case TESTCOUNT_PYTEST:
		return "pytest";
	case TESTCOUNT_AUTOMAKE:
		return "make check";
	case TESTCOUNT_PLAIN:
		return "test summary";
	case TESTCOUNT_JUNIT:
		return "JUnit XML";
	case TESTCOUNT_NONE:
		break;
	}
	return "";
}

/* Parses a decimal number at *p (at least one digit), saturating. */
static int number(const char **p, long *n)
{
	const char *s = *p;
	long v = 0;

	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++)
		v = v > 100000000L ? v : v * 10 + (*s - '0');
	*n = v;
	*p = s;
	return 1;
}

static int literal(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0)
		return 0;
	*p += n;
	return 1;
}

static void skip_blanks(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* The index of the key of keys that line is ("Key:   N"), with N in *n; -1. */
static int key_line(const char *line, const char *const *keys, long *n)
{
	const char *p;
	int i;

	for (i = 0; keys[i]; i++) {
		p = line;
		if (!literal(&p, keys[i]))
			continue;
		skip_blanks(&p);
		if (number(&p, n) && *p == '\0')
			return i;
		return -1;
	}
	return -1;
}

static void found(struct scan *sc, enum testcount_tool tool, long ran, long failed, long skipped)
{
	sc->last.tool = tool;
	sc->last.ran = ran > 0 ? ran : 0;
	sc->last.failed = failed > 0 ? failed : 0;
	sc->last.skipped = skipped > 0 ? skipped : 0;
	sc->have = 1;
}

static void meson_update(struct scan *sc)
{
	const long *v = sc->v;

	/* Ok, Expected Fail, Fail, Unexpected Pass, (Skipped), Timeout */
	found(sc, TESTCOUNT_MESON, v[0] + v[1] + v[2] + v[3] + v[5], v[2] + v[3] + v[5], v[4]);
}

static void automake_update(struct scan *sc)
{
	const long *v = sc->v;

	/* TOTAL less SKIP ran; FAIL, XPASS and ERROR are failures */
	found(sc, TESTCOUNT_AUTOMAKE, v[0] - v[2], v[4] + v[5] + v[6], v[2]);
}

/* A summary block of "Key: N" lines, its first key first. */
struct key_block {
	enum block block;                   /* what scan.block is while in it */
	const char *const *keys;
	void (*update)(struct scan *sc);    /* the counts of scan.v into scan.last */
};

static const struct key_block key_blocks[] = {
	{ B_MESON, meson_keys, meson_update },
	{ B_AUTOMAKE, automake_keys, automake_update },
};

/* Takes line into the block kb: a further key while sc is in it, or its
 * first key, which (re)starts it. Returns 1 when the line was taken, 0 when
 * it is not kb's. */
static int key_block_line(struct scan *sc, const struct key_block *kb, const char *line)
{
	long n;
	int k = key_line(line, kb->keys, &n);

	if (k > 0 && sc->block == kb->block) {
		sc->v[k] = n;
	} else if (k == 0) {
		memset(sc->v, 0, sizeof(sc->v));
		sc->v[0] = n;
		sc->block = kb->block;
	} else {
		return 0;
	}
	kb->update(sc);
	return 1;
}

/* "N% tests passed, M tests failed out of T" */
static int ctest_line(const char *s, long *failed, long *total)
{
	long pct;

	return number(&s, &pct) && literal(&s, "% tests passed, ") && number(&s, failed) &&
	       (literal(&s, " tests failed out of ") || literal(&s, " test failed out of ")) &&
	       number(&s, total) && *s == '\0';
}

/* "  3 - name (Skipped)" in ctest's list of tests that did not run. */
static int ctest_skip_line(const char *s)
{
	static const char tail[] = " (Skipped)";
	long n;
	size_t len;

	skip_blanks(&s);
	if (!number(&s, &n) || !literal(&s, " - "))
		return 0;
	len = strlen(s);
	return len > sizeof(tail) - 1 && strcmp(s + len - (sizeof(tail) - 1), tail) == 0;
}

/* Whether s (after its digits) is "in 1.23s" with an optional " (0:01:02)". */
static int pytest_time(const char *s)
{
	long n;

	if (!number(&s, &n))
		return 0;
	if (*s == '.') {
		s++;
		if (!number(&s, &n))
			return 0;
	}
	if (*s++ != 's')
		return 0;
	if (*s == '\0')
		return 1;
	return s[0] == ' ' && s[1] == '(' && s[strlen(s) - 1] == ')';
}

/*
 * pytest's last line, its "=" frame already cut: "3 passed, 1 skipped in
 * 0.12s", "no tests ran in 0.01s". Fills ran, failed and skipped.
 */
static int pytest_line(const char *s, long *ran, long *failed, long *skipped)
{
	static const struct {
		const char *word;
		int ran, failed;
	} words[] = {
		{ "passed", 1, 0 },    { "failed", 1, 1 },      { "errors", 1, 1 },
		{ "error", 1, 1 },     { "xfailed", 1, 0 },     { "xpassed", 1, 0 },
		{ "skipped", 0, 0 },   { "deselected", 0, 0 },  { "warnings", 0, 0 },
		{ "warning", 0, 0 },   { "rerun", 0, 0 },       { "reruns", 0, 0 },
	};
	long n;
	size_t i, wl;

	*ran = *failed = *skipped = 0;
	if (literal(&s, "no tests ran in "))
		return pytest_time(s);
	for (;;) {
		if (!number(&s, &n) || *s++ != ' ')
			return 0;
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			wl = strlen(words[i].word);
			if (strncmp(s, words[i].word, wl) == 0 && (s[wl] == ',' || s[wl] == ' '))
				break;
		}
		if (i == sizeof(words) / sizeof(words[0]))
			return 0;
		s += wl;
		if (words[i].ran)
			*ran += n;
		if (words[i].failed)
			*failed += n;
		if (strcmp(words[i].word, "skipped") == 0)
			*skipped += n;
		if (literal(&s, ", "))
			continue;
		return literal(&s, " in ") && pytest_time(s);
	}
}

/* The last "N passed, M failed" in s, not part of a longer word or number. */
static int plain_line(const char *s, long *ran, long *failed)
{
	const char *at, *d, *p;
	long passed, nfailed;
	int ok = 0;

	for (at = strstr(s, " passed, "); at; at = strstr(at + 1, " passed, ")) {
		for (d = at; d > s && isdigit((unsigned char)d[-1]); d--)
			;
		if (d == at || (d > s && (isalnum((unsigned char)d[-1]) || d[-1] == '%' ||
					  d[-1] == '.' || d[-1] == '-')))
			continue;
		p = d;
		if (!number(&p, &passed) || !literal(&p, " passed, ") || !number(&p, &nfailed) ||
		    !literal(&p, " failed") || isalnum((unsigned char)*p))
			continue;
		*ran = passed + nfailed;
		*failed = nfailed;
		ok = 1;
	}
	return ok;
}

/* Copies a line into out without colour escapes and '\r', trailing blanks cut. */
static void clean_line(const char *s, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 1 < size; i++) {
		if (s[i] == '\r')
			continue;
		if (s[i] == '\033') {
			/* CSI: ESC [ parameters final byte; other escapes: two bytes */
			if (i + 1 < len && s[i + 1] == '[') {
				for (i += 2; i < len && !(s[i] >= 0x40 && s[i] <= 0x7e); i++)
					;
			} else {
				i++;
			}
			continue;
		}
		out[o++] = s[i];
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '\t'))
		o--;
	out[o] = '\0';
}

static void scan_line(struct scan *sc, const char *line)
{
	const char *s = line;
	char frame[LINE_SCAN];
	long a, b, c;
	size_t len, i;

	if (sc->block == B_CTEST_SKIPS && ctest_skip_line(line)) {
		if (sc->last.ran > 0)
			sc->last.ran--;
		sc->last.skipped++;
		return;
	}
	for (i = 0; i < sizeof(key_blocks) / sizeof(key_blocks[0]); i++)
		if (key_block_line(sc, &key_blocks[i], line))
			return;
	sc->block = B_NONE; /* the line ends the block sc was in, if any */
	skip_blanks(&s);
	if (strcmp(s, "No tests defined.") == 0) {
		found(sc, TESTCOUNT_MESON, 0, 0, 0);
		return;
	}
	if (strcmp(s, "No tests were found!!!") == 0) {
		found(sc, TESTCOUNT_CTEST, 0, 0, 0);
		return;
	}
	if (ctest_line(s, &a, &b)) {
		found(sc, TESTCOUNT_CTEST, b, a, 0);
		return;
	}
	if (strcmp(s, "The following tests did not run:") == 0 && sc->have &&
	    sc->last.tool == TESTCOUNT_CTEST) {
		sc->block = B_CTEST_SKIPS;
		return;
	}
	/* pytest frames its last line with '=' (not with -q). */
	while (*s == '=')
		s++;
	skip_blanks(&s);
	len = strlen(s);
	while (len > 0 && (s[len - 1] == '=' || s[len - 1] == ' '))
		len--;
	memcpy(frame, s, len);
	frame[len] = '\0';
	if (pytest_line(frame, &a, &b, &c)) {
		found(sc, TESTCOUNT_PYTEST, a, b, c);
		return;
	}
	if (plain_line(line, &a, &b))
		found(sc, TESTCOUNT_PLAIN, a, b, 0);
}

int testcount_scan(const char *text, size_t len, struct testcount *out)
{
	struct scan sc;
	char line[LINE_SCAN];
	size_t start = 0, end;

	memset(&sc, 0, sizeof(sc));
	while (text && start < len) {
		for (end = start; end < len && text[end] != '\n' && text[end] != '\0'; end++)
			;
		clean_line(text + start, end - start, line, sizeof(line));
		scan_line(&sc, line);
		start = end + 1;
	}
	*out = sc.last;
	if (!sc.have)
		memset(out, 0, sizeof(*out));
	return sc.have;
}

/* ---- outcome and note ---- */

enum testcount_outcome testcount_outcome(const struct testcount *tc)
{
	if (tc->tool == TESTCOUNT_NONE)
		return TESTCOUNT_PASSED;
	if (tc->ran <= 0)
		return TESTCOUNT_NO_TESTS;
	return tc->failed > 0 ? TESTCOUNT_FAILED : TESTCOUNT_PASSED;
}

char *testcount_note(const struct testcount *tc, char *buf, size_t size)
{
	const char *tool = testcount_tool_name(tc->tool);

	if (size == 0)
		return buf;
	buf[0] = '\0';
	switch (testcount_outcome(tc)) {
	case TESTCOUNT_NO_TESTS:
		snprintf(buf, size, "no tests ran (%s)", tool);
		break;
	case TESTCOUNT_FAILED:
		snprintf(buf, size, "%ld of %ld test%s failed (%s)", tc->failed, tc->ran,
			 tc->ran == 1 ? "" : "s", tool);
		break;
	case TESTCOUNT_PASSED:
		if (tc->tool == TESTCOUNT_NONE)
			break;
		if (tc->skipped > 0)
			snprintf(buf, size, "%ld test%s ran, %ld skipped (%s)", tc->ran,
				 tc->ran == 1 ? "" : "s", tc->skipped, tool);
		else
			snprintf(buf, size, "%ld test%s ran (%s)", tc->ran, tc->ran == 1 ? "" : "s",
				 tool);
		break;
	}
	return buf;
}
