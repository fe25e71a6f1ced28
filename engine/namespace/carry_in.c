/*
 * carry_in.c - importing an item carried from another store (engine.h:
 * engine_carry_open, _item, _finish; the format: carry.c).
 *
 * Design: everything that can refuse an import is checked by
 * engine_carry_open before the store changes at all: the manifest, every
 * log against its sha256, the registry against its sha256 and each engine
 * line's log_sha256 against its run's log, the bundle (git). Only the
 * bundle's objects enter the repository then (unreferenced, as a fetch
 * that moved no ref leaves them). engine_carry_item then makes the item at
 * the carried head and restores runs, logs and registry lines, reading
 * each log again and checking its hash again, so that a file changed in
 * between is refused rather than stored.
 *
 * What counts: a carried registry line says "source":"engine" whatever
 * store wrote it; it stays an engine line here (it counts, as any engine
 * line of the item does, while the head is its head) only when its run
 * came with it, with a log whose sha256 is the line's log_sha256, its
 * evidence names that log and it ran at the carried head. Every other is
 * stored with source "imported" and the reason, and never counts
 * (store_carry_line). The registry's bytes stay as they were.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "packet_int.h"

/* The longest file of a carry read into memory: a log or the registry. */
#define CARRY_FILE_MAX ((size_t)1 << 30)

struct carry_run {
	struct run r;   /* as the manifest gives it (id, item_id unset) */
	char sha[65];   /* of its log, verified against the file */
};

struct engine_carry {
	char *dir;
	cJSON *m;                /* the manifest */
	char head[41], base[41];
	struct carry_run *runs;
	size_t nruns;
	char **lines;            /* registry.jsonl's lines, no newlines */
	size_t nlines;
	int counted, imported;   /* lines restored as engine lines, as imported ones */
};

void engine_carry_free(struct engine_carry *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nruns; i++)
		run_clear(&c->runs[i].r);
	free(c->runs);
	strv_free(c->lines);
	cJSON_Delete(c->m);
	free(c->dir);
	free(c);
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int jint(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valueint : 0;
}

static int is_commit(const char *s)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[40] == '\0';
}

/* Whether rel names a log where the store keeps them: stages/N-NAME.log
 * or validation/logs/NAME.log, one component below, nothing odd. */
static int log_path_ok(const char *rel)
{
	const char *name;

	if (strncmp(rel, "stages/", 7) == 0)
		name = rel + 7;
	else if (strncmp(rel, "validation/logs/", 16) == 0)
		name = rel + 16;
	else
		return 0;
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) < NAME_MAX &&
	       strlen(name) > 4 && strcmp(name + strlen(name) - 4, ".log") == 0;
}

/* Reads dir/rel whole into *data (caller frees), and its sha256 into hex. */
static int read_hashed(const char *dir, const char *rel, char **data, size_t *len, char hex[65])
{
	char path[PATH_MAX];
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	rc = util_read_file(path, CARRY_FILE_MAX, data, len);
	if (rc == 0)
		util_sha256_hex(*data, *len, hex);
	return rc;
}

/* The manifest's run o as c->runs[i]; its log read and checked. */
static int take_run(struct engine_carry *c, const cJSON *o, struct carry_run *cr, char *err,
		    size_t errlen)
{
	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(o, "gpus");
	const cJSON *ec = cJSON_GetObjectItemCaseSensitive(o, "exit_code");
	const char *log = jstr(o, "log"), *kind = jstr(o, "kind"), *sha = jstr(o, "sha256");
	const char *status, *ended = NULL;
	struct run *r = &cr->r;
	char *data = NULL, hex[65];
	size_t len;
	int rc;

	if (!cJSON_IsObject(o) || jint(o, "run") < 1 || !log_path_ok(log) ||
	    (strcmp(kind, "stage") != 0 && strcmp(kind, "recipe") != 0) || !jstr(o, "name")[0] ||
	    strlen(sha) != 64) {
		snprintf(err, errlen, "%s: a run of the manifest without run, kind, name, log or "
			 "sha256 (or a log outside stages/ and validation/logs/)", ENGINE_CARRY_MANIFEST);
		return -EINVAL;
	}
	rc = read_hashed(c->dir, log, &data, &len, hex);
	free(data);
	if (rc) {
		snprintf(err, errlen, "%s: %s", log, rc == -ENOENT ? "missing" : strerror(-rc));
		return rc;
	}
	if (strcmp(hex, sha) != 0) {
		snprintf(err, errlen, "%s: sha256 %.12s does not match the manifest's %.12s (the "
			 "log changed since it was exported)", log, hex, sha);
		return -EINVAL;
	}
	/* A run still going there was exported as far as it got: here it
	 * ended then (never "running": recovery would kill its pgid). */
	status = jstr(o, "status");
	if (!status[0]) {
		ended = "unfinished";
	} else if (run_status_parse(status, &r->status)) {
		snprintf(err, errlen, "%s: run %d has the status '%s', which packetfs does not "
			 "know", ENGINE_CARRY_MANIFEST, jint(o, "run"), status);
		return -EINVAL;
	} else if (r->status == RUN_RUNNING || r->status == RUN_QUEUED) {
		ended = status;
	}
	memcpy(cr->sha, hex, sizeof(hex));
	r->run_no = jint(o, "run");
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	r->iteration = jint(o, "iteration") > 0 ? jint(o, "iteration") : 1;
	r->name = strdup(jstr(o, "name"));
	r->command = strdup(jstr(o, "command"));
	r->log_path = strdup(log);
	r->note = strdup(jstr(o, "note"));
	r->gpus = cJSON_IsArray(gpus) ? cJSON_PrintUnformatted(gpus) : strdup("[]");
	r->job_output = strdup("");
	snprintf(r->head, sizeof(r->head), "%s", jstr(o, "head"));
	snprintf(r->executor, sizeof(r->executor), "%s", jstr(o, "executor"));
	snprintf(r->started_at, sizeof(r->started_at), "%s", jstr(o, "started_at"));
	snprintf(r->finished_at, sizeof(r->finished_at), "%s", jstr(o, "finished_at"));
	r->duration_s = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "duration_s"))
				? cJSON_GetObjectItemCaseSensitive(o, "duration_s")->valuedouble : 0;
	r->has_exit_code = cJSON_IsNumber(ec);
	r->exit_code = r->has_exit_code ? ec->valueint : 0;
	r->signal = jint(o, "signal");
	if (ended) {
		char *note = NULL;

		if (asprintf(&note, "exported while %s%s%s", ended,
			     r->note && r->note[0] ? "; " : "", r->note ? r->note : "") < 0)
			note = NULL;
		free(r->note);
		r->note = note;
		r->status = RUN_INTERRUPTED;
	}
	if (!r->name || !r->command || !r->log_path || !r->note || !r->gpus || !r->job_output)
		return -ENOMEM;
	return 0;
}

/* The carried run numbered run_no, or NULL. */
static const struct carry_run *run_of(const struct engine_carry *c, int run_no)
{
	size_t i;

	for (i = 0; i < c->nruns; i++)
		if (c->runs[i].r.run_no == run_no)
			return &c->runs[i];
	return NULL;
}

/* Reads validation/registry.jsonl into c->lines, checked against the
 * manifest's sha256 and each engine line against its run's log. */
static int take_registry(struct engine_carry *c, char *err, size_t errlen)
{
	const char *want = jstr(c->m, "registry_sha256");
	char *data = NULL, *s, *nl, hex[65];
	size_t len, no = 0;
	int rc = read_hashed(c->dir, "validation/registry.jsonl", &data, &len, hex);

	if (rc == -ENOENT) { /* no registry: none, if the manifest says so */
		data = strdup("");
		len = 0;
		util_sha256_hex("", 0, hex);
		rc = data ? 0 : -ENOMEM;
	}
	if (rc) {
		snprintf(err, errlen, "validation/registry.jsonl: %s", strerror(-rc));
		return rc;
	}
	if (strcmp(hex, want) != 0) {
		snprintf(err, errlen, "validation/registry.jsonl: sha256 %.12s does not match the "
			 "manifest's %.12s (the registry changed since it was exported)", hex,
			 want[0] ? want : "(none)");
		free(data);
		return -EINVAL;
	}
	if (len && (memchr(data, '\0', len) || data[len - 1] != '\n')) {
		snprintf(err, errlen, "validation/registry.jsonl: not JSON lines");
		free(data);
		return -EINVAL;
	}
	for (s = data; rc == 0 && len && *s; s = nl + 1) {
		const struct carry_run *cr;
		cJSON *o;

		nl = strchr(s, '\n');
		*nl = '\0';
		no++;
		o = cJSON_Parse(s);
		if (!cJSON_IsObject(o)) {
			snprintf(err, errlen, "validation/registry.jsonl line %zu: not a JSON object", no);
			rc = -EINVAL;
		} else if (strcmp(jstr(o, "source"), "engine") == 0 &&
			   (cr = run_of(c, jint(o, "run"))) != NULL &&
			   strcmp(jstr(o, "evidence"), cr->r.log_path) == 0 &&
			   strcmp(jstr(o, "log_sha256"), cr->sha) != 0) {
			snprintf(err, errlen, "validation/registry.jsonl line %zu (run %d): log_sha256 "
				 "%.12s does not match its log %s (%.12s)", no, cr->r.run_no,
				 jstr(o, "log_sha256"), cr->r.log_path, cr->sha);
			rc = -EINVAL;
		}
		cJSON_Delete(o);
		if (rc == 0 && strv_push(&c->lines, s))
			rc = -ENOMEM;
	}
	c->nlines = no;
	free(data);
	return rc;
}

/* Checks the bundle (its path into path): there, not empty, and the file
 * the manifest's bundle_sha256 names (exports made before that field was
 * written have none: git's own checks then stand alone). */
static int take_bundle(struct engine_carry *c, char *path, size_t size, char *err,
		       size_t errlen)
{
	const char *want = jstr(c->m, "bundle_sha256");
	char hex[65];
	uint64_t len;
	int rc;

	snprintf(path, size, "%s/%s", c->dir, ENGINE_CARRY_BUNDLE);
	rc = packet__file_sha256(path, hex, &len);
	if (rc) {
		snprintf(err, errlen, "%s: %s", ENGINE_CARRY_BUNDLE,
			 rc == -ENOENT ? "missing (the branch did not come with the export)"
				       : strerror(-rc));
		return rc;
	}
	if (len == 0) {
		snprintf(err, errlen, "not a whole packetfs export: %s is empty (the branch did not "
			 "come with the export)", ENGINE_CARRY_BUNDLE);
		return -EINVAL;
	}
	if (want[0] && strcmp(hex, want) != 0) {
		snprintf(err, errlen, "%s: sha256 %.12s does not match the manifest's %.12s (the "
			 "bundle changed since it was exported)", ENGINE_CARRY_BUNDLE, hex, want);
		return -EINVAL;
	}
	return 0;
}

int engine_carry_open(struct engine *e, const char *dir, struct engine_carry **out, char *err,
		      size_t errlen)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	struct engine_carry *c;
	const cJSON *fmt, *runs, *o;
	char path[PATH_MAX], *text = NULL;
	size_t len, i;
	int rc;

	*out = NULL;
	err[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, ENGINE_CARRY_MANIFEST);
	rc = util_read_file(path, CARRY_FILE_MAX, &text, &len);
	if (rc == -ENOENT) {
		struct stat st;

		/* The manifest is written last: a .packetfs/ without it is what
		 * an export that did not finish left (before exports became
		 * all or nothing); none at all, a folder of plain files. */
		snprintf(path, sizeof(path), "%s/.packetfs", dir);
		if (lstat(path, &st) == 0)
			snprintf(err, errlen, "not a packetfs export (no %s): its .packetfs/ holds no "
				 "manifest, so it is what an export that did not finish left",
				 ENGINE_CARRY_MANIFEST);
		else
			snprintf(err, errlen, "not a packetfs export (no %s): a folder of plain files "
				 "(to make an item of them, use `packetfs new` and copy them onto the "
				 "mount)", ENGINE_CARRY_MANIFEST);
		return -ENOENT;
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", ENGINE_CARRY_MANIFEST, strerror(-rc));
		return rc;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(text);
		engine_carry_free(c);
		return -ENOMEM;
	}
	c->m = cJSON_ParseWithLength(text, len);
	free(text);
	fmt = cJSON_GetObjectItemCaseSensitive(c->m, "format");
	runs = cJSON_GetObjectItemCaseSensitive(c->m, "runs");
	if (!cJSON_IsObject(c->m)) {
		snprintf(err, errlen, "%s: not a JSON object", ENGINE_CARRY_MANIFEST);
		rc = -EINVAL;
	} else if (!cJSON_IsNumber(fmt) || fmt->valuedouble != ENGINE_CARRY_FORMAT) {
		if (cJSON_IsNumber(fmt))
			snprintf(err, errlen, "%s: unknown format version %g (this packetfs reads %d)",
				 ENGINE_CARRY_MANIFEST, fmt->valuedouble, ENGINE_CARRY_FORMAT);
		else
			snprintf(err, errlen, "%s: no format version (this packetfs reads %d)",
				 ENGINE_CARRY_MANIFEST, ENGINE_CARRY_FORMAT);
		rc = -EPROTO;
	} else if (!is_commit(jstr(c->m, "head")) ||
		   (jstr(c->m, "base")[0] && !is_commit(jstr(c->m, "base"))) ||
		   !cJSON_IsArray(runs)) {
		snprintf(err, errlen, "%s: no head commit, base commit or runs", ENGINE_CARRY_MANIFEST);
		rc = -EINVAL;
	}
	if (rc)
		goto fail;
	snprintf(c->head, sizeof(c->head), "%s", jstr(c->m, "head"));
	snprintf(c->base, sizeof(c->base), "%s", jstr(c->m, "base"));
	c->runs = calloc((size_t)cJSON_GetArraySize(runs) + 1, sizeof(*c->runs));
	if (!c->runs) {
		rc = -ENOMEM;
		goto fail;
	}
	cJSON_ArrayForEach(o, runs) {
		if (rc == 0 && run_of(c, jint(o, "run"))) {
			snprintf(err, errlen, "%s: run %d twice", ENGINE_CARRY_MANIFEST, jint(o, "run"));
			rc = -EINVAL;
		}
		if (rc == 0)
			rc = take_run(c, o, &c->runs[c->nruns++], err, errlen);
	}
	if (rc == 0)
		rc = take_registry(c, err, errlen);
	if (rc)
		goto fail;
	rc = take_bundle(c, path, sizeof(path), err, errlen);
	if (rc)
		goto fail;
	rc = repo_bundle_fetch(cfg->repo, packet__repo_trusted(e), path, c->head, cfg->base, err,
			       errlen);
	if (rc)
		goto fail;
	for (i = 0; i < c->nruns; i++)
		c->runs[i].r.item_id = 0;
	*out = c;
	return 0;
fail:
	if (!err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	engine_carry_free(c);
	return rc;
}

/* Where a carried line goes: "engine" (*run_id its restored run),
 * "external", or "imported" with why. */
static const char *line_source(const struct engine_carry *c, const cJSON *o, int64_t *run_id,
			       char *why, size_t size)
{
	const struct carry_run *cr;

	*run_id = 0;
	if (strcmp(jstr(o, "source"), "external") == 0)
		return "external";
	if (strcmp(jstr(o, "source"), "engine") != 0)
		snprintf(why, size, "imported: not an engine line");
	else if (!(cr = run_of(c, jint(o, "run"))) || strcmp(cr->r.kind, "recipe") != 0 ||
		 strcmp(jstr(o, "evidence"), cr->r.log_path) != 0)
		snprintf(why, size, "imported: its run and log did not come with it");
	else if (strcmp(jstr(o, "head"), c->head) != 0)
		snprintf(why, size, "imported: ran at %.12s, not at the imported head %.12s",
			 jstr(o, "head")[0] ? jstr(o, "head") : "(no head)", c->head);
	else if (strcmp(jstr(o, "recipe"), cr->r.name) != 0 ||
		 strcmp(jstr(o, "status"), run_status_name(cr->r.status)) != 0 ||
		 strcmp(cr->r.head, c->head) != 0)
		snprintf(why, size, "imported: its recipe, status or head is not its run's");
	else
		return *run_id = cr->r.id, "engine";
	return "imported";
}

int engine_carry_item(struct engine *e, struct engine_carry *c, const char *name, mode_t mode,
		      const struct pfs_caller *who, char *err, size_t errlen)
{
	struct item it = { 0 };
	char hex[65], why[160], extra[256];
	size_t i, len;
	int rc;

	err[0] = '\0';
	rc = packet__item_create(e, name, mode, who, c->head);
	if (rc) {
		snprintf(err, errlen, "%s: %s", name,
			 rc == -EEXIST ? "item exists" : rc == -EINVAL ? "invalid item name"
						       : strerror(-rc));
		return rc;
	}
	rc = store_item_get(e->store, name, &it);
	for (i = 0; rc == 0 && i < c->nruns; i++) {
		struct carry_run *cr = &c->runs[i];
		char *data = NULL;

		rc = read_hashed(c->dir, cr->r.log_path, &data, &len, hex);
		if (rc == 0 && strcmp(hex, cr->sha) != 0) {
			snprintf(err, errlen, "%s: changed while it was imported", cr->r.log_path);
			rc = -EINVAL;
		}
		cr->r.item_id = it.id;
		if (rc == 0)
			rc = store_carry_run(e->store, &cr->r, data, len);
		free(data);
		if (rc && !err[0])
			snprintf(err, errlen, "%s: %s", cr->r.log_path, strerror(-rc));
	}
	for (i = 0; rc == 0 && i < c->nlines; i++) {
		cJSON *o = cJSON_Parse(c->lines[i]);
		const char *source;
		int64_t run_id;

		why[0] = '\0';
		source = line_source(c, o, &run_id, why, sizeof(why));
		rc = store_carry_line(e->store, it.id, c->lines[i], source, run_id, why);
		c->counted += strcmp(source, "engine") == 0;
		c->imported += strcmp(source, "imported") == 0;
		cJSON_Delete(o);
		if (rc)
			snprintf(err, errlen, "validation/registry.jsonl: %s", strerror(-rc));
	}
	if (rc == 0) {
		const char *from = jstr(c->m, "item");

		/* The manifest's item name goes into JSON: only a name's characters. */
		if (strspn(from, "abcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(from) ||
		    strlen(from) > 64)
			from = "";
		snprintf(extra, sizeof(extra), ",\"from\":\"%s\",\"head\":\"%s\",\"runs\":%zu,"
			 "\"lines_counted\":%d,\"lines_imported\":%d", from, c->head,
			 c->nruns, c->counted, c->imported);
		pipeline_event(e->pl, it.id, name, "item_imported", extra);
	}
	item_clear(&it);
	return rc;
}

/* The word after "## KEY:" in the item's document doc, into out. */
static void doc_marker(struct engine *e, int64_t item_id, const char *doc, const char *key,
		       char *out, size_t size)
{
	char *text = NULL;
	size_t len;

	out[0] = '\0';
	if (store_doc_read(e->store, item_id, doc, &text, &len) == 0)
		recipe_doc_marker(text, len, key, out, size);
	free(text);
}

/* A verdict or assessment (what) as read from doc, bound to its head
 * there when the document still says what it said when it was made. */
static int judged(struct engine *e, const struct engine_carry *c, int64_t item_id,
		  const char *doc, const char *key, const char *what, char **value, char at[41])
{
	char head_key[32], word[32];
	const char *was = jstr(c->m, what);
	char *v;

	snprintf(head_key, sizeof(head_key), "%s_head", what);
	doc_marker(e, item_id, doc, key, word, sizeof(word));
	if (!(v = strdup(word)))
		return -ENOMEM;
	free(*value);
	*value = v;
	snprintf(at, 41, "%s", word[0] && strcmp(word, was) == 0 &&
				       is_commit(jstr(c->m, head_key)) ? jstr(c->m, head_key) : "");
	return 0;
}

static int set_str(char **field, const char *value)
{
	char *v = strdup(value);

	if (!v)
		return -ENOMEM;
	free(*field);
	*field = v;
	return 0;
}

int engine_carry_finish(struct engine *e, struct engine_carry *c, const char *name, char *err,
			size_t errlen)
{
	const char *state = jstr(c->m, "state"), *stage = jstr(c->m, "stage");
	struct item it = { 0 };
	enum item_state st;
	char why[256];
	int rc, kept;

	err[0] = '\0';
	rc = store_item_get(e->store, name, &it);
	if (rc == 0)
		rc = judged(e, c, it.id, "change-validation.md", "Verdict", "verdict", &it.verdict,
			    it.verdict_head);
	if (rc == 0)
		rc = judged(e, c, it.id, "review.md", "Assessment", "assessment", &it.assessment,
			    it.assessment_head);
	/* The states an item keeps when it comes in: not one in which
	 * something runs or waits to run. */
	kept = item_state_parse(state, &st) == 0 && st != ITEM_RUNNING && st != ITEM_QUEUED;
	if (rc == 0)
		rc = set_str(&it.title, jstr(c->m, "title"));
	if (rc == 0)
		rc = set_str(&it.stage, stage);
	if (rc == 0)
		rc = set_str(&it.disposition, jstr(c->m, "disposition"));
	/* The path the plan chose (SPEC §5 "Routes and templates"); absent
	 * from the exports of versions before it, which had none. */
	if (rc == 0)
		rc = set_str(&it.route, jstr(c->m, "route"));
	if (rc == 0)
		rc = set_str(&it.template, jstr(c->m, "template"));
	if (rc == 0)
		rc = set_str(&it.engine, jstr(c->m, "engine"));
	if (rc == 0)
		rc = set_str(&it.review_request, jstr(c->m, "review_request"));
	if (rc == 0 && kept) {
		it.state = st;
		rc = set_str(&it.last_error, jstr(c->m, "last_error"));
		it.stage_ok = jint(c->m, "stage_ok") != 0;
	} else if (rc == 0) {
		/* It was running or queued there: what ran came as far as it
		 * got, interrupted; nothing runs here until asked. */
		snprintf(why, sizeof(why), "imported while %s was %s: run it again", stage[0] ? stage
			 : "the item", state[0] ? state : "in an unknown state");
		it.state = stage[0] ? ITEM_FAILED : ITEM_NEW;
		rc = set_str(&it.last_error, stage[0] ? why : "");
		it.stage_ok = 0;
	}
	if (jint(c->m, "iteration") > 0)
		it.iteration = jint(c->m, "iteration");
	it.round = jint(c->m, "round");
	it.hold = jint(c->m, "hold") != 0;
	if (rc == 0)
		rc = store_item_update(e->store, &it);
	if (rc)
		snprintf(err, errlen, "%s: %s", name, strerror(-rc));
	item_clear(&it);
	return rc;
}

void engine_carry_describe(const struct engine_carry *c, struct engine_carry_about *out)
{
	const char *from = jstr(c->m, "item");

	memset(out, 0, sizeof(*out));
	if (engine_valid_item_name(from))
		snprintf(out->item, sizeof(out->item), "%s", from);
	snprintf(out->head, sizeof(out->head), "%s", c->head);
	out->runs = c->nruns;
	out->lines_counted = c->counted;
	out->lines_imported = c->imported;
}
