/*
 * cli_attest.c - `packetfs attest` and `packetfs verify` (SPEC §6,
 * "Evidence leaves the store intact").
 *
 * attest opens the store read-only (a mount point stands for its store),
 * asks the engine for the item's signed test-result attestation
 * (engine_attest: an in-toto Statement in a DSSE envelope) and prints the
 * envelope on stdout. verify needs no store: it checks an envelope against
 * a public key (util.h, dsse_verify), then that its payload is an in-toto
 * Statement v1 with a test-result v0.1 predicate about one git commit
 * (and, with --subject, about that one), and prints what it attests.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

#define PAYLOAD_TYPE "application/vnd.in-toto+json"
#define STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define PREDICATE_TYPE "https://in-toto.io/attestation/test-result/v0.1"

int cli_attest(int argc, char **argv)
{
	struct buf out = { NULL, 0, 0 };
	struct engine *e;
	char err[1024] = "", tmp[512];
	const char *item;
	int r, made = 0;

	if ((r = cli_no_options("attest", argc, argv)) >= 0 ||
	    (r = cli_operands("attest", argc, 2, 2, "missing STORE|MOUNTPOINT or ITEM")))
		return r;
	item = argv[optind + 1];
	if (!item[0] || strchr(item, '/'))
		return cli_fail("attest", "%s: no such item", item);
	if (cli_open_readonly("attest", argv[optind], &e) != 0)
		return 1;
	r = engine_attest(e, item, &out, &made, err, sizeof(err));
	engine_close(e);
	if (made)
		fprintf(stderr, "packetfs: attest: made the store's signing key pair (%s, %s)\n",
			ENGINE_SIGNING_KEY, ENGINE_SIGNING_PUB);
	if (r < 0)
		r = cli_fail("attest", "%s", cli_why(err, r, item, tmp, sizeof(tmp)));
	else if (fwrite(out.data ? out.data : "", 1, out.len, stdout) != out.len || fflush(stdout))
		r = cli_fail("attest", "stdout: %s", strerror(errno));
	buf_free(&out);
	return r;
}

/* The string member key of o, or NULL. */
static const char *str_at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The number of strings in the array member key of pred, or -1 when it is
 * no array of strings. */
static int count_tests(const cJSON *pred, const char *key)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(pred, key), *v;
	int n = 0;

	if (!a)
		return 0; /* the predicate's lists are optional */
	if (!cJSON_IsArray(a))
		return -1;
	cJSON_ArrayForEach(v, a) {
		if (!cJSON_IsString(v))
			return -1;
		n++;
	}
	return n;
}

/* Whether want names commit: the whole id, or a prefix of at least 7 hex
 * digits, as git takes them. */
static int names_commit(const char *want, const char *commit)
{
	size_t n = strlen(want);

	return n >= 7 && n <= strlen(commit) && strspn(want, "0123456789abcdef") == n &&
	       strncmp(want, commit, n) == 0;
}

/* Checks the Statement st (the verified payload) and prints what it
 * attests; with require_pass, a result other than PASSED is refused after
 * it is shown. 0, or 1 after reporting why not. */
static int show_statement(const char *text, size_t len, const char *subject, int require_pass)
{
	cJSON *st = cJSON_ParseWithLength(text, len), *subj, *s, *pred;
	const char *name, *commit, *result, *item;
	int passed, warned, failed, r = 1;

	if (!cJSON_IsObject(st)) {
		cli_fail("verify", "the payload is not a JSON object");
		goto out;
	}
	if (!str_at(st, "_type") || strcmp(str_at(st, "_type"), STATEMENT_TYPE) != 0) {
		cli_fail("verify", "the payload is not an in-toto Statement (_type %s)",
			 STATEMENT_TYPE);
		goto out;
	}
	if (!str_at(st, "predicateType") || strcmp(str_at(st, "predicateType"), PREDICATE_TYPE)) {
		cli_fail("verify", "predicateType is not %s", PREDICATE_TYPE);
		goto out;
	}
	subj = cJSON_GetObjectItemCaseSensitive(st, "subject");
	s = cJSON_IsArray(subj) && cJSON_GetArraySize(subj) == 1 ? cJSON_GetArrayItem(subj, 0) : NULL;
	name = s ? str_at(s, "name") : NULL;
	commit = s ? str_at(cJSON_GetObjectItemCaseSensitive(s, "digest"), "gitCommit") : NULL;
	if (!name || !commit) {
		cli_fail("verify", "the Statement has no subject with a name and a gitCommit digest");
		goto out;
	}
	pred = cJSON_GetObjectItemCaseSensitive(st, "predicate");
	result = cJSON_IsObject(pred) ? str_at(pred, "result") : NULL;
	passed = count_tests(pred, "passedTests");
	warned = count_tests(pred, "warnedTests");
	failed = count_tests(pred, "failedTests");
	if (!result || (strcmp(result, "PASSED") && strcmp(result, "WARNED") &&
			strcmp(result, "FAILED")) || passed < 0 || warned < 0 || failed < 0) {
		cli_fail("verify", "the predicate is not a test result (result PASSED, WARNED or "
			 "FAILED; passedTests, warnedTests, failedTests lists of names)");
		goto out;
	}
	if (subject && !names_commit(subject, commit)) {
		cli_fail("verify", "the attestation is about commit %s, not %s", commit, subject);
		goto out;
	}
	/* "git+REPO@packetfs/ITEM": the item is the branch's last part. */
	item = strrchr(name, '@');
	item = item ? item + 1 : name;
	if (strncmp(item, "packetfs/", 9) == 0)
		item += 9;
	printf("item: %s\nsubject: %s\ncommit: %s\nresult: %s\npassed: %d/%d\n", item, name,
	       commit, result, passed, passed + warned + failed);
	fflush(stdout);
	if (require_pass && strcmp(result, "PASSED") != 0) {
		cli_fail("verify", "the result is %s, not PASSED (--require-pass)", result);
		goto out;
	}
	r = 0;
out:
	cJSON_Delete(st);
	return r;
}

int cli_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "subject", required_argument, NULL, 's' },
		{ "require-pass", no_argument, NULL, 'p' },
		CLI_OPTIONS_END,
	};
	struct buf env = { NULL, 0, 0 }, key = { NULL, 0, 0 }, payload = { NULL, 0, 0 };
	const char *keyfile = NULL, *subject = NULL, *file;
	char why[256] = "", *type = NULL;
	int c, r, require_pass = 0;

	cli_opts_reset();
	while ((c = cli_next_option("verify", argc, argv, ":hk:s:", longopts, &r)) > 0) {
		if (c == 'k')
			keyfile = optarg;
		else if (c == 's')
			subject = optarg;
		else if (c == 'p')
			require_pass = 1;
	}
	if (c == CLI_OPT_EXIT || (r = cli_operands("verify", argc, 1, 1, "missing FILE")))
		return r;
	if (!keyfile)
		return cli_usage_error("verify", "missing --key PUBKEY");
	file = argv[optind];
	r = cli_read_input(file, &env);
	if (r < 0) {
		r = cli_fail("verify", "%s: %s", file, strerror(-r));
		goto out;
	}
	r = util_read_path(keyfile, MAX_READ, &key);
	if (r < 0) {
		r = cli_fail("verify", "%s: %s", keyfile, strerror(-r));
		goto out;
	}
	r = dsse_verify(env.data ? env.data : "", env.len, key.data ? key.data : "", key.len,
			&type, &payload, why, sizeof(why));
	if (r == -EINVAL && strstr(why, "key"))
		r = cli_fail("verify", "%s: %s", keyfile, why);
	else if (r == -EINVAL || r == -EBADMSG)
		r = cli_fail("verify", "%s: %s", file, why);
	else if (r < 0)
		r = cli_fail("verify", "%s: %s", file, strerror(-r));
	else if (strcmp(type, PAYLOAD_TYPE) != 0)
		r = cli_fail("verify", "%s: payloadType is %s, not %s", file, type, PAYLOAD_TYPE);
	else
		r = show_statement(payload.data ? payload.data : "", payload.len, subject,
				   require_pass);
out:
	free(type);
	buf_free(&env);
	buf_free(&key);
	buf_free(&payload);
	return r;
}
