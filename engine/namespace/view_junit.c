/*
 * view_junit.c - validation/junit.xml (SPEC §6): an item's evidence as
 * JUnit XML, for the CI systems that read test reports (Jenkins' junit
 * plugin, GitLab's unit test reports).
 *
 * Shape: the element and attribute names of Jenkins' junit-10.xsd, which
 * GitLab's reader takes too. The root <testsuites> holds one <testsuite>
 * named after the item, with its counts (tests, failures, errors, skipped),
 * its time (the sum of its testcases') and a timestamp (the earliest start
 * of the runs it shows, UTC, in the schema's form without a zone; the
 * item's creation when none ran), then <properties> naming the branch and
 * the head commit. One <testcase classname="packetfs.ITEM" name="RECIPE"
 * time="S"> per recipe the plan names, in the plan's order, for that
 * recipe's latest engine run at the branch head (registry.h: a run at
 * another commit counts as none, as in evidence.md):
 *   validated               passed: an empty testcase
 *   failing, timed_out      <failure message=... type=STATUS>, the log's tail
 *   blocked, or no run      <skipped message=.../>
 *   cancelled, interrupted  <error message=... type=STATUS>, the log's tail
 * External claims are left out: they never count as evidence. A plan with
 * a scope block adds the testcase "scope" last: passed, a failure naming
 * the kept paths the change touches, or an error for a malformed block.
 *
 * Measurements. When a measured recipe has a verdict at the head, a second
 * <testsuite name="measurements"> follows, read from measurements.md's
 * text (view_measure.c, the same numbers): one <testcase
 * classname="packetfs.ITEM.measurements" name="RECIPE: METRIC"> per row
 * of each recipe's table, whose <properties> are the row's cells (unit,
 * better, base_median, head_median, ratio, base_range, head_range, ci95,
 * budget, verdict) and the recipe's commits and verdict; a metric worse
 * beyond its budget carries <failure type="budget">, one whose side has
 * no runs <error type="incomplete">. A recipe that is failing or
 * incomplete with no such row (a budget's metric that no run reported)
 * gets the testcase "RECIPE" with that <failure> or <error>. The root's
 * counts are both suites' sums.
 *
 * Text. A log holds whatever its run printed; XML 1.0 allows only tab,
 * newline, carriage return and the characters from U+0020 on (less the
 * surrogates, U+FFFE and U+FFFF). Other control characters are removed,
 * bytes that are not well-formed UTF-8 become U+FFFD, and &, <, > and (in
 * attributes) " are written as references, so that any log, "]]>" in it
 * included, gives a well-formed document. The tail is the last
 * JUNIT_TAIL_LINES lines of the log within its last JUNIT_TAIL_BYTES.
 *
 * Reading: the registry through the item's kept digest (view_digest.c),
 * copied out under its lock; the logs after it is released.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namespace.h"

#define JUNIT_TAIL_LINES 50
#define JUNIT_TAIL_BYTES (32 * 1024)

/* The length of the well-formed UTF-8 sequence at s (at most n bytes) that
 * XML 1.0 allows as a character, or 0 for anything else. */
static size_t xml_char(const unsigned char *s, size_t n)
{
	uint32_t cp = 0;
	size_t len = util_utf8_char(s, n, &cp);

	if (len == 1)
		return cp >= 0x20 || cp == '\t' || cp == '\n' || cp == '\r' ? 1 : 0;
	return cp == 0xfffe || cp == 0xffff ? 0 : len;
}

/* Appends s[0..n) as XML character data, or as an attribute value (attr:
 * '"' escaped too, and line breaks and tabs as references so that they
 * survive attribute normalisation). Characters XML forbids are dropped;
 * bytes that are not UTF-8 become U+FFFD. 0 or -ENOMEM. */
static int xml_escape(struct buf *out, const char *s, size_t n, int attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len;
	int rc = 0;

	while (i < n && !rc) {
		unsigned char c = p[i];

		if (c >= 0x80) {
			len = xml_char(p + i, n - i);
			rc = len ? buf_append(out, p + i, len) : buf_puts(out, "\xef\xbf\xbd");
			i += len ? len : 1;
			continue;
		}
		i++;
		if (c == '&')
			rc = buf_puts(out, "&amp;");
		else if (c == '<')
			rc = buf_puts(out, "&lt;");
		else if (c == '>')
			rc = buf_puts(out, "&gt;");
		else if (attr && c == '"')
			rc = buf_puts(out, "&quot;");
		else if (attr && (c == '\n' || c == '\r' || c == '\t'))
			rc = buf_printf(out, "&#%u;", c);
		else if (c == '\r')
			rc = buf_puts(out, "&#13;"); /* a parser would turn a bare CR into LF */
		else if (xml_char(&c, 1))
			rc = buf_append(out, &c, 1);
	}
	return rc;
}

static int xml_attr(struct buf *out, const char *name, const char *value)
{
	int rc = buf_printf(out, " %s=\"", name);

	if (!rc)
		rc = xml_escape(out, value, strlen(value), 1);
	return rc ? rc : buf_puts(out, "\"");
}

/* Appends the last lines of the log at evidence (item-relative) of item to
 * out, escaped; a note in their place when the log cannot be read. */
static int log_tail(struct engine *e, int64_t item_id, const char *evidence, struct buf *out)
{
	struct run r;
	char *data;
	ssize_t got;
	size_t start = 0, lines = 0, i;
	uint64_t off;
	int rc;

	if (!evidence[0] || store_run_by_log(e->store, item_id, evidence, &r))
		return buf_puts(out, "(no log)\n");
	off = r.log_size > JUNIT_TAIL_BYTES ? (uint64_t)r.log_size - JUNIT_TAIL_BYTES : 0;
	data = malloc(JUNIT_TAIL_BYTES);
	if (!data) {
		run_clear(&r);
		return -ENOMEM;
	}
	got = store_log_read(e->store, r.id, off, data, JUNIT_TAIL_BYTES);
	run_clear(&r);
	if (got < 0) {
		free(data);
		return buf_printf(out, "(the log cannot be read: %s)\n", strerror((int)-got));
	}
	/* The start of the last JUNIT_TAIL_LINES lines (a last line without
	 * newline counts); a line cut by the byte window is left out. */
	for (i = (size_t)got; i > 0; i--) {
		if (data[i - 1] != '\n' || i == (size_t)got)
			continue;
		if (++lines == JUNIT_TAIL_LINES) {
			start = i;
			break;
		}
	}
	if (i == 0 && off > 0) {
		char *nl = memchr(data, '\n', (size_t)got);

		start = nl ? (size_t)(nl - data) + 1 : (size_t)got;
	}
	rc = xml_escape(out, data + start, (size_t)got - start, 0);
	free(data);
	return rc;
}

/* The message of a run's outcome: its status, then its note, or how it
 * ended. */
static void outcome(const struct view_case *k, char *msg, size_t size)
{
	if (k->note[0])
		snprintf(msg, size, "%s: %s", k->status, k->note);
	else if (k->signal)
		snprintf(msg, size, "%s: killed by signal %d", k->status, k->signal);
	else if (k->has_exit_code)
		snprintf(msg, size, "%s: exit code %d", k->status, k->exit_code);
	else
		snprintf(msg, size, "%s", k->status);
}

/* "2026-11-29T16:02:11Z" as the schema's timestamp "2026-11-29T16:02:11"
 * into out[20]; "" when s has another form. */
static void timestamp_of(const char *s, char out[20])
{
	out[0] = '\0';
	if (s && strlen(s) >= 19 && s[4] == '-' && s[10] == 'T' && s[13] == ':') {
		memcpy(out, s, 19);
		out[19] = '\0';
	}
}

/*
 * The testcase "scope" (SPEC §6 "Scope"), when the plan has a scope block:
 * got as view_scope_get answers (1 clean of kept paths, 2 a kept path
 * touched: a failure naming them, -1 a malformed block: an error), with
 * its summary and the kept paths.
 */
struct junit_scope {
	int got;
	const char *summary, *kept;
};

static int scope_case(struct buf *out, const char *classname, const struct junit_scope *sc)
{
	char msg[1024];
	int rc;

	rc = buf_puts(out, "    <testcase");
	rc = rc ? rc : xml_attr(out, "classname", classname);
	rc = rc ? rc : buf_puts(out, " name=\"scope\" time=\"0.000\"");
	if (rc || sc->got == 1)
		return rc ? rc : buf_puts(out, "/>\n");
	snprintf(msg, sizeof(msg), "%s%s%s", sc->summary, sc->got == 2 ? ": " : "",
		 sc->got == 2 ? sc->kept : "");
	rc = buf_printf(out, ">\n      <%s", sc->got == 2 ? "failure" : "error");
	rc = rc ? rc : xml_attr(out, "message", msg);
	rc = rc ? rc : buf_printf(out, " type=\"scope\">see validation/scope.md</%s>\n"
				  "    </testcase>\n", sc->got == 2 ? "failure" : "error");
	return rc;
}

/* The measurements suite being written: its testcases, and counts. */
struct junit_measure {
	struct buf cases;
	size_t tests, failures, errors;
	char recipe[256], verdict[16], why[512], base[16], head[16];
	int rows;    /* rows of the current recipe's table */
	int failed;  /* ... of which failed or errored */
};

static int prop(struct buf *out, const char *name, const char *value)
{
	int rc = buf_printf(out, "        <property name=\"%s\"", name);

	rc = rc ? rc : xml_attr(out, "value", value);
	return rc ? rc : buf_puts(out, "/>\n");
}

/* The testcase of a recipe whose verdict has no row to show it on. */
static int measure_recipe_case(struct junit_measure *jm, const char *classname)
{
	struct buf *out = &jm->cases;
	int err = strcmp(jm->verdict, "incomplete") == 0, rc;

	if (!jm->recipe[0] || jm->failed || strcmp(jm->verdict, "validated") == 0)
		return 0;
	jm->tests++;
	err ? jm->errors++ : jm->failures++;
	rc = buf_puts(out, "    <testcase");
	rc = rc ? rc : xml_attr(out, "classname", classname);
	rc = rc ? rc : xml_attr(out, "name", jm->recipe);
	rc = rc ? rc : buf_printf(out, " time=\"0.000\">\n      <%s", err ? "error" : "failure");
	rc = rc ? rc : xml_attr(out, "message", jm->why[0] ? jm->why : jm->verdict);
	return rc ? rc : buf_printf(out, " type=\"%s\">see validation/measurements.md</%s>\n"
				    "    </testcase>\n", err ? "incomplete" : "budget",
				    err ? "error" : "failure");
}

/* One line of measurements.md's text. */
static int measure_line(struct junit_measure *jm, const char *classname, const char *line,
			size_t len)
{
	struct measure_row row;
	struct buf *out = &jm->cases;
	char name[sizeof(jm->recipe) + MEASURE_NAME_MAX + 4], msg[512];
	const char *elem = NULL, *colon;
	int rc;

	if (len > 3 && memcmp(line, "## ", 3) == 0 && (colon = memchr(line, ':', len))) {
		rc = measure_recipe_case(jm, classname);
		snprintf(jm->recipe, sizeof(jm->recipe), "%.*s", (int)(colon - line - 3), line + 3);
		snprintf(jm->verdict, sizeof(jm->verdict), "%.*s",
			 (int)strcspn(colon + 2, " \n"), colon + 2);
		jm->why[0] = '\0';
		if (len > (size_t)(colon - line) + 2 + strlen(jm->verdict) + 3)
			snprintf(jm->why, sizeof(jm->why), "%.*s",
				 (int)(len - (size_t)(colon - line) - 2 - strlen(jm->verdict) - 3),
				 colon + 2 + strlen(jm->verdict) + 3);
		jm->base[0] = jm->head[0] = '\0';
		jm->rows = jm->failed = 0;
		return rc;
	}
	if (len > 6 && memcmp(line, "Base `", 6) == 0) {
		sscanf(line, "Base `%15[0-9a-f]` against head `%15[0-9a-f]`", jm->base, jm->head);
		return 0;
	}
	if (!jm->recipe[0] || measure_parse_row(line, len, &row))
		return 0; /* the table's head, its rule, and the text around it */
	jm->tests++;
	jm->rows++;
	if (strcmp(row.verdict, "worse beyond budget") == 0) {
		elem = "failure";
		jm->failures++;
		snprintf(msg, sizeof(msg), "%s: head/base %s, 95%% CI %s, beyond the %s budget",
			 row.metric, row.ratio, row.ci, row.budget);
	} else if (strcmp(row.verdict, "a side has no runs") == 0) {
		elem = "error";
		jm->errors++;
		snprintf(msg, sizeof(msg), "%s: a side has no runs", row.metric);
	}
	jm->failed += elem != NULL;
	snprintf(name, sizeof(name), "%s: %s", jm->recipe, row.metric);
	rc = buf_puts(out, "    <testcase");
	rc = rc ? rc : xml_attr(out, "classname", classname);
	rc = rc ? rc : xml_attr(out, "name", name);
	rc = rc ? rc : buf_puts(out, " time=\"0.000\">\n      <properties>\n");
	rc = rc ? rc : prop(out, "recipe_verdict", jm->verdict);
	rc = rc ? rc : prop(out, "base_commit", jm->base);
	rc = rc ? rc : prop(out, "head_commit", jm->head);
	rc = rc ? rc : prop(out, "unit", strcmp(row.unit, "-") ? row.unit : "");
	rc = rc ? rc : prop(out, "better", row.better);
	rc = rc ? rc : prop(out, "base_median", row.base_median);
	rc = rc ? rc : prop(out, "head_median", row.head_median);
	rc = rc ? rc : prop(out, "ratio", row.ratio);
	rc = rc ? rc : prop(out, "base_range", row.base_range);
	rc = rc ? rc : prop(out, "head_range", row.head_range);
	rc = rc ? rc : prop(out, "ci95", row.ci);
	rc = rc ? rc : prop(out, "budget", row.budget);
	rc = rc ? rc : prop(out, "verdict", row.verdict);
	rc = rc ? rc : buf_puts(out, "      </properties>\n");
	if (!rc && elem) {
		rc = buf_printf(out, "      <%s", elem);
		rc = rc ? rc : xml_attr(out, "message", msg);
		rc = rc ? rc : buf_printf(out, " type=\"%s\">see validation/measurements.md</%s>\n",
					  elem[0] == 'f' ? "budget" : "incomplete", elem);
	}
	return rc ? rc : buf_puts(out, "    </testcase>\n");
}

/* The measurements suite's testcases from measurements.md's text md. */
static int measure_cases(const char *md, const char *classname, struct junit_measure *jm)
{
	const char *line = md, *nl;
	int rc = 0;

	while (!rc && line && *line) {
		nl = strchr(line, '\n');
		rc = measure_line(jm, classname, line, nl ? (size_t)(nl - line) : strlen(line));
		line = nl ? nl + 1 : NULL;
	}
	return rc ? rc : measure_recipe_case(jm, classname);
}

static int render(struct engine *e, const struct item *it, const struct view_cases *c,
		  const struct junit_scope *sc, const struct junit_measure *jm, struct buf *out)
{
	size_t i, n = c->n + (sc->got != 0), failures = sc->got == 2, errors = sc->got < 0,
		  skipped = 0;
	char classname[ITEM_NAME_MAX + 16], msg[1024], stamp[20] = "", t[20];
	double total = 0;
	int rc;

	for (i = 0; i < c->n; i++) {
		const struct view_case *k = &c->v[i];

		if (!k->ran || strcmp(k->status, "blocked") == 0)
			skipped++;
		else if (strcmp(k->status, "failing") == 0 || strcmp(k->status, "timed_out") == 0)
			failures++;
		else if (strcmp(k->status, "validated") != 0)
			errors++;
		if (k->ran) {
			total += k->duration_s;
			timestamp_of(k->started_at, t);
			if (t[0] && (!stamp[0] || strcmp(t, stamp) < 0))
				memcpy(stamp, t, sizeof(stamp));
		}
	}
	if (!stamp[0])
		timestamp_of(it->created_at, stamp);
	snprintf(classname, sizeof(classname), "packetfs.%s", it->name);
	rc = buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	rc = rc ? rc : xml_attr(out, "name", it->name);
	rc = rc ? rc : buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
				  "skipped=\"%zu\" time=\"%.3f\">\n  <testsuite", n + jm->tests,
				  failures + jm->failures, errors + jm->errors, skipped, total);
	rc = rc ? rc : xml_attr(out, "name", it->name);
	rc = rc ? rc : buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
				  "skipped=\"%zu\" time=\"%.3f\"", n, failures, errors,
				  skipped, total);
	if (!rc && stamp[0])
		rc = buf_printf(out, " timestamp=\"%s\"", stamp);
	rc = rc ? rc : buf_puts(out, ">\n    <properties>\n      <property name=\"branch\"");
	rc = rc ? rc : xml_attr(out, "value", it->branch);
	rc = rc ? rc : buf_printf(out, "/>\n      <property name=\"head\" value=\"%s\"/>\n"
				  "    </properties>\n", c->head ? c->head : "");
	for (i = 0; !rc && i < c->n; i++) {
		const struct view_case *k = &c->v[i];
		const char *elem = NULL;

		rc = buf_puts(out, "    <testcase");
		rc = rc ? rc : xml_attr(out, "classname", classname);
		rc = rc ? rc : xml_attr(out, "name", k->name);
		rc = rc ? rc : buf_printf(out, " time=\"%.3f\"", k->ran ? k->duration_s : 0.0);
		if (rc)
			break;
		if (!k->ran || strcmp(k->status, "blocked") == 0) {
			if (k->ran)
				outcome(k, msg, sizeof(msg));
			else
				snprintf(msg, sizeof(msg), "missing: no engine run at %.12s",
					 c->head ? c->head : "(no head)");
			rc = buf_puts(out, ">\n      <skipped");
			rc = rc ? rc : xml_attr(out, "message", msg);
			rc = rc ? rc : buf_puts(out, "/>\n    </testcase>\n");
			continue;
		}
		if (strcmp(k->status, "validated") == 0) {
			rc = buf_puts(out, "/>\n");
			continue;
		}
		elem = strcmp(k->status, "failing") == 0 || strcmp(k->status, "timed_out") == 0
			       ? "failure" : "error";
		outcome(k, msg, sizeof(msg));
		rc = buf_printf(out, ">\n      <%s", elem);
		rc = rc ? rc : xml_attr(out, "message", msg);
		rc = rc ? rc : xml_attr(out, "type", k->status);
		rc = rc ? rc : buf_puts(out, ">log: ");
		rc = rc ? rc : xml_escape(out, k->evidence, strlen(k->evidence), 0);
		rc = rc ? rc : buf_puts(out, "\n");
		rc = rc ? rc : log_tail(e, it->id, k->evidence, out);
		rc = rc ? rc : buf_printf(out, "</%s>\n    </testcase>\n", elem);
	}
	if (!rc && sc->got)
		rc = scope_case(out, classname, sc);
	rc = rc ? rc : buf_puts(out, "  </testsuite>\n");
	if (!rc && jm->tests) {
		rc = buf_printf(out, "  <testsuite name=\"measurements\" tests=\"%zu\" "
				"failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"0.000\"",
				jm->tests, jm->failures, jm->errors);
		if (!rc && stamp[0])
			rc = buf_printf(out, " timestamp=\"%s\"", stamp);
		rc = rc ? rc : buf_puts(out, ">\n");
		rc = rc ? rc : buf_append(out, jm->cases.data, jm->cases.len);
		rc = rc ? rc : buf_puts(out, "  </testsuite>\n");
	}
	return rc ? rc : buf_puts(out, "</testsuites>\n");
}

int view_junit(struct engine *e, const struct item *it, struct buf *out)
{
	struct view_cases c = {0};
	char **names = NULL, head[41] = "", summary[400], classname[ITEM_NAME_MAX + 32];
	struct junit_scope sc = { 0, summary, "" };
	struct junit_measure jm;
	struct buf kept, md;
	int rc;

	if (view_head(e, it, head))
		head[0] = '\0';
	buf_init(&kept);
	sc.got = view_scope_get(e, it, head, summary, sizeof(summary), &kept);
	sc.kept = kept.data ? kept.data : "";
	rc = view_plan_names(e, it->id, &names);
	if (rc == 0) {
		c.names = names;
		c.head = head[0] ? head : NULL;
		rc = view_cases_read(e, it->id, &c);
	}
	buf_init(&md);
	memset(&jm, 0, sizeof(jm));
	buf_init(&jm.cases);
	if (rc == 0 && c.head) {
		snprintf(classname, sizeof(classname), "packetfs.%s.measurements", it->name);
		rc = view_measurements(e, it, &md);
		if (rc == 0 && md.data)
			rc = measure_cases(md.data, classname, &jm);
	}
	if (rc == 0)
		rc = render(e, it, &c, &sc, &jm, out);
	buf_free(&jm.cases);
	buf_free(&md);
	buf_free(&kept);
	view_cases_free(&c);
	strv_free(names);
	return rc;
}
