/*
 * test-registry.c - registry lines, verdict, review gate and evidence.md
 * (engine/format/registry.c). External lines are checked for every way a line can
 * be wrong; the derived views are checked for external claims never
 * counting, the latest engine run winning, and evidence at an older head
 * failing the gate. The registry schema is checked against the validator.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schema.h"
#include "measure.h"
#include "registry.h"
#include "test.h"
#include "util.h"

#define HEAD "0123456789abcdef0123456789abcdef01234567"
#define OLD_HEAD "fedcba9876543210fedcba9876543210fedcba98"

static void expect_invalid(const char *line, const char *want)
{
	char err[256], *out = (char *)"untouched";

	memset(err, 'x', sizeof(err));
	if (registry_check_external(line, strlen(line), &out, err, sizeof(err)) != -EINVAL)
		FAIL_AT("accepted: %s", line);
	ASSERT_STREQ(out, "untouched");
	ASSERT(err[0] != '\0');
	ASSERT_CONTAINS(err, want);
}

static char *expect_valid(const char *line)
{
	char err[256] = "", *out = NULL;
	int rc = registry_check_external(line, strlen(line), &out, err, sizeof(err));

	if (rc)
		FAIL_AT("refused (%d, %s): %s", rc, err, line);
	ASSERT(out != NULL);
	ASSERT(strchr(out, '\n') == NULL);
	return out;
}

TEST(external_invalid)
{
	expect_invalid("", "empty line");
	expect_invalid("   ", "empty line");
	expect_invalid("not json", "not valid JSON");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\"", "not valid JSON");
	expect_invalid("{'recipe': '01-a'}", "not valid JSON");
	expect_invalid("[{\"recipe\": \"01-a\", \"status\": \"validated\"}]", "JSON object");
	expect_invalid("\"validated\"", "JSON object");
	expect_invalid("42", "JSON object");
	expect_invalid("null", "JSON object");
	expect_invalid("{\"status\": \"validated\"}", "recipe: required");
	expect_invalid("{\"recipe\": \"01-a\"}", "status: required");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"passed\"}", "status: must be one of");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"VALIDATED\"}",
		       "status: must be one of");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": 0}", "status: must be one of");
	expect_invalid("{\"recipe\": 1, \"status\": \"validated\"}", "recipe: must be a non-empty");
	expect_invalid("{\"recipe\": \"\", \"status\": \"validated\"}",
		       "recipe: must be a non-empty");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"run\": \"7\"}",
		       "run: must be an integer");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"run\": 1.5}",
		       "run: must be an integer");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"run\": -1}",
		       "run: must be an integer");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"exit_code\": \"0\"}",
		       "exit_code: must be an integer or null");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"duration_s\": -2}",
		       "duration_s: must be a number");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"duration_s\": 1e999}",
		       "duration_s: must be a number");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"gpus\": 0}",
		       "gpus: must be an array");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"gpus\": [0, -1]}",
		       "gpus: must be an array");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"gpus\": [\"0\"]}",
		       "gpus: must be an array");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"command\": [\"make\"]}",
		       "command: must be a string");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"note\": null}",
		       "note: must be a string");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"source\": \"ci\"}",
		       "source: must be");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\", \"verified\": true}",
		       "verified: unknown key");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"failing\", \"status\": \"validated\"}",
		       "status: duplicate key");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\"}"
		       "{\"recipe\": \"01-b\", \"status\": \"validated\"}", "unexpected data");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\"} x", "unexpected data");
	expect_invalid("{\"recipe\": \"01-a\", \"status\": \"validated\"},", "unexpected data");
	expect_invalid("{\"recipe\": \"01-a\",\n\"status\": \"validated\"}", "one line");
}

TEST(external_nul_inside)
{
	static const char line[] = "{\"recipe\": \"01-a\", \"status\": \"validated\"}\0{}";
	char err[128], *out = NULL;

	ASSERT_EQ(registry_check_external(line, sizeof(line) - 1, &out, err, sizeof(err)), -EINVAL);
	ASSERT(out == NULL);
	ASSERT_EQ(registry_check_external(line, strlen(line), &out, err, sizeof(err)), 0);
	ASSERT(out != NULL);
	free(out);
	ASSERT_EQ(registry_check_external("x", 1, &out, NULL, 0), -EINVAL);
}

/* A line of REGISTRY_LINE_MAX bytes is judged; a longer one is refused
 * whatever it holds. */
TEST(external_too_long)
{
	struct buf b = { 0 };
	char err[128], *out = NULL;

	ASSERT_EQ(buf_puts(&b, "{\"recipe\": \"01-a\", \"status\": \"failing\", \"note\": \""), 0);
	while (b.len < REGISTRY_LINE_MAX - 2)
		ASSERT_EQ(buf_puts(&b, "x"), 0);
	ASSERT_EQ(buf_puts(&b, "\"}"), 0);
	ASSERT_EQ(b.len, REGISTRY_LINE_MAX);
	ASSERT_EQ(registry_check_external(b.data, b.len, &out, err, sizeof(err)), 0);
	free(out);
	out = NULL;
	ASSERT_EQ(buf_puts(&b, " "), 0);
	ASSERT_EQ(registry_check_external(b.data, b.len, &out, err, sizeof(err)), -EFBIG);
	ASSERT(out == NULL);
	ASSERT_CONTAINS(err, "line too long (65537 bytes, at most 65536)");
	buf_free(&b);
}

TEST(external_valid)
{
	char *out;
	cJSON *obj;

	out = expect_valid("{\"recipe\": \"03-unit-tests\", \"status\": \"validated\"}");
	ASSERT_STREQ(out, "{\"recipe\":\"03-unit-tests\",\"status\":\"validated\","
		     "\"source\":\"external\"}");
	free(out);

	out = expect_valid("  {\"recipe\":\"03-unit-tests\",\"status\":\"validated\","
			   "\"source\":\"engine\",\"run\":3}\r");
	ASSERT_STREQ(out, "{\"recipe\":\"03-unit-tests\",\"status\":\"validated\","
		     "\"source\":\"external\",\"run\":3}");
	ASSERT(strstr(out, "engine") == NULL);
	free(out);

	out = expect_valid("{\"run\": 9, \"recipe\": \"01-build\", \"status\": \"failing\","
			   " \"command\": \"make -j8\", \"evidence\": \"https://ci.example/9\","
			   " \"note\": \"from CI\", \"exit_code\": null, \"started_at\":"
			   " \"2026-11-29T16:02:11Z\", \"finished_at\": \"2026-11-29T16:03:11Z\","
			   " \"duration_s\": 60.5, \"iteration\": 2, \"head\": \"" HEAD "\","
			   " \"gpus\": [0, 3], \"log_sha256\": \"ab\", \"source\": \"external\","
			   " \"executor\": \"ci\"}");
	obj = cJSON_Parse(out);
	ASSERT(obj != NULL);
	ASSERT_EQ(cJSON_GetArraySize(obj), 16);
	ASSERT(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(obj, "exit_code")));
	ASSERT_STREQ(cJSON_GetObjectItemCaseSensitive(obj, "source")->valuestring, "external");
	ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(obj, "duration_s")->valuedouble * 10, 605);
	ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(obj, "gpus")), 2);
	cJSON_Delete(obj);
	free(out);

	out = expect_valid("{\"recipe\": \"01-a\", \"status\": \"timed_out\", \"exit_code\": -9}");
	free(out);
	out = expect_valid("{\"recipe\": \"01-a\", \"status\": \"interrupted\"}");
	free(out);
}

static const int two_gpus[] = { 0, 1 };

static struct registry_run sample_run(void)
{
	struct registry_run r = {
		.run = 7,
		.recipe = "03-unit-tests",
		.status = "validated",
		.command = "make check",
		.evidence = "validation/logs/2026-11-29T16-02-11Z-03-unit-tests-7.log",
		.note = "",
		.has_exit_code = 1,
		.exit_code = 0,
		.started_at = "2026-11-29T16:02:11Z",
		.finished_at = "2026-11-29T16:02:23Z",
		.duration_s = 12.4,
		.iteration = 1,
		.head = HEAD,
		.gpus = two_gpus,
		.ngpus = 2,
		.log_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		.executor = "local",
	};
	return r;
}

TEST(engine_line)
{
	struct registry_run r = sample_run();
	char *line, *ext, err[128];

	line = registry_engine_line(&r);
	ASSERT_STREQ(line, "{\"run\":7,\"recipe\":\"03-unit-tests\",\"status\":\"validated\","
		     "\"command\":\"make check\",\"evidence\":"
		     "\"validation/logs/2026-11-29T16-02-11Z-03-unit-tests-7.log\",\"note\":\"\","
		     "\"exit_code\":0,\"started_at\":\"2026-11-29T16:02:11Z\","
		     "\"finished_at\":\"2026-11-29T16:02:23Z\",\"duration_s\":12.4,\"iteration\":1,"
		     "\"head\":\"" HEAD "\",\"gpus\":[0,1],\"log_sha256\":"
		     "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\","
		     "\"source\":\"engine\",\"executor\":\"local\"}");
	/* Every engine line is also a valid line for the schema. */
	ASSERT_EQ(registry_check_external(line, strlen(line), &ext, err, sizeof(err)), 0);
	ASSERT_CONTAINS(ext, "\"source\":\"external\"");
	ASSERT(!strstr(line, "\"signal\"")); /* only when a signal ended the run */
	free(ext);
	free(line);

	r.has_exit_code = 0;
	r.signal = 15;
	r.status = "cancelled";
	r.note = "cancelled by \"ctl\"\n";
	r.command = NULL;
	r.gpus = NULL;
	r.ngpus = 0;
	r.duration_s = 0.1 + 0.2;
	line = registry_engine_line(&r);
	ASSERT_CONTAINS(line, "\"exit_code\":null,\"signal\":15,");
	ASSERT_CONTAINS(line, "\"status\":\"cancelled\"");
	ASSERT_CONTAINS(line, "\"note\":\"cancelled by \\\"ctl\\\"\\n\"");
	ASSERT_CONTAINS(line, "\"command\":\"\"");
	ASSERT_CONTAINS(line, "\"gpus\":[]");
	ASSERT_CONTAINS(line, "\"duration_s\":0.3,");
	ASSERT(strchr(line, '\n') == NULL);
	ASSERT_EQ(registry_check_external(line, strlen(line), &ext, err, sizeof(err)), 0);
	free(ext);
	free(line);
}

/* A measured run's line: its side and metrics last; a line from outside
 * may carry neither. */
TEST(engine_line_measured)
{
	struct registry_run r = sample_run();
	struct measure_values v = {0};
	char *line, err[128], *metrics;
	static const char out[] = "METRIC wall_s 1.25 s\nMETRIC rps 800 req/s higher\n";

	ASSERT_EQ(measure_parse_lines(out, strlen(out), &v, err, sizeof(err)), 0);
	metrics = measure_values_json(&v);
	ASSERT_STREQ(metrics, "{\"wall_s\":{\"value\":1.25,\"unit\":\"s\",\"better\":\"lower\"},"
		     "\"rps\":{\"value\":800,\"unit\":\"req/s\",\"better\":\"higher\"}}");
	r.side = "base";
	r.metrics_json = metrics;
	line = registry_engine_line(&r);
	ASSERT_CONTAINS(line, "\"executor\":\"local\",\"side\":\"base\",\"metrics\":{\"wall_s\":"
			"{\"value\":1.25,\"unit\":\"s\",\"better\":\"lower\"},\"rps\":{\"value\":800,");
	expect_invalid(line, "side: only the engine writes it, on lines of measured runs");
	free(line);
	r.side = NULL;
	line = registry_engine_line(&r);
	ASSERT(strstr(line, "\"side\"") == NULL);
	expect_invalid(line, "metrics: only the engine writes it, on lines of measured runs");
	free(line);
	r.metrics_json = NULL;
	line = registry_engine_line(&r);
	ASSERT(strstr(line, "\"metrics\"") == NULL);
	free(line);
	free(metrics);
	measure_values_clear(&v);
}

/* An engine line for recipe with status at head (owned by a static pool). */
static char *eng(const char *recipe, const char *status, const char *head)
{
	static char pool[32][512];
	static int next;
	char *p = pool[next++ % 32];

	snprintf(p, 512, "{\"run\":%d,\"recipe\":\"%s\",\"status\":\"%s\",\"command\":\"./%s\","
		 "\"evidence\":\"validation/logs/T-%s-%d.log\",\"note\":\"\",\"head\":\"%s\","
		 "\"source\":\"engine\"}", next, recipe, status, recipe, recipe, next, head);
	return p;
}

static char *ext(const char *recipe, const char *status, const char *head)
{
	static char pool[8][512];
	static int next;
	char *p = pool[next++ % 8];

	snprintf(p, 512, "{\"recipe\":\"%s\",\"status\":\"%s\",\"head\":\"%s\","
		 "\"source\":\"external\"}", recipe, status, head);
	return p;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* registry_gate of the n lines for names at head returns rc, and want as
 * its reason (NULL: not looked at). */
static void expect_gate(char *const *names, char *const *lines, size_t n, const char *head,
			int rc, const char *want)
{
	char reason[128];

	memset(reason, 'x', sizeof(reason));
	ASSERT_EQ(registry_gate(names, lines, n, head, reason, sizeof(reason)), rc);
	if (want)
		ASSERT_STREQ(reason, want);
}

TEST(verdict)
{
	char *names[] = { "01-build", "02-lint", NULL };
	char *none[] = { NULL };
	char *pass[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD) };
	char *missing[] = { eng("01-build", "validated", HEAD) };
	char *failing[] = { eng("01-build", "validated", HEAD), eng("02-lint", "failing", HEAD) };
	char *timed[] = { eng("01-build", "timed_out", HEAD), eng("02-lint", "validated", HEAD) };
	char *blocked[] = { eng("01-build", "blocked", HEAD), eng("02-lint", "validated", HEAD) };
	char *fail_wins[] = { eng("01-build", "blocked", HEAD), eng("02-lint", "failing", HEAD) };
	char *fixed[] = { eng("01-build", "failing", HEAD), eng("02-lint", "validated", HEAD),
			  eng("01-build", "validated", HEAD) };
	char *regressed[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			      eng("01-build", "failing", HEAD) };
	char *cancelled[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			      eng("02-lint", "cancelled", HEAD) };
	char *only_ext[] = { ext("01-build", "validated", HEAD),
			     ext("02-lint", "validated", HEAD) };
	char *ext_fail[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			     ext("02-lint", "failing", HEAD) };
	char *junk[] = { "not json", eng("01-build", "validated", HEAD), "[]",
			 eng("02-lint", "validated", HEAD), "{\"recipe\":\"02-lint\"}" };
	char *newline[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD) };
	char nl[600];

	ASSERT_STREQ(registry_verdict(names, pass, N(pass), NULL), "pass");
	ASSERT_STREQ(registry_verdict(names, missing, N(missing), NULL), "blocked");
	ASSERT_STREQ(registry_verdict(names, NULL, 0, NULL), "blocked");
	ASSERT_STREQ(registry_verdict(names, failing, N(failing), NULL), "fail");
	ASSERT_STREQ(registry_verdict(names, timed, N(timed), NULL), "fail");
	ASSERT_STREQ(registry_verdict(names, blocked, N(blocked), NULL), "blocked");
	ASSERT_STREQ(registry_verdict(names, fail_wins, N(fail_wins), NULL), "fail");
	ASSERT_STREQ(registry_verdict(names, fixed, N(fixed), NULL), "pass");
	ASSERT_STREQ(registry_verdict(names, regressed, N(regressed), NULL), "fail");
	ASSERT_STREQ(registry_verdict(names, cancelled, N(cancelled), NULL), "blocked");
	ASSERT_STREQ(registry_verdict(names, only_ext, N(only_ext), NULL), "blocked");
	ASSERT_STREQ(registry_verdict(names, ext_fail, N(ext_fail), NULL), "pass");
	ASSERT_STREQ(registry_verdict(names, junk, N(junk), NULL), "pass");
	ASSERT_STREQ(registry_verdict(none, pass, N(pass), NULL), "blocked");
	ASSERT_STREQ(registry_verdict(NULL, pass, N(pass), NULL), "blocked");

	snprintf(nl, sizeof(nl), "%s\n", newline[1]);
	newline[1] = nl;
	ASSERT_STREQ(registry_verdict(names, newline, N(newline), NULL), "pass");
}

TEST(verdict_external_claiming_engine)
{
	char *names[] = { "01-build", NULL };
	char *claimed = NULL, err[64];
	const char *forged = "{\"recipe\":\"01-build\",\"status\":\"validated\",\"head\":\"" HEAD
			     "\",\"source\":\"engine\"}";
	char *lines[1];

	ASSERT_EQ(registry_check_external(forged, strlen(forged), &claimed, err, sizeof(err)), 0);
	lines[0] = claimed;
	ASSERT_STREQ(registry_verdict(names, lines, 1, NULL), "blocked");
	ASSERT_EQ(registry_gate(names, lines, 1, HEAD, err, sizeof(err)), -EAGAIN);
	free(claimed);
}

TEST(gate)
{
	char *names[] = { "01-build", "03-unit-tests", NULL };
	char *one[] = { "03-unit-tests", NULL };
	char *none[] = { NULL };
	char *at_head[] = { eng("01-build", "validated", HEAD),
			    eng("03-unit-tests", "validated", HEAD) };
	char *older[] = { eng("01-build", "validated", HEAD),
			  eng("03-unit-tests", "validated", OLD_HEAD) };
	char *ext_only[] = { eng("01-build", "validated", HEAD),
			     ext("03-unit-tests", "validated", HEAD) };
	char *failing[] = { eng("01-build", "validated", HEAD),
			    eng("03-unit-tests", "failing", HEAD) };
	char *both_old[] = { eng("01-build", "validated", OLD_HEAD),
			     eng("03-unit-tests", "validated", OLD_HEAD) };

	expect_gate(names, at_head, N(at_head), HEAD, 0, "");

	expect_gate(names, older, N(older), HEAD, -EAGAIN,
		    "03-unit-tests: no validated run at 0123456789ab");
	expect_gate(names, older, N(older), OLD_HEAD, -EAGAIN,
		    "01-build: no validated run at fedcba987654");
	expect_gate(one, older, N(older), OLD_HEAD, 0, NULL);

	expect_gate(names, ext_only, N(ext_only), HEAD, -EAGAIN,
		    "03-unit-tests: no validated run at 0123456789ab");
	expect_gate(names, failing, N(failing), HEAD, -EAGAIN, NULL);
	expect_gate(names, NULL, 0, HEAD, -EAGAIN,
		    "01-build: no validated run at 0123456789ab (and 1 more)");
	expect_gate(names, both_old, N(both_old), HEAD, -EAGAIN,
		    "01-build: no validated run at 0123456789ab (and 1 more)");
	expect_gate(names, at_head, N(at_head), NULL, -EAGAIN, NULL);
	ASSERT_EQ(registry_gate(none, at_head, N(at_head), HEAD, NULL, 0), 0);
	ASSERT_EQ(registry_gate(names, older, N(older), HEAD, NULL, 0), -EAGAIN);
}

TEST(evidence_md)
{
	char *names[] = { "01-build", "02-lint", "03-unit-tests", NULL };
	char *lines[] = {
		"{\"run\":1,\"recipe\":\"01-build\",\"status\":\"failing\",\"command\":\"make\","
		"\"evidence\":\"validation/logs/T1-01-build-1.log\",\"note\":\"\",\"head\":\"h\","
		"\"source\":\"engine\"}",
		"{\"run\":2,\"recipe\":\"01-build\",\"status\":\"validated\",\"command\":\"make\","
		"\"evidence\":\"validation/logs/T2-01-build-2.log\",\"note\":\"\",\"head\":\"h\","
		"\"source\":\"engine\"}",
		"{\"run\":3,\"recipe\":\"02-lint\",\"status\":\"failing\","
		"\"command\":\"lint | tee x\",\"evidence\":\"validation/logs/T3-02-lint-3.log\","
		"\"note\":\"2 warnings\\nsee log\","
		"\"head\":\"h\",\"source\":\"engine\"}",
		"{\"recipe\":\"03-unit-tests\",\"status\":\"validated\",\"command\":\"ctest\","
		"\"evidence\":\"https://ci.example/run/5\",\"note\":\"trust me\","
		"\"source\":\"external\"}",
		"{\"run\":12,\"recipe\":\"09-other\",\"status\":\"failing\","
		"\"source\":\"external\"}",
	};
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(registry_evidence_md("fix-login", names, lines, N(lines), NULL, &b), 0);
	ASSERT_STREQ(b.data,
		"# Evidence for fix-login [1/3 validated]\n"
		"\n"
		"| Recipe | Status | Command | Evidence | Note |\n"
		"|---|---|---|---|---|\n"
		"| 01-build | validated | make | [validation/logs/T2-01-build-2.log]"
		"(logs/T2-01-build-2.log) |  |\n"
		"| 02-lint | failing | lint \\| tee x | [validation/logs/T3-02-lint-3.log]"
		"(logs/T3-02-lint-3.log) | 2 warnings see log |\n"
		"| 03-unit-tests | missing | | | |\n"
		"\n"
		"## External claims (not counted)\n"
		"\n"
		"| Run | Recipe | Status | Command | Evidence | Note |\n"
		"|---|---|---|---|---|---|\n"
		"|  | 03-unit-tests | validated | ctest | [https://ci.example/run/5]"
		"(https://ci.example/run/5) | trust me |\n"
		"| 12 | 09-other | failing |  |  |  |\n"
		"\n"
		"Generated from validation/registry.jsonl — do not edit by hand.\n");
	buf_free(&b);
}

/* A digest fed one line at a time renders, after every line, what a digest
 * of the lines so far renders, and its count of validated recipes agrees
 * with the verdict, which reads the lines themselves. */
TEST(digest_incremental)
{
	char *names[] = { "01-build", "02-lint", "03-unit-tests", NULL };
	char *lines[] = {
		eng("01-build", "validated", OLD_HEAD),
		ext("03-unit-tests", "validated", HEAD),
		"not json",
		"[1,2]",
		eng("02-lint", "validated", HEAD),
		eng("01-build", "validated", HEAD),
		eng("09-not-planned", "failing", HEAD),
		ext("02-lint", "failing", HEAD),
		eng("03-unit-tests", "validated", HEAD),
		eng("02-lint", "failing", HEAD),
		eng("02-lint", "validated", HEAD),
	};
	struct registry_digest *d = registry_digest_new();
	char sum[64], want_sum[64], *prefix[N(lines) + 1];
	struct buf got, want;
	size_t i, j;

	ASSERT(d != NULL);
	for (i = 0; i < N(lines); i++) {
		ASSERT_EQ(registry_digest_add(d, lines[i], strlen(lines[i])), 0);
		for (j = 0; j <= i; j++)
			prefix[j] = lines[j];
		prefix[i + 1] = NULL;
		buf_init(&got);
		buf_init(&want);
		ASSERT_EQ(registry_digest_evidence_md(d, "item", names, HEAD, &got), 0);
		ASSERT_EQ(registry_evidence_md("item", names, prefix, i + 1, HEAD, &want), 0);
		ASSERT_STREQ(got.data, want.data);
		registry_digest_summary(d, names, HEAD, sum);
		registry_evidence_summary(names, prefix, i + 1, HEAD, want_sum);
		ASSERT_STREQ(sum, want_sum);
		ASSERT_EQ(strcmp(sum, "3/3 validated") == 0,
			  strcmp(registry_verdict(names, prefix, i + 1, HEAD), "pass") == 0);
		buf_free(&got);
		buf_free(&want);
	}
	/* the last 02-lint line wins over the failing one before it; the
	 * external failing claim does not count */
	ASSERT_STREQ(sum, "3/3 validated");
	ASSERT(registry_digest_bytes(d) > 0);
	/* without a head every run counts, stale or not */
	registry_digest_free(d);
	d = registry_digest_new();
	ASSERT(d != NULL);
	ASSERT_EQ(registry_digest_add(d, lines[0], strlen(lines[0])), 0);
	registry_digest_summary(d, names, NULL, sum);
	ASSERT_STREQ(sum, "1/3 validated");
	registry_digest_summary(d, names, HEAD, sum);
	ASSERT_STREQ(sum, "0/3 validated");
	/* a recipe run again and again is held once */
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(registry_digest_add(d, lines[5], strlen(lines[5])), 0);
	ASSERT(registry_digest_bytes(d) < 100 * strlen(lines[5]));
	registry_digest_free(d);
	registry_digest_free(NULL);
}

TEST(evidence_md_plain)
{
	char *names[] = { "01-build", NULL };
	char *none[] = { NULL };
	char *lines[] = { eng("01-build", "validated", HEAD) };
	const char *head = "prefix\n# Evidence for item [1/1 validated]\n\n| Recipe |";
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(buf_puts(&b, "prefix\n"), 0);
	ASSERT_EQ(registry_evidence_md("item", names, lines, N(lines), NULL, &b), 0);
	ASSERT(strncmp(b.data, head, strlen(head)) == 0);
	ASSERT(strstr(b.data, "External claims") == NULL);
	ASSERT_CONTAINS(b.data, "| 01-build | validated | ./01-build | ");
	ASSERT_CONTAINS(b.data, "|\n\nGenerated from validation/registry.jsonl — do not edit by "
			"hand.\n");
	buf_free(&b);

	ASSERT_EQ(registry_evidence_md("empty", none, NULL, 0, NULL, &b), 0);
	ASSERT_STREQ(b.data, "# Evidence for empty [0/0 validated]\n\n"
		     "| Recipe | Status | Command | Evidence | Note |\n|---|---|---|---|---|\n"
		     "\nGenerated from validation/registry.jsonl — do not edit by hand.\n");
	buf_free(&b);
}

TEST(evidence_summary)
{
	char *names[] = { "01-build", "02-lint", "03-unit-tests", NULL };
	char *lines[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			  eng("02-lint", "failing", HEAD), ext("03-unit-tests", "validated", HEAD),
			  eng("04-extra", "validated", HEAD) };
	char out[64];

	registry_evidence_summary(names, lines, N(lines), NULL, out);
	ASSERT_STREQ(out, "1/3 validated");
	registry_evidence_summary(names, NULL, 0, NULL, out);
	ASSERT_STREQ(out, "0/3 validated");
	registry_evidence_summary(NULL, lines, N(lines), NULL, out);
	ASSERT_STREQ(out, "0/0 validated");
}

/* Only the latest engine run counts for the gate: validated once at the
 * head and failing since is refused, and a stale latest run is too. */
TEST(gate_latest)
{
	char *names[] = { "01-build", "02-lint", NULL };
	char *regressed[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			      eng("01-build", "failing", HEAD) };
	char *fixed[] = { eng("01-build", "failing", HEAD), eng("02-lint", "validated", HEAD),
			  eng("01-build", "validated", HEAD) };
	char *went_back[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			      eng("02-lint", "validated", OLD_HEAD) };
	char *cancelled[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD),
			      eng("02-lint", "cancelled", HEAD), eng("01-build", "timed_out", HEAD) };

	expect_gate(names, regressed, N(regressed), HEAD, -EAGAIN,
		    "01-build: latest run at 0123456789ab is failing");
	expect_gate(names, fixed, N(fixed), HEAD, 0, NULL);
	expect_gate(names, went_back, N(went_back), HEAD, -EAGAIN,
		    "02-lint: no validated run at 0123456789ab");
	expect_gate(names, cancelled, N(cancelled), HEAD, -EAGAIN,
		    "01-build: latest run at 0123456789ab is timed_out (and 1 more)");
}

/*
 * Many names over many lines: each name's latest engine line is found by
 * bisection of an index, not by a walk over every line (100,000 names
 * over as many lines took 5.7 s for the verdict and 8.7 s for the gate).
 * Each recipe failed, then validated, then got an external claim: the
 * latest engine line counts, the claim never does.
 */
TEST(many)
{
	enum { NAMES = 20000 };
	char **names = calloc(NAMES + 1, sizeof(char *)), **lines = calloc(3 * NAMES, sizeof(char *));
	char name[32], reason[128];
	size_t i, n = 0;

	ASSERT(names && lines);
	for (i = 0; i < NAMES; i++) {
		snprintf(name, sizeof(name), "%02zu-r%zu", i % 100, i);
		ASSERT((names[i] = strdup(name)) != NULL);
	}
	for (i = 0; i < NAMES; i++)
		ASSERT((lines[n++] = strdup(eng(names[i], "failing", HEAD))) != NULL);
	for (i = 0; i < NAMES; i++)
		ASSERT((lines[n++] = strdup(eng(names[NAMES - 1 - i], "validated", HEAD))) != NULL);
	for (i = 0; i < NAMES; i++)
		ASSERT((lines[n++] = strdup(ext(names[i], "failing", HEAD))) != NULL);
	ASSERT_STREQ(registry_verdict(names, lines, n, HEAD), "pass");
	ASSERT_EQ(registry_gate(names, lines, n, HEAD, reason, sizeof(reason)), 0);
	/* The first recipe fails again, last. */
	free(lines[n - 1]);
	ASSERT((lines[n - 1] = strdup(eng(names[0], "failing", HEAD))) != NULL);
	ASSERT_STREQ(registry_verdict(names, lines, n, HEAD), "fail");
	ASSERT_EQ(registry_gate(names, lines, n, HEAD, reason, sizeof(reason)), -EAGAIN);
	ASSERT_STREQ(reason, "00-r0: latest run at 0123456789ab is failing");
	for (i = 0; i < n; i++)
		free(lines[i]);
	strv_free(names);
	free(lines);
}

/* Given the current head, runs recorded at another commit are stale: they
 * count neither as validated nor as failing, and evidence.md says so. */
TEST(stale)
{
	char *names[] = { "01-build", "02-lint", NULL };
	char *cur[] = { eng("01-build", "validated", HEAD), eng("02-lint", "validated", HEAD) };
	char *old[] = { eng("01-build", "validated", OLD_HEAD), eng("02-lint", "validated", HEAD) };
	char *old_fail[] = { eng("01-build", "failing", OLD_HEAD),
			     eng("02-lint", "validated", HEAD) };
	char *all_old[] = { eng("01-build", "validated", OLD_HEAD),
			    eng("02-lint", "validated", OLD_HEAD) };
	char *revalidated[] = { eng("01-build", "validated", OLD_HEAD),
				eng("02-lint", "failing", OLD_HEAD),
				eng("01-build", "validated", HEAD),
				eng("02-lint", "validated", HEAD) };
	char *ext_claim[] = { eng("01-build", "validated", OLD_HEAD),
			      eng("02-lint", "validated", HEAD),
			      ext("01-build", "validated", HEAD) };
	char out[64], want[256];
	struct buf b;

	ASSERT_STREQ(registry_verdict(names, cur, N(cur), HEAD), "pass");
	ASSERT_STREQ(registry_verdict(names, old, N(old), HEAD), "blocked");
	ASSERT_STREQ(registry_verdict(names, old, N(old), NULL), "pass");
	ASSERT_STREQ(registry_verdict(names, old, N(old), OLD_HEAD), "blocked");
	ASSERT_STREQ(registry_verdict(names, all_old, N(all_old), OLD_HEAD), "pass");
	ASSERT_STREQ(registry_verdict(names, old_fail, N(old_fail), HEAD), "blocked");
	ASSERT_STREQ(registry_verdict(names, old_fail, N(old_fail), NULL), "fail");
	ASSERT_STREQ(registry_verdict(names, revalidated, N(revalidated), HEAD), "pass");
	ASSERT_STREQ(registry_verdict(names, ext_claim, N(ext_claim), HEAD), "blocked");
	ASSERT_STREQ(registry_verdict(names, cur, N(cur), ""), "blocked");

	registry_evidence_summary(names, old, N(old), HEAD, out);
	ASSERT_STREQ(out, "1/2 validated");
	registry_evidence_summary(names, old, N(old), NULL, out);
	ASSERT_STREQ(out, "2/2 validated");
	registry_evidence_summary(names, all_old, N(all_old), HEAD, out);
	ASSERT_STREQ(out, "0/2 validated");

	buf_init(&b);
	ASSERT_EQ(registry_evidence_md("item", names, old, N(old), HEAD, &b), 0);
	ASSERT_CONTAINS(b.data, "# Evidence for item [1/2 validated]\n");
	snprintf(want, sizeof(want), "| 01-build | validated | ./01-build | "
		 "[validation/logs/T-01-build-%.*s.log](logs/T-01-build-%.*s.log) | "
		 "stale: ran at fedcba987654 |\n",
		 (int)strcspn(strstr(old[0], "-01-build-") + 10, "."),
		 strstr(old[0], "-01-build-") + 10,
		 (int)strcspn(strstr(old[0], "-01-build-") + 10, "."),
		 strstr(old[0], "-01-build-") + 10);
	ASSERT_CONTAINS(b.data, want);
	ASSERT(strstr(b.data, "| 02-lint | validated | ./02-lint | [") != NULL);
	ASSERT(strstr(strstr(b.data, "| 02-lint |"), "stale") == NULL);
	buf_free(&b);
}

/* The embedded schema lists exactly the keys the validator knows. */
TEST(schema_matches_validator)
{
	cJSON *schema = cJSON_Parse(schema_json_registry_line), *props, *p, *req;
	char line[256], err[128], *out = NULL;
	int n = 0, rc;

	ASSERT(schema != NULL);
	props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	cJSON_ArrayForEach(p, props) {
		snprintf(line, sizeof(line), "{\"recipe\":\"01-a\",\"status\":\"validated\","
			 "\"%s\":{}}", p->string);
		if (!strcmp(p->string, "recipe") || !strcmp(p->string, "status"))
			snprintf(line, sizeof(line),
				 "{\"recipe\":\"01-a\",\"status\":\"validated\"}");
		rc = registry_check_external(line, strlen(line), &out, err, sizeof(err));
		if (rc == 0) {
			free(out);
			out = NULL;
		} else if (strstr(err, "unknown key")) {
			FAIL_AT("schema property %s is unknown to the validator", p->string);
		}
		n++;
	}
	ASSERT_EQ(n, 22);
	req = cJSON_GetObjectItemCaseSensitive(schema, "required");
	ASSERT_EQ(cJSON_GetArraySize(req), 2);
	ASSERT_STREQ(cJSON_GetArrayItem(req, 0)->valuestring, "recipe");
	ASSERT_STREQ(cJSON_GetArrayItem(req, 1)->valuestring, "status");
	cJSON_Delete(schema);
}

int main(void)
{
	RUN(external_invalid);
	RUN(external_nul_inside);
	RUN(external_too_long);
	RUN(external_valid);
	RUN(engine_line);
	RUN(engine_line_measured);
	RUN(verdict);
	RUN(verdict_external_claiming_engine);
	RUN(gate);
	RUN(gate_latest);
	RUN(many);
	RUN(stale);
	RUN(evidence_md);
	RUN(digest_incremental);
	RUN(evidence_md_plain);
	RUN(evidence_summary);
	RUN(schema_matches_validator);
	return 0;
}
