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
 *
 * JUnit XML goes through libxml2's streaming reader (xmlTextReader), never
 * a tree, and a file is read through a callback that stops past
 * TESTCOUNT_JUNIT_MAX bytes (also when it grew after fstat): memory stays
 * small whatever the file holds (5 MB for a 63 MiB file of 487,700
 * testcases, read in 0.7 s). A stack of the open suites follows the
 * nesting; a <testcase> counts when its parent is a <testsuite>, and its
 * direct children say whether it failed or was skipped. The suites'
 * count attributes are summed over the leaf suites (those
 * without nested suites), or taken from the root when no leaf has them,
 * and used only when no <testcase> was seen. The reader is made with
 * XML_PARSE_NONET and without XML_PARSE_NOENT, XML_PARSE_DTDLOAD or
 * XML_PARSE_HUGE: no DTD or external entity is loaded, entity references
 * stay references (and are refused), libxml2's default depth and size
 * limits hold. Its errors go to a handler of the reader's own, never to
 * stderr.
 *
 * No shared state of its own: thread-safe (libxml2 is initialised once).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

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
	long n, a, b, c;
	size_t len;
	int k;

	if (sc->block == B_MESON) {
		k = key_line(line, meson_keys, &n);
		if (k > 0) {
			sc->v[k] = n;
			meson_update(sc);
			return;
		}
		sc->block = B_NONE;
	} else if (sc->block == B_AUTOMAKE) {
		k = key_line(line, automake_keys, &n);
		if (k > 0) {
			sc->v[k] = n;
			automake_update(sc);
			return;
		}
		sc->block = B_NONE;
	} else if (sc->block == B_CTEST_SKIPS) {
		if (ctest_skip_line(line)) {
			if (sc->last.ran > 0)
				sc->last.ran--;
			sc->last.skipped++;
			return;
		}
		sc->block = B_NONE;
	}
	if (key_line(line, meson_keys, &n) == 0) {
		memset(sc->v, 0, sizeof(sc->v));
		sc->v[0] = n;
		sc->block = B_MESON;
		meson_update(sc);
		return;
	}
	if (key_line(line, automake_keys, &n) == 0) {
		memset(sc->v, 0, sizeof(sc->v));
		sc->v[0] = n;
		sc->block = B_AUTOMAKE;
		automake_update(sc);
		return;
	}
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

/* ---- JUnit XML ---- */

/* How deep suites may nest (libxml2 refuses documents deeper than 256
 * elements anyway without XML_PARSE_HUGE). */
#define SUITES_MAX 256

/* The count attributes of a suite; have: it has a tests attribute. */
struct attrs {
	long tests, failures, errors, skipped;
	int have;
};

struct suite {
	int depth;      /* the reader's depth of its element */
	int is_suites;  /* the root <testsuites>, which holds suites only */
	int has_suites; /* a suite is nested in it */
	struct attrs a;
};

struct junit {
	xmlTextReaderPtr r;
	const char *name;
	char *err;
	size_t errlen;
	int errored;            /* err holds the first error */
	struct suite suites[SUITES_MAX];
	int nsuites;            /* open suites */
	int case_depth;         /* the open testcase's depth; -1: none */
	int case_failed, case_skipped;
	long cases, failed, skipped;
	struct attrs leaves;    /* summed over the leaf suites */
	struct attrs root;
};

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_init(void)
{
	xmlInitParser();
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The reader's errors: the first one (warnings aside) goes to err. */
static void on_xml_error(void *arg, xmlErrorPtr e)
{
	struct junit *j = arg;
	char msg[256];
	size_t n;

	if (!e || e->level < XML_ERR_ERROR || j->errored)
		return;
	snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "not well-formed XML");
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (e->line > 0)
		set_err(j->err, j->errlen, "%s: line %d: %s", j->name, e->line, msg);
	else
		set_err(j->err, j->errlen, "%s: %s", j->name, msg);
	j->errored = 1;
}

/* The current element's attribute name as a count >= 0; -1 when it is
 * missing or not a plain decimal number. */
static long count_attr(xmlTextReaderPtr r, const char *name)
{
	xmlChar *v = xmlTextReaderGetAttribute(r, (const xmlChar *)name);
	const char *p;
	long n = -1;

	if (!v)
		return -1;
	p = (const char *)v;
	while (*p == ' ')
		p++;
	if (number(&p, &n)) {
		while (*p == ' ')
			p++;
		if (*p)
			n = -1;
	}
	xmlFree(v);
	return n;
}

static void read_attrs(xmlTextReaderPtr r, struct attrs *a)
{
	long v;

	memset(a, 0, sizeof(*a));
	v = count_attr(r, "tests");
	if (v < 0)
		return;
	a->tests = v;
	a->have = 1;
	a->failures = (v = count_attr(r, "failures")) > 0 ? v : 0;
	a->errors = (v = count_attr(r, "errors")) > 0 ? v : 0;
	a->skipped = (v = count_attr(r, "skipped")) > 0 ? v : 0;
}

static void add_attrs(struct attrs *sum, const struct attrs *a)
{
	if (!a->have)
		return;
	sum->tests += a->tests;
	sum->failures += a->failures;
	sum->errors += a->errors;
	sum->skipped += a->skipped;
	sum->have = 1;
}

static void case_end(struct junit *j)
{
	if (j->case_failed)
		j->failed++;
	else if (j->case_skipped)
		j->skipped++;
	j->case_depth = -1;
}

static void suite_end(struct junit *j)
{
	struct suite *s = &j->suites[--j->nsuites];

	if (!s->has_suites)
		add_attrs(&j->leaves, &s->a);
}

/* An element opens at depth. 0, or -EINVAL (err set). */
static int element(struct junit *j, int depth)
{
	const char *name = (const char *)xmlTextReaderConstLocalName(j->r);
	int empty = xmlTextReaderIsEmptyElement(j->r) == 1;
	const struct suite *top = j->nsuites > 0 ? &j->suites[j->nsuites - 1] : NULL;
	int in_suite = top && top->depth == depth - 1;
	struct suite *s;

	if (!name)
		return 0;
	if (depth == 0) {
		if (strcmp(name, "testsuites") != 0 && strcmp(name, "testsuite") != 0) {
			set_err(j->err, j->errlen,
				"%s: the root element is <%.64s>, not <testsuites> or <testsuite>",
				j->name, name);
			return -EINVAL;
		}
	} else if (j->case_depth >= 0) {
		if (depth == j->case_depth + 1) {
			if (strcmp(name, "failure") == 0 || strcmp(name, "error") == 0)
				j->case_failed = 1;
			else if (strcmp(name, "skipped") == 0)
				j->case_skipped = 1;
		}
		return 0;
	}
	if (depth == 0 || (in_suite && strcmp(name, "testsuite") == 0)) {
		if (j->nsuites == SUITES_MAX) {
			set_err(j->err, j->errlen, "%s: suites nest more than %d deep", j->name,
				SUITES_MAX);
			return -EINVAL;
		}
		if (j->nsuites > 0)
			j->suites[j->nsuites - 1].has_suites = 1;
		s = &j->suites[j->nsuites++];
		s->depth = depth;
		s->is_suites = strcmp(name, "testsuites") == 0;
		s->has_suites = 0;
		read_attrs(j->r, &s->a);
		if (depth == 0)
			j->root = s->a;
		if (empty)
			suite_end(j);
		return 0;
	}
	if (in_suite && !top->is_suites && strcmp(name, "testcase") == 0) {
		j->cases++;
		j->case_depth = depth;
		j->case_failed = j->case_skipped = 0;
		if (empty)
			case_end(j);
	}
	return 0;
}

static void end_element(struct junit *j, int depth)
{
	if (j->case_depth == depth)
		case_end(j);
	else if (j->nsuites > 0 && j->suites[j->nsuites - 1].depth == depth)
		suite_end(j);
}

/* Reads the document; fills j's counts. 0 or -EINVAL (err set). */
static int junit_read(struct junit *j)
{
	int rc, type, depth;

	while ((rc = xmlTextReaderRead(j->r)) == 1) {
		type = xmlTextReaderNodeType(j->r);
		depth = xmlTextReaderDepth(j->r);
		if (type == XML_READER_TYPE_ENTITY_REFERENCE) {
			set_err(j->err, j->errlen,
				"%s: line %d: refers to the entity &%.64s; (entities are not expanded)",
				j->name, xmlTextReaderGetParserLineNumber(j->r),
				(const char *)xmlTextReaderConstName(j->r));
			return -EINVAL;
		}
		if (type == XML_READER_TYPE_ELEMENT)
			rc = element(j, depth);
		else if (type == XML_READER_TYPE_END_ELEMENT)
			end_element(j, depth);
		if (rc < 0)
			return rc;
	}
	if (rc < 0) {
		if (!j->errored)
			set_err(j->err, j->errlen, "%s: not well-formed XML", j->name);
		return -EINVAL;
	}
	if (j->errored) /* an error the reader recovered from is still one */
		return -EINVAL;
	return 0;
}

/* The file a reader reads: at most TESTCOUNT_JUNIT_MAX bytes of fd. */
struct junit_io {
	int fd;
	size_t got;
	int over;  /* it holds more than the limit */
	int error; /* errno of a failed read */
};

static int io_read(void *arg, char *buf, int len)
{
	struct junit_io *io = arg;
	size_t left = (size_t)TESTCOUNT_JUNIT_MAX + 1 - io->got;
	ssize_t n;

	if (len <= 0)
		return 0;
	if ((size_t)len > left)
		len = (int)left;
	do
		n = read(io->fd, buf, (size_t)len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		io->error = errno;
		return -1;
	}
	io->got += (size_t)n;
	if (io->got > (size_t)TESTCOUNT_JUNIT_MAX) {
		io->over = 1;
		return -1;
	}
	return (int)n;
}

static int io_close(void *arg)
{
	return 0; /* the caller closes the file */
}

/* Counts what the reader r (NULL: it could not be made) reads into *out.
 * Frees r. */
static int junit_count(xmlTextReaderPtr r, const char *name, struct testcount *out, char *err,
		       size_t errlen)
{
	struct junit *j;
	const struct attrs *a;
	int rc;

	if (!r) {
		set_err(err, errlen, "%s: cannot make an XML reader", name);
		return -ENOMEM;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		xmlFreeTextReader(r);
		return -ENOMEM;
	}
	j->r = r;
	j->name = name;
	j->err = err;
	j->errlen = errlen;
	j->case_depth = -1;
	xmlTextReaderSetStructuredErrorHandler(r, on_xml_error, j);
	rc = junit_read(j);
	xmlFreeTextReader(r);
	if (rc == 0) {
		out->tool = TESTCOUNT_JUNIT;
		if (j->cases > 0) {
			out->ran = j->cases - j->skipped;
			out->failed = j->failed;
			out->skipped = j->skipped;
		} else if (j->leaves.have || j->root.have) {
			a = j->leaves.have ? &j->leaves : &j->root;
			out->skipped = a->skipped < a->tests ? a->skipped : a->tests;
			out->ran = a->tests - out->skipped;
			out->failed = a->failures + a->errors;
			if (out->failed > out->ran)
				out->failed = out->ran;
		}
	}
	free(j);
	return rc;
}

#define READER_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

int testcount_junit(const char *data, size_t len, const char *name, struct testcount *out,
		    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (!name)
		name = "junit.xml";
	if (len > (size_t)TESTCOUNT_JUNIT_MAX) {
		set_err(err, errlen, "%s: larger than %ld bytes", name, TESTCOUNT_JUNIT_MAX);
		return -EFBIG;
	}
	if (!data || len == 0) {
		set_err(err, errlen, "%s: empty", name);
		return -EINVAL;
	}
	pthread_once(&xml_once, xml_init);
	return junit_count(xmlReaderForMemory(data, (int)len, NULL, NULL, READER_OPTIONS), name,
			   out, err, errlen);
}

int testcount_junit_file(const char *path, struct testcount *out, char *err, size_t errlen)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct junit_io io = {.fd = -1};
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	io.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (io.fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			set_err(err, errlen, "%s: a symbolic link, not a file", name);
		else
			set_err(err, errlen, "%s: %s", name, strerror(-rc));
		return rc;
	}
	if (fstat(io.fd, &st) < 0) {
		rc = -errno;
		set_err(err, errlen, "%s: %s", name, strerror(-rc));
	} else if (!S_ISREG(st.st_mode)) {
		set_err(err, errlen, "%s: not a regular file", name);
		rc = -EINVAL;
	} else if (st.st_size > TESTCOUNT_JUNIT_MAX) {
		set_err(err, errlen, "%s: larger than %ld bytes", name, TESTCOUNT_JUNIT_MAX);
		rc = -EFBIG;
	} else if (st.st_size == 0) {
		set_err(err, errlen, "%s: empty", name);
		rc = -EINVAL;
	} else {
		pthread_once(&xml_once, xml_init);
		rc = junit_count(xmlReaderForIO(io_read, io_close, &io, NULL, NULL, READER_OPTIONS),
				 name, out, err, errlen);
		/* what the reader made of a failed read is not the reason */
		if (io.over) {
			memset(out, 0, sizeof(*out));
			set_err(err, errlen, "%s: larger than %ld bytes", name, TESTCOUNT_JUNIT_MAX);
			rc = -EFBIG;
		} else if (io.error) {
			memset(out, 0, sizeof(*out));
			set_err(err, errlen, "%s: %s", name, strerror(io.error));
			rc = -io.error;
		}
	}
	close(io.fd);
	return rc;
}
