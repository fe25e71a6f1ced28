/*
 * fuzz-registry.c - registry lines (registry.h, engine/format/registry.c):
 * the input as one line appended from outside (registry_check_external),
 * then as a whole registry.jsonl, one line per '\n', read by what derives
 * from it: the digest, evidence.md, the verdict and the review gate.
 *
 * Contract checked: a line is accepted (its normalised form is itself an
 * acceptable line, marked external) or refused with -EINVAL/-EFBIG and a
 * reason; the digest renders what the direct renderer does.
 */
#include <errno.h>

#include "fuzz.h"
#include "registry.h"

static const char head[] = "0123456789abcdef0123456789abcdef01234567";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *names[] = { "01-build", "02-unit-tests", "03-lint", NULL };
	char err[256], reason[512], sum1[64], sum2[64], *out = NULL, *again = NULL, *text;
	char **lines = NULL, *p, *nl;
	struct registry_digest *d;
	struct buf direct = { 0 }, digested = { 0 };
	size_t n = 0, cap = 0;
	const char *verdict;
	int rc;

	rc = registry_check_external((const char *)data, size, &out, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -EFBIG || rc == -ENOMEM);
	if (rc == 0) {
		CHECK(out && strstr(out, "\"source\":\"external\""));
		CHECK(registry_check_external(out, strlen(out), &again, err, sizeof(err)) == 0 ||
		      strlen(out) > REGISTRY_LINE_MAX);
		free(again);
		free(out);
	} else {
		CHECK(out == NULL);
		CHECK(rc == -ENOMEM || err[0]);
	}

	/* The whole input as a registry: lines are C strings, as the store
	 * gives them (a NUL ends its line early). */
	text = fuzz_cstr(data, size);
	d = registry_digest_new();
	if (!text || !d)
		goto out;
	for (p = text; p < text + size; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(text + size - p));
		if (!nl)
			nl = text + size;
		*nl = '\0';
		if (n + 1 >= cap) {
			char **v = realloc(lines, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v)
				goto out;
			lines = v;
		}
		lines[n++] = p;
		if (registry_digest_add(d, p, strlen(p)))
			goto out;
	}
	verdict = registry_verdict(names, lines, n, head);
	CHECK(!strcmp(verdict, "pass") || !strcmp(verdict, "fail") || !strcmp(verdict, "blocked"));
	rc = registry_gate(names, lines, n, head, reason, sizeof(reason));
	CHECK(rc == 0 || rc == -EAGAIN || rc == -ENOMEM);
	CHECK(rc != 0 || !strcmp(verdict, "pass"));
	if (registry_evidence_md("fix-1", names, lines, n, head, &direct) == 0 &&
	    registry_digest_evidence_md(d, "fix-1", names, head, &digested) == 0) {
		CHECK(direct.len == digested.len && !memcmp(direct.data, digested.data, direct.len));
	}
	registry_evidence_summary(names, lines, n, head, sum1);
	registry_digest_summary(d, names, head, sum2);
	CHECK(!strcmp(sum1, sum2));
out:
	buf_free(&direct);
	buf_free(&digested);
	registry_digest_free(d);
	free(lines);
	free(text);
	return 0;
}
