/*
 * carry.c - an item carried whole from one store to another (engine.h:
 * engine_carry_*; SPEC §6: "export writes the registry, the logs and a git
 * bundle of the branch; import restores them, and imported runs count only
 * when their log hashes verify and their head is the item's head").
 *
 * An export is a directory: the packet's files, which the CLI copies
 * through the namespace, and what engine_carry_export writes over and
 * beside them: every run's log as the store holds it (stages/..., and
 * validation/logs/...), validation/registry.jsonl as it is, the item
 * branch as a git bundle (ENGINE_CARRY_BUNDLE) and the manifest
 * (ENGINE_CARRY_MANIFEST), one JSON object:
 *
 *   {"format": 1, "packetfs": "0.1.0", "item": "fix-1",
 *    "branch": "packetfs/fix-1", "base": "<merge base>", "head": "<commit>",
 *    "bundle": ".packetfs/branch.bundle", "bundle_sha256": "...",
 *    "registry_sha256": "...",
 *    "stage": "validate", "stage_ok": 1, "state": "waiting", "iteration": 1,
 *    "title": "", "disposition": "", "last_error": "", "hold": 0,
 *    "verdict": "pass", "verdict_head": "<commit>", "assessment": "",
 *    "assessment_head": "", "route": "", "template": "change", "engine": "",
 *    "review_request": "",
 *    "runs": [{"run": 1, "kind": "stage", "name": "plan", "iteration": 1,
 *              "status": "succeeded", "command": "...", "log": "stages/1-plan.log",
 *              "sha256": "...", "size": 812, "note": "", "head": "...",
 *              "gpus": [], "executor": "local", "started_at": "...",
 *              "finished_at": "...", "duration_s": 0.1, "exit_code": 0,
 *              "signal": 0}, ...]}
 *
 * Import (carry_in.c) checks everything before it stores anything.
 *
 * The repository: git (repo_bundle.c) refuses one that belongs to another
 * user than the caller. The store's owner chose the store's repository at
 * `packetfs init`, and the daemon, running as that owner, works in it
 * whoever owns it (the run_as user, SPEC §5; libgit2's ownership check is
 * off, repo.c): so when the caller owns the store, git is told to trust
 * the repository (packet__repo_trusted). Anyone else - root exporting a
 * user's store among them - keeps git's check, and its refusal names the
 * owner: running git, whose configuration may name programs, in another
 * user's repository is that caller's own decision (their safe.directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "packet_int.h"
#include "packetfs-config.h"

/* Makes the directories above path (which holds a '/'). 0 or a negative
 * errno. */
static int mkdirs_above(char *path)
{
	char *slash = strrchr(path, '/');
	int rc;

	*slash = '\0';
	rc = util_mkdirs(path, 0777);
	*slash = '/';
	return rc;
}

/* Writes len bytes at data to dir/rel (tmp + fsync + rename), making the
 * directories above it. 0 or a negative errno. */
static int carry_write(const char *dir, const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX];
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	rc = mkdirs_above(path);
	if (rc == 0)
		rc = util_write_file(path, data ? data : "", len);
	return rc;
}

int packet__repo_trusted(struct engine *e)
{
	struct stat st;

	return stat(e->store_dir, &st) == 0 && st.st_uid == geteuid();
}

int packet__file_sha256(const char *path, char hex[65], uint64_t *size)
{
	struct util_sha *sha = util_sha_new();
	char chunk[65536];
	uint64_t total = 0;
	ssize_t n;
	int fd, rc = 0;

	if (!sha)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		rc = -errno;
	while (rc == 0 && (n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
		} else {
			util_sha_update(sha, chunk, (size_t)n);
			total += (uint64_t)n;
		}
	}
	if (fd >= 0)
		close(fd);
	util_sha_final(sha, hex);
	if (size)
		*size = total;
	return rc;
}

/* Appends run r's whole log as the store holds it to out (NUL-terminated).
 * 0 or a negative errno. */
static int log_read(struct store *s, const struct run *r, struct buf *out)
{
	char chunk[65536];
	uint64_t off = 0;
	ssize_t n;

	if (buf_puts(out, ""))
		return -ENOMEM;
	while ((n = store_log_read(s, r->id, off, chunk, sizeof(chunk))) > 0) {
		if (buf_append(out, chunk, (size_t)n))
			return -ENOMEM;
		off += (uint64_t)n;
	}
	return n < 0 ? (int)n : 0;
}

/* The runs of an item, copied (store_run_each's runs live during its
 * callback only). */
struct run_list {
	struct run *v;
	size_t n, cap;
	int rc;
};

static int keep_run(void *arg, const struct run *r)
{
	struct run_list *l = arg;
	struct run *c;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct run *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->rc = -ENOMEM;
			return 1;
		}
		l->v = v;
		l->cap = cap;
	}
	c = &l->v[l->n];
	*c = *r;
	c->name = strdup(r->name);
	c->command = strdup(r->command ? r->command : "");
	c->log_path = strdup(r->log_path);
	c->note = strdup(r->note ? r->note : "");
	c->gpus = strdup(r->gpus ? r->gpus : "[]");
	c->job_output = strdup(r->job_output ? r->job_output : "");
	l->n++;
	if (!c->name || !c->command || !c->log_path || !c->note || !c->gpus || !c->job_output) {
		l->rc = -ENOMEM;
		return 1;
	}
	return 0;
}

static void runs_free(struct run_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		run_clear(&l->v[i]);
	free(l->v);
}

/* The manifest's entry for run r, whose log has the sha256 hex. */
static cJSON *run_json(const struct run *r, const char *hex)
{
	cJSON *o = cJSON_CreateObject(), *gpus = cJSON_Parse(r->gpus);
	int ok = o != NULL;

	if (!cJSON_IsArray(gpus)) {
		cJSON_Delete(gpus);
		gpus = cJSON_CreateArray();
	}
	ok = ok && gpus && cJSON_AddItemToObject(o, "gpus", gpus);
	if (!ok)
		cJSON_Delete(gpus);
	ok = ok && cJSON_AddNumberToObject(o, "run", r->run_no) &&
	     cJSON_AddStringToObject(o, "kind", r->kind) &&
	     cJSON_AddStringToObject(o, "name", r->name) &&
	     cJSON_AddNumberToObject(o, "iteration", r->iteration) &&
	     cJSON_AddStringToObject(o, "status", run_status_name(r->status)) &&
	     cJSON_AddStringToObject(o, "command", r->command) &&
	     cJSON_AddStringToObject(o, "log", r->log_path) &&
	     cJSON_AddStringToObject(o, "sha256", hex) &&
	     cJSON_AddNumberToObject(o, "size", (double)r->log_size) &&
	     cJSON_AddStringToObject(o, "note", r->note) &&
	     cJSON_AddStringToObject(o, "head", r->head) &&
	     cJSON_AddStringToObject(o, "executor", r->executor) &&
	     cJSON_AddStringToObject(o, "started_at", r->started_at) &&
	     cJSON_AddStringToObject(o, "finished_at", r->finished_at) &&
	     cJSON_AddNumberToObject(o, "duration_s", r->duration_s) &&
	     (r->has_exit_code ? cJSON_AddNumberToObject(o, "exit_code", r->exit_code) != NULL
			       : cJSON_AddNullToObject(o, "exit_code") != NULL) &&
	     cJSON_AddNumberToObject(o, "signal", r->signal);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The item's fields of the manifest, added to m. 0 or -ENOMEM. */
static int item_json(cJSON *m, const struct item *it)
{
	return cJSON_AddStringToObject(m, "title", it->title) &&
	       cJSON_AddStringToObject(m, "state", item_state_name(it->state)) &&
	       cJSON_AddStringToObject(m, "stage", it->stage) &&
	       cJSON_AddNumberToObject(m, "stage_ok", it->stage_ok) &&
	       cJSON_AddNumberToObject(m, "iteration", it->iteration) &&
	       cJSON_AddNumberToObject(m, "round", it->round) &&
	       cJSON_AddStringToObject(m, "disposition", it->disposition) &&
	       cJSON_AddStringToObject(m, "last_error", it->last_error) &&
	       cJSON_AddNumberToObject(m, "hold", it->hold) &&
	       cJSON_AddStringToObject(m, "verdict", it->verdict) &&
	       cJSON_AddStringToObject(m, "verdict_head", it->verdict_head) &&
	       cJSON_AddStringToObject(m, "assessment", it->assessment) &&
	       cJSON_AddStringToObject(m, "assessment_head", it->assessment_head) &&
	       cJSON_AddStringToObject(m, "route", it->route) &&
	       cJSON_AddStringToObject(m, "template", it->template) &&
	       cJSON_AddStringToObject(m, "engine", it->engine) &&
	       cJSON_AddStringToObject(m, "review_request", it->review_request)
		       ? 0 : -ENOMEM;
}

/* Writes every run's log into dir and adds the runs to m. */
static int export_runs(struct engine *e, const struct item *it, const char *dir, cJSON *m,
		       char *err, size_t errlen)
{
	struct run_list l = { NULL, 0, 0, 0 };
	cJSON *runs = cJSON_AddArrayToObject(m, "runs");
	struct buf log = { NULL, 0, 0 };
	char hex[65];
	size_t i;
	int rc;

	if (!runs)
		return -ENOMEM;
	rc = store_run_each(e->store, it->id, NULL, RUN_ANY, keep_run, &l);
	if (rc == 0)
		rc = l.rc;
	for (i = 0; rc == 0 && i < l.n; i++) {
		cJSON *o;

		log.len = 0;
		rc = log_read(e->store, &l.v[i], &log);
		if (rc == 0) {
			/* What the log holds now: a run still going is
			 * exported as far as it got. */
			l.v[i].log_size = (int64_t)log.len;
			util_sha256_hex(log.data, log.len, hex);
			rc = carry_write(dir, l.v[i].log_path, log.data, log.len);
			if (rc)
				snprintf(err, errlen, "%s: %s", l.v[i].log_path, strerror(-rc));
		}
		if (rc == 0 && !(o = run_json(&l.v[i], hex)))
			rc = -ENOMEM;
		if (rc == 0 && !cJSON_AddItemToArray(runs, o)) {
			cJSON_Delete(o);
			rc = -ENOMEM;
		}
	}
	buf_free(&log);
	runs_free(&l);
	return rc;
}

/* Writes validation/registry.jsonl as stored into dir; its sha256 into hex. */
static int export_registry(struct engine *e, const struct item *it, const char *dir,
			   char hex[65])
{
	struct buf b = { NULL, 0, 0 };
	char **lines = NULL;
	size_t n, i;
	int rc = store_registry_raw_lines(e->store, it->id, &lines, &n);

	for (i = 0; rc == 0 && i < n; i++)
		rc = buf_puts(&b, lines[i]) ? -ENOMEM : buf_puts(&b, "\n") ? -ENOMEM : 0;
	strv_free(lines);
	if (rc == 0) {
		util_sha256_hex(b.data ? b.data : "", b.len, hex);
		rc = carry_write(dir, "validation/registry.jsonl", b.data, b.len);
	}
	buf_free(&b);
	return rc;
}

int engine_carry_export(struct engine *e, const char *name, const char *dir, char *err,
			size_t errlen)
{
	struct pfs_config *cfg = pipeline_config_get(e->pl);
	char bundle[PATH_MAX], base[41], head[41], reg[65], bsha[65], *text = NULL;
	struct item it = { 0 };
	cJSON *m = NULL;
	int rc;

	err[0] = '\0';
	rc = store_item_get(e->store, name, &it);
	if (rc == 0 && it.archived == ITEM_LEARNINGS)
		rc = -ENOENT;
	if (rc) {
		snprintf(err, errlen, "%s: %s", name, rc == -ENOENT ? "no such item" : strerror(-rc));
		goto out;
	}
	if (!cfg || !cfg->repo) {
		snprintf(err, errlen, "the store names no repository");
		rc = -ENOENT;
		goto out;
	}
	snprintf(bundle, sizeof(bundle), "%s/%s", dir, ENGINE_CARRY_BUNDLE);
	rc = mkdirs_above(bundle);
	if (rc == 0)
		rc = repo_bundle_create(cfg->repo, packet__repo_trusted(e), it.branch, cfg->base,
					bundle, base, head, err, errlen);
	else
		snprintf(err, errlen, "%s: %s", bundle, strerror(-rc));
	if (rc == 0) {
		rc = packet__file_sha256(bundle, bsha, NULL);
		if (rc)
			snprintf(err, errlen, "%s: %s", bundle, strerror(-rc));
	}
	if (rc)
		goto out;
	m = cJSON_CreateObject();
	rc = m && cJSON_AddNumberToObject(m, "format", ENGINE_CARRY_FORMAT) &&
	     cJSON_AddStringToObject(m, "packetfs", PACKETFS_VERSION) &&
	     cJSON_AddStringToObject(m, "item", it.name) &&
	     cJSON_AddStringToObject(m, "branch", it.branch) &&
	     cJSON_AddStringToObject(m, "base", base) && cJSON_AddStringToObject(m, "head", head) &&
	     cJSON_AddStringToObject(m, "bundle", ENGINE_CARRY_BUNDLE) &&
	     cJSON_AddStringToObject(m, "bundle_sha256", bsha)
		     ? item_json(m, &it) : -ENOMEM;
	if (rc == 0)
		rc = export_registry(e, &it, dir, reg);
	if (rc == 0)
		rc = cJSON_AddStringToObject(m, "registry_sha256", reg) ? 0 : -ENOMEM;
	if (rc == 0)
		rc = export_runs(e, &it, dir, m, err, errlen);
	if (rc == 0 && !(text = cJSON_Print(m)))
		rc = -ENOMEM;
	if (rc == 0) {
		size_t len = strlen(text);

		text[len] = '\n'; /* cJSON_Print's NUL: the text's last line ends */
		rc = carry_write(dir, ENGINE_CARRY_MANIFEST, text, len + 1);
	}
	if (rc && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
out:
	free(text);
	cJSON_Delete(m);
	item_clear(&it);
	return rc;
}
