/*
 * attest.c - `packetfs attest` (engine.h, engine_attest; SPEC §6): an
 * item's evidence as a signed in-toto attestation that leaves the store.
 *
 * The Statement (in-toto Statement v1) names one subject, the item branch
 * at its head: {"name": "git+REPO@BRANCH", "digest": {"gitCommit": HEAD}}.
 * Its predicate is a test result (predicate type
 * https://in-toto.io/attestation/test-result/v0.1) over the recipes the
 * plan names, each judged by its latest engine run at the head, as
 * evidence.md and junit.xml judge it (registry.h: a run at another commit
 * counts as none; external claims never count):
 *   passedTests  validated
 *   failedTests  failing, timed_out
 *   warnedTests  blocked, cancelled, interrupted, and no run at the head
 * result is FAILED when any failed, else WARNED when any warned (or the
 * plan names none), else PASSED. configuration holds one resource
 * descriptor per named recipe: its file in the catalog (uri, and the
 * sha256 of its content as it is now) with annotations saying what its
 * run at the head was (status, run, command, evidence, log_sha256,
 * duration_s; a measured recipe's also "measurements", its verdict's note:
 * each metric's medians, ratio and interval, docs/measure.md), or status
 * "missing". A plan with a scope block (SPEC §6
 * "Scope") adds the test "scope": passed when no kept path is touched at
 * the head, failed when one is, warned for a malformed block; its
 * descriptor (uri "plan.md#scope") says the scope and the kept paths.
 *
 * The Statement is the payload of a DSSE envelope (util.h, "Signing") of
 * payloadType application/vnd.in-toto+json, signed with the store's key.
 *
 * The key. The private key is a PEM file of its own in the store
 * directory (ENGINE_SIGNING_KEY, mode 0600), not a row of the database:
 * every reader of the store (status, log, check, export) opens the
 * database, and a copy of it (a backup, a database attached to a bug
 * report) must not carry the power to sign; a file has a mode of its own
 * that the kernel enforces, and is what openssl and other tools read. A
 * store made before keys existed gets its pair at its first attest (the
 * attesting user is the store owner, who may write the store directory):
 * a mount never writes it, so nothing changes for stores that never sign.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "namespace.h"

#define PAYLOAD_TYPE "application/vnd.in-toto+json"

/* The resource descriptor of recipe k: its catalog file (dir: recipes_dir)
 * and its run at the head. NULL on ENOMEM. */
static cJSON *descriptor(const struct recipe_catalog *cat, const char *dir,
			 const struct view_case *k)
{
	const struct recipe *r = recipe_find(cat, k->name);
	cJSON *o = cJSON_CreateObject(), *dg, *an;
	char uri[4096], hex[65], *data = NULL;
	size_t len;
	int ok;

	if (!o)
		return NULL;
	if (r)
		snprintf(uri, sizeof(uri), "file://%s", r->path);
	else /* not in the catalog (any more) */
		snprintf(uri, sizeof(uri), "file://%s/%s", dir ? dir : "", k->name);
	ok = cJSON_AddStringToObject(o, "name", k->name) && cJSON_AddStringToObject(o, "uri", uri);
	if (ok && r && util_read_file(r->path, 16 << 20, &data, &len) == 0) {
		util_sha256_hex(data, len, hex);
		dg = cJSON_AddObjectToObject(o, "digest");
		ok = dg && cJSON_AddStringToObject(dg, "sha256", hex);
	}
	free(data);
	an = ok ? cJSON_AddObjectToObject(o, "annotations") : NULL;
	ok = an && cJSON_AddStringToObject(an, "status", k->ran ? k->status : "missing");
	if (ok && k->ran)
		ok = cJSON_AddNumberToObject(an, "run", k->run) &&
		     cJSON_AddStringToObject(an, "command", k->command) &&
		     cJSON_AddStringToObject(an, "evidence", k->evidence) &&
		     cJSON_AddStringToObject(an, "log_sha256", k->log_sha256) &&
		     cJSON_AddNumberToObject(an, "duration_s", k->duration_s);
	/* A measured recipe's verdict says the change of each metric. */
	if (ok && k->ran && r && r->measure.measured)
		ok = cJSON_AddStringToObject(an, "measurements", k->note ? k->note : "") != NULL;
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The plan's scope at the head, as view_scope_get gives it. */
struct attest_scope {
	int got;
	char summary[400];
	struct buf kept;
};

/* Adds the test "scope" of sc to the predicate's lists. 1, or 0 on ENOMEM. */
static int scope_test(const struct attest_scope *sc, cJSON *conf, cJSON *pass, cJSON *warn,
		      cJSON *fail)
{
	cJSON *d = cJSON_CreateObject(), *an;

	if (!d || !cJSON_AddItemToArray(conf, d)) {
		cJSON_Delete(d);
		return 0;
	}
	return cJSON_AddStringToObject(d, "name", "scope") &&
	       cJSON_AddStringToObject(d, "uri", "plan.md#scope") &&
	       (an = cJSON_AddObjectToObject(d, "annotations")) &&
	       cJSON_AddStringToObject(an, "status", sc->summary) &&
	       cJSON_AddStringToObject(an, "kept_paths_touched", sc->kept.data ? sc->kept.data : "") &&
	       cJSON_AddItemToArray(sc->got == 2 ? fail : sc->got < 0 ? warn : pass,
				    cJSON_CreateString("scope"));
}

/* The Statement of item it at head over the cases c and the scope sc, as
 * compact JSON into *out (caller frees). 0 or -ENOMEM. */
static int statement(struct engine *e, const struct item *it, const char *head,
		     const struct view_cases *c, const struct attest_scope *sc, char **out)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	const struct recipe_catalog *cat;
	cJSON *st = cJSON_CreateObject(), *subj, *s, *dg, *pred, *conf, *pass, *warn, *fail, *d;
	char name[4096];
	size_t i, nfail = 0, nwarn = 0;
	int ok;

	if (!st)
		return -ENOMEM;
	snprintf(name, sizeof(name), "git+%s@%s", cfg->repo ? cfg->repo : "", it->branch);
	ok = cJSON_AddStringToObject(st, "_type", "https://in-toto.io/Statement/v1") &&
	     (subj = cJSON_AddArrayToObject(st, "subject")) && (s = cJSON_CreateObject()) &&
	     cJSON_AddItemToArray(subj, s) && cJSON_AddStringToObject(s, "name", name) &&
	     (dg = cJSON_AddObjectToObject(s, "digest")) &&
	     cJSON_AddStringToObject(dg, "gitCommit", head) &&
	     cJSON_AddStringToObject(st, "predicateType",
				     "https://in-toto.io/attestation/test-result/v0.1") &&
	     (pred = cJSON_AddObjectToObject(st, "predicate")) &&
	     cJSON_AddStringToObject(pred, "result", "") &&
	     (conf = cJSON_AddArrayToObject(pred, "configuration")) &&
	     (pass = cJSON_AddArrayToObject(pred, "passedTests")) &&
	     (warn = cJSON_AddArrayToObject(pred, "warnedTests")) &&
	     (fail = cJSON_AddArrayToObject(pred, "failedTests"));
	cat = pipeline_recipes_hold(e->pl);
	for (i = 0; ok && i < c->n; i++) {
		const struct view_case *k = &c->v[i];
		cJSON *list = warn;

		if (k->ran && strcmp(k->status, "validated") == 0)
			list = pass;
		else if (k->ran && (strcmp(k->status, "failing") == 0 ||
				    strcmp(k->status, "timed_out") == 0))
			list = fail, nfail++;
		else
			nwarn++;
		d = descriptor(cat, cfg->recipes_dir, k);
		ok = d && cJSON_AddItemToArray(conf, d) &&
		     cJSON_AddItemToArray(list, cJSON_CreateString(k->name));
	}
	pipeline_recipes_release(e->pl);
	if (ok && sc->got) {
		ok = scope_test(sc, conf, pass, warn, fail);
		nfail += sc->got == 2;
		nwarn += sc->got < 0;
	}
	if (ok)
		ok = cJSON_ReplaceItemInObjectCaseSensitive(
			pred, "result",
			cJSON_CreateString(nfail ? "FAILED" : nwarn || !c->n ? "WARNED" : "PASSED"));
	*out = ok ? cJSON_PrintUnformatted(st) : NULL;
	cJSON_Delete(st);
	return *out ? 0 : -ENOMEM;
}

/* The path of the store's private key into priv (made when missing: *made
 * 1). 0, or -EACCES with why in err. */
static int signing_key(struct engine *e, char *priv, size_t size, int *made, char *err,
		       size_t errlen)
{
	char pub[4096];
	struct buf pem = {0};
	int rc;

	snprintf(priv, size, "%s/%s", e->store_dir, ENGINE_SIGNING_KEY);
	snprintf(pub, sizeof(pub), "%s/%s", e->store_dir, ENGINE_SIGNING_PUB);
	rc = sign_key_public(priv, &pem);
	if (rc == -ENOENT) {
		rc = sign_key_make(priv, pub);
		if (rc == 0 && made)
			*made = 1;
		if (rc == -EEXIST) /* made by another attest at the same time */
			rc = 0;
		if (rc) {
			snprintf(err, errlen, "cannot make the store's signing key %s: %s", priv,
				 strerror(-rc));
			return -EACCES;
		}
		return 0;
	}
	buf_free(&pem);
	if (rc) {
		snprintf(err, errlen, "cannot read the store's signing key %s: %s", priv,
			 rc == -EINVAL ? "not an ed25519 private key (PEM)" : strerror(-rc));
		return -EACCES;
	}
	return 0;
}

int engine_attest(struct engine *e, const char *item, struct buf *out, int *made, char *err,
		  size_t errlen)
{
	struct view_cases c = {0};
	struct item it = {0};
	struct attest_scope sc;
	char head[41], priv[4096], **names = NULL, *payload = NULL;
	int rc;

	buf_init(&sc.kept);

	if (made)
		*made = 0;
	rc = store_item_get(e->store, item, &it);
	if (rc) {
		snprintf(err, errlen, "%s: %s", item, rc == -ENOENT ? "no such item" : strerror(-rc));
		return rc;
	}
	if (view_head(e, &it, head)) {
		snprintf(err, errlen, "%s: the branch %s has no head commit", item, it.branch);
		rc = -ENOENT;
		goto out;
	}
	rc = view_plan_names(e, it.id, &names);
	if (rc == 0) {
		c.names = names;
		c.head = head;
		rc = view_cases_read(e, it.id, &c);
	}
	if (rc == 0)
		sc.got = view_scope_get(e, &it, head, sc.summary, sizeof(sc.summary), &sc.kept);
	rc = rc ? rc : statement(e, &it, head, &c, &sc, &payload);
	if (rc) {
		snprintf(err, errlen, "%s: cannot read the evidence: %s", item, strerror(-rc));
		goto out;
	}
	rc = signing_key(e, priv, sizeof(priv), made, err, errlen);
	if (rc)
		goto out;
	rc = dsse_sign(priv, PAYLOAD_TYPE, payload, strlen(payload), out);
	if (rc) {
		snprintf(err, errlen, "cannot sign with %s: %s", priv,
			 rc == -EINVAL ? "not an ed25519 private key (PEM)" : strerror(-rc));
		rc = rc == -ENOMEM ? rc : -EACCES;
	}
out:
	free(payload);
	buf_free(&sc.kept);
	view_cases_free(&c);
	strv_free(names);
	item_clear(&it);
	return rc;
}
