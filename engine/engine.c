/*
 * engine.c - opening and closing a store, the loop thread, and the shared
 * tables of engine_int.h (configuration, active runs, events).
 *
 * DESIGN: the daemon forks first, then calls engine_open (SQLite and
 * libgit2 are never carried across fork). FUSE worker threads call the
 * namespace functions of packet.c directly; they serialise on the store's
 * lock. Pipeline state lives on one libuv loop thread (pipe.c): a FUSE
 * thread that needs it (a ctl command, rmdir of an item) queues a struct
 * engine_cmd and waits on its condition variable; uv_async_send wakes the
 * loop, whose callback drains the whole queue (sends coalesce). The loop
 * thread never waits on a FUSE thread, so no cycle can form.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine_int.h"
#include "repo.h"
#include "runner.h"

int engine_valid_item_name(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > ITEM_NAME_MAX)
		return 0;
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (i = 1; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/* ---- configuration ---- */

/* Whether program names an executable file (absolute, or found on PATH). */
static int program_exists(const char *program)
{
	const char *path = getenv("PATH"), *p, *colon;
	char full[PATH_MAX];

	if (strchr(program, '/'))
		return access(program, X_OK) == 0;
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *colon ? colon + 1 : colon) {
		colon = strchrnul(p, ':');
		snprintf(full, sizeof(full), "%.*s/%s", (int)(colon - p), p, program);
		if (access(full, X_OK) == 0)
			return 1;
	}
	return 0;
}

/*
 * What config_parse cannot see: the repository and base exist, the recipes
 * directory exists, every stage program can be run. -EINVAL with why.
 */
static int config_check_world(const struct pfs_config *cfg, char *err, size_t errlen)
{
	struct stat st;
	size_t i;
	int rc;

	rc = repo_check(cfg->repo, cfg->base, err, errlen);
	if (rc)
		return rc == -ENOENT ? -EINVAL : rc;
	if (cfg->recipes_dir && (stat(cfg->recipes_dir, &st) || !S_ISDIR(st.st_mode))) {
		snprintf(err, errlen, "recipes_dir: %s: not a directory", cfg->recipes_dir);
		return -EINVAL;
	}
	for (i = 0; i < cfg->nstages; i++) {
		if (cfg->stages[i].run && !program_exists(cfg->stages[i].run[0])) {
			snprintf(err, errlen, "stages[%zu].run: %s: no such executable", i,
				 cfg->stages[i].run[0]);
			return -EINVAL;
		}
	}
	return 0;
}

/* The configuration JSON with "repo" set to repo (caller frees). */
static char *with_repo(const char *json, const char *repo, char *err, size_t errlen)
{
	cJSON *root = cJSON_Parse(json);
	char *out;

	if (!root || !cJSON_IsObject(root)) {
		snprintf(err, errlen, "pipeline: %s", root ? "not a JSON object" : "invalid JSON");
		cJSON_Delete(root);
		return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(root, "repo");
	cJSON_AddStringToObject(root, "repo", repo);
	out = cJSON_Print(root);
	cJSON_Delete(root);
	return out;
}

int engine_init_store(const char *store, const char *repo, const char *pipeline_json, char *err,
		      size_t errlen)
{
	struct pfs_config *cfg = NULL;
	struct store *s = NULL;
	char *json = NULL, path[4096];
	int rc, made_dir = 0;
	struct stat st;

	if (repo_global_init()) {
		snprintf(err, errlen, "libgit2: cannot initialise");
		return -EIO;
	}
	if (stat(store, &st) == 0) {
		DIR *d;
		struct dirent *de;
		int empty = 1;

		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: exists and is not a directory", store);
			return -EEXIST;
		}
		d = opendir(store);
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = 0;
		if (d)
			closedir(d);
		if (!empty) {
			snprintf(err, errlen, "%s: directory is not empty", store);
			return -EEXIST;
		}
	} else {
		if (mkdir(store, 0700)) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", store, strerror(errno));
			return rc;
		}
		made_dir = 1;
	}
	if (pipeline_json)
		json = with_repo(pipeline_json, repo, err, errlen);
	else
		json = config_default_json(repo, "main", NULL);
	if (!json) {
		rc = pipeline_json ? -EINVAL : -ENOMEM;
		goto fail;
	}
	rc = config_parse(json, strlen(json), &cfg, err, errlen);
	if (rc)
		goto fail;
	rc = config_check_world(cfg, err, errlen);
	if (rc)
		goto fail;
	rc = store_open(store, 1, 0, &s, err, errlen);
	if (rc)
		goto fail;
	rc = store_meta_set(s, "pipeline", json);
	if (rc == 0) {
		char now[32];

		util_rfc3339(util_now_ns(), now);
		rc = store_meta_set(s, "created_at", now);
	}
	store_close(s);
	s = NULL;
	if (rc) {
		snprintf(err, errlen, "%s: cannot write the store: %s", store, strerror(-rc));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/worktrees", store);
	if (mkdir(path, 0755)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	config_free(cfg);
	free(json);
	return 0;
fail:
	config_free(cfg);
	free(json);
	snprintf(path, sizeof(path), "%s/%s", store, STORE_DB_NAME);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s-wal", store, STORE_DB_NAME);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s-shm", store, STORE_DB_NAME);
	unlink(path);
	snprintf(path, sizeof(path), "%s/worktrees", store);
	rmdir(path);
	if (made_dir)
		rmdir(store);
	return rc;
}

/*
 * Configurations are immutable and rare to change: a replaced one is kept
 * on e->old_cfgs until engine_close, so a reader may use the pointer it got
 * from engine_config_get for as long as the engine is open.
 */
struct pfs_config *engine_config_get(struct engine *e)
{
	struct pfs_config *cfg;

	pthread_mutex_lock(&e->cfg_lock);
	cfg = e->cfg;
	pthread_mutex_unlock(&e->cfg_lock);
	return cfg;
}

/*
 * The catalog is read under cfg_lock: a stat of recipes_dir and of each
 * recipe file tells whether it is still fresh, and only a change reads it
 * again. Holding the lock while it loads keeps two threads from loading
 * the same change twice; a load reads a few small files.
 */
void engine_recipes_refresh(struct engine *e)
{
	const char *dir = e->cfg ? e->cfg->recipes_dir : NULL;
	struct recipe_catalog cat;
	int rc;

	if (recipe_catalog_fresh(dir, &e->recipes))
		return;
	rc = recipe_catalog_load(dir, &cat);
	if (rc == -ENOMEM)
		return;
	recipe_catalog_free(&e->recipes);
	e->recipes = cat;
}

/* Installs cfg as the one in force (cfg_lock held); keeps the old one. */
static int config_install(struct engine *e, struct pfs_config *cfg)
{
	if (e->cfg) {
		struct pfs_config **v = realloc(e->old_cfgs, (e->nold_cfgs + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->old_cfgs = v;
		v[e->nold_cfgs++] = e->cfg;
	}
	e->cfg = cfg;
	return 0;
}

int engine_config_set(struct engine *e, const char *json, size_t len, char *err, size_t errlen)
{
	struct pfs_config *cfg = NULL;
	struct recipe_catalog cat = {0};
	char *copy;
	int rc;

	rc = config_parse(json, len, &cfg, err, errlen);
	if (rc == 0) {
		rc = config_check_world(cfg, err, errlen);
		if (rc)
			config_free(cfg);
	}
	if (rc) {
		char *q = NULL;
		cJSON *j = cJSON_CreateString(err);
		char extra[1200];

		q = j ? cJSON_PrintUnformatted(j) : NULL;
		cJSON_Delete(j);
		snprintf(extra, sizeof(extra), ",\"error\":%s", q ? q : "\"\"");
		free(q);
		engine_event(e, 0, NULL, "config_rejected", extra);
		return rc;
	}
	copy = strndup(json, len);
	if (!copy) {
		config_free(cfg);
		return -ENOMEM;
	}
	recipe_catalog_load(cfg->recipes_dir, &cat);
	pthread_mutex_lock(&e->cfg_lock);
	rc = e->readonly ? -EROFS : store_meta_set(e->store, "pipeline", copy);
	if (rc == 0)
		rc = config_install(e, cfg);
	if (rc == 0) {
		free(e->cfg_json);
		e->cfg_json = copy;
		recipe_catalog_free(&e->recipes);
		e->recipes = cat;
	}
	pthread_mutex_unlock(&e->cfg_lock);
	if (rc) {
		snprintf(err, errlen, "cannot store the configuration: %s", strerror(-rc));
		config_free(cfg);
		free(copy);
		recipe_catalog_free(&cat);
	} else {
		engine_event(e, 0, NULL, "config_changed", "");
	}
	return rc;
}

/* ---- events ---- */

void engine_event(struct engine *e, int64_t item_id, const char *item, const char *type,
		  const char *extra_json)
{
	struct buf b;
	char ts[32];
	char *q = NULL;
	cJSON *s;

	if (e->readonly)
		return;
	buf_init(&b);
	util_rfc3339(util_now_ns(), ts);
	buf_printf(&b, "{\"ts\":\"%s\"", ts);
	if (item) {
		s = cJSON_CreateString(item);
		q = s ? cJSON_PrintUnformatted(s) : NULL;
		cJSON_Delete(s);
		buf_printf(&b, ",\"item\":%s", q ? q : "\"\"");
		free(q);
	}
	buf_printf(&b, ",\"type\":\"%s\"%s}", type, extra_json ? extra_json : "");
	if (b.data && store_event_add(e->store, item_id, b.data) == 0) {
		engine_changed(e, NULL, "events", ENGINE_MODIFIED);
		if (item) {
			/* Events mark changes of the item's state: its status too. */
			engine_changed(e, item, "events", ENGINE_MODIFIED);
			engine_changed(e, item, "status", ENGINE_MODIFIED);
			engine_changed(e, item, "status.json", ENGINE_MODIFIED);
			/* A run queued, started or ended: the answer of a request
			 * for it (record.c) moved on. */
			if (strncmp(type, "recipe_", 7) == 0 || strncmp(type, "record_", 7) == 0)
				engine_changed(e, item, "validation/record", ENGINE_MODIFIED);
		}
	}
	buf_free(&b);
}

/* ---- watching ---- */

void engine_watch(struct engine *e, engine_change_fn fn, void *arg)
{
	e->watch_fn = fn;
	e->watch_arg = arg;
}

void engine_changed(struct engine *e, const char *item, const char *rel, enum engine_change what)
{
	char path[PATH_MAX];
	int n;

	if (!e->watch_fn)
		return;
	if (item)
		n = snprintf(path, sizeof(path), "/%s/%s", item, rel);
	else
		n = snprintf(path, sizeof(path), "/%s", rel);
	if (n > 0 && (size_t)n < sizeof(path))
		e->watch_fn(e->watch_arg, path, what);
}

/* ---- active runs ---- */

void engine_active_add(struct engine *e, const struct active_run *r)
{
	pthread_mutex_lock(&e->active_lock);
	if (e->nactive < ACTIVE_MAX)
		e->active[e->nactive++] = *r;
	pthread_mutex_unlock(&e->active_lock);
}

void engine_active_remove(struct engine *e, int64_t run_id)
{
	int i;

	pthread_mutex_lock(&e->active_lock);
	for (i = 0; i < e->nactive; i++) {
		if (e->active[i].run_id == run_id) {
			e->active[i] = e->active[--e->nactive];
			break;
		}
	}
	pthread_mutex_unlock(&e->active_lock);
}

void engine_active_stage_of(struct engine *e, pid_t pid, char *out, size_t size)
{
	pid_t pgid = pid > 0 ? getpgid(pid) : -1;
	int i;

	out[0] = '\0';
	if (pgid <= 0)
		return;
	pthread_mutex_lock(&e->active_lock);
	for (i = 0; i < e->nactive; i++) {
		if (e->active[i].pgid == pgid) {
			snprintf(out, size, "%s", e->active[i].name);
			break;
		}
	}
	pthread_mutex_unlock(&e->active_lock);
}

void engine_active_gpus(struct engine *e, int64_t item_id, char *out, size_t size)
{
	size_t len = 0;
	int i, j;

	out[0] = '\0';
	pthread_mutex_lock(&e->active_lock);
	for (i = 0; i < e->nactive; i++) {
		if (e->active[i].item_id != item_id)
			continue;
		for (j = 0; j < e->active[i].ngpus && len + 8 < size; j++)
			len += (size_t)snprintf(out + len, size - len, "%s%d", len ? "," : "",
						e->active[i].gpus[j]);
	}
	pthread_mutex_unlock(&e->active_lock);
}

void engine_active_running(struct engine *e, int64_t item_id, char *out, size_t size)
{
	int64_t now = util_now_ns();
	size_t len = 0;
	int i;

	out[0] = '\0';
	pthread_mutex_lock(&e->active_lock);
	for (i = 0; i < e->nactive && len + 80 < size; i++) {
		if (e->active[i].item_id != item_id)
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s%s (%lld s)", len ? ", " : "",
					e->active[i].name,
					(long long)((now - e->active[i].start_ns) / 1000000000));
	}
	pthread_mutex_unlock(&e->active_lock);
}

int engine_active_item(struct engine *e, int64_t item_id)
{
	int i, found = 0;

	pthread_mutex_lock(&e->active_lock);
	for (i = 0; i < e->nactive; i++)
		if (e->active[i].item_id == item_id)
			found = 1;
	pthread_mutex_unlock(&e->active_lock);
	return found;
}

/* ---- open and close ---- */

static int take_lock(struct engine *e, char *err, size_t errlen)
{
	char path[4096];
	char *pid = NULL;

	snprintf(path, sizeof(path), "%s/%s", e->store_dir, STORE_DB_NAME);
	e->lock_fd = open(path, O_RDWR | O_CLOEXEC);
	if (e->lock_fd < 0) {
		int rc = -errno;

		snprintf(err, errlen, "%s: %s", path,
			 errno == ENOENT ? "no packetfs store here" : strerror(errno));
		return rc;
	}
	if (flock(e->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	snprintf(path, sizeof(path), "%s", e->store_dir);
	if (store_open(e->store_dir, 0, 1, &e->store, NULL, 0) == 0) {
		store_meta_get(e->store, "daemon_pid", &pid);
		store_close(e->store);
		e->store = NULL;
	}
	snprintf(err, errlen, "%s: store is in use by another packetfs process%s%s%s", path,
		 pid ? " (pid " : "", pid ? pid : "", pid ? ")" : "");
	free(pid);
	close(e->lock_fd);
	e->lock_fd = -1;
	return -EBUSY;
}

int engine_open(const struct engine_options *opt, struct engine **out, char *err, size_t errlen)
{
	struct engine *e;
	char *json = NULL;
	char pidtext[32];
	int rc;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->lock_fd = -1;
	pthread_mutex_init(&e->cfg_lock, NULL);
	pthread_mutex_init(&e->files_lock, NULL);
	pthread_rwlock_init(&e->ns_lock, NULL);
	pthread_mutex_init(&e->active_lock, NULL);
	pthread_mutex_init(&e->q_lock, NULL);
	pthread_mutex_init(&e->digest_lock, NULL);
	pthread_mutex_init(&e->record_lock, NULL);
	e->readonly = opt->readonly;
	e->uid = getuid();
	e->gid = getgid();
	e->start_ns = util_now_ns();
	e->store_dir = realpath(opt->store, NULL);
	if (!e->store_dir) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", opt->store, strerror(errno));
		goto fail;
	}
	if (opt->mountpoint) {
		e->mountpoint = strdup(opt->mountpoint);
		if (!e->mountpoint) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	rc = repo_global_init();
	if (rc) {
		snprintf(err, errlen, "libgit2: cannot initialise");
		goto fail;
	}
	if (!e->readonly) {
		rc = take_lock(e, err, errlen);
		if (rc)
			goto fail;
	}
	rc = store_open(e->store_dir, 0, e->readonly, &e->store, err, errlen);
	if (rc)
		goto fail;
	rc = store_meta_get(e->store, "pipeline", &json);
	if (rc) {
		snprintf(err, errlen, "%s: store has no pipeline configuration", e->store_dir);
		goto fail;
	}
	rc = config_parse(json, strlen(json), &e->cfg, err, errlen);
	if (rc)
		goto fail;
	e->cfg_json = json;
	json = NULL;
	recipe_catalog_load(e->cfg->recipes_dir, &e->recipes);
	if (!e->readonly) {
		snprintf(pidtext, sizeof(pidtext), "%d", (int)getpid());
		store_meta_set(e->store, "daemon_pid", pidtext);
		rc = pipe_recover(e);
		if (rc) {
			snprintf(err, errlen, "crash recovery failed: %s", strerror(-rc));
			goto fail;
		}
	}
	*out = e;
	return 0;
fail:
	free(json);
	engine_close(e);
	return rc;
}

static void on_wake(uv_async_t *h)
{
	struct engine *e = h->data;
	struct engine_cmd *cmd;
	int stopping;

	for (;;) {
		pthread_mutex_lock(&e->q_lock);
		cmd = e->q_head;
		if (cmd) {
			e->q_head = cmd->next;
			if (!e->q_head)
				e->q_tail = NULL;
		}
		stopping = e->stopping;
		pthread_mutex_unlock(&e->q_lock);
		if (!cmd)
			break;
		cmd->result = stopping ? -ESHUTDOWN
			      : strncmp(cmd->verb, "record", 6) == 0 ? pipe_record_command(e->pipe, cmd)
								     : pipe_command(e->pipe, cmd);
		pthread_mutex_lock(&e->q_lock);
		cmd->done = 1;
		pthread_cond_broadcast(&cmd->cond);
		pthread_mutex_unlock(&e->q_lock);
	}
	if (stopping) {
		pipe_shutdown(e->pipe);
		uv_close((uv_handle_t *)&e->wake, NULL);
	}
}

static void *loop_main(void *arg)
{
	struct engine *e = arg;

	pipe_reattach(e->pipe);
	pipe_resume(e->pipe);
	uv_run(&e->loop, UV_RUN_DEFAULT);
	return NULL;
}

int engine_start(struct engine *e)
{
	int rc;

	if (e->readonly || e->started)
		return -EINVAL;
	/* Orphans of stage and recipe processes come to us, not to init, so
	 * that cancel and the end of a run reach them (see runner.h). Without
	 * it runs still work; a descendant that escaped can survive its run. */
	runner_set_subreaper();
	rc = uv_loop_init(&e->loop);
	if (rc)
		return rc;
	rc = uv_async_init(&e->loop, &e->wake, on_wake);
	if (rc)
		goto fail_loop;
	e->wake.data = e;
	rc = pipe_new(e, &e->pipe);
	if (rc)
		goto fail_async;
	rc = -pthread_create(&e->thread, NULL, loop_main, e);
	if (rc)
		goto fail_pipe;
	e->started = 1;
	return 0;
fail_pipe:
	pipe_free(e->pipe);
	e->pipe = NULL;
fail_async:
	uv_close((uv_handle_t *)&e->wake, NULL);
	uv_run(&e->loop, UV_RUN_DEFAULT);
fail_loop:
	uv_loop_close(&e->loop);
	return rc;
}

int engine_call(struct engine *e, struct engine_cmd *cmd)
{
	if (!e->started)
		return -ENOTCONN;
	pthread_cond_init(&cmd->cond, NULL);
	cmd->done = 0;
	cmd->next = NULL;
	cmd->msg[0] = '\0';
	pthread_mutex_lock(&e->q_lock);
	if (e->stopping) {
		pthread_mutex_unlock(&e->q_lock);
		pthread_cond_destroy(&cmd->cond);
		return -ESHUTDOWN;
	}
	if (e->q_tail)
		e->q_tail->next = cmd;
	else
		e->q_head = cmd;
	e->q_tail = cmd;
	uv_async_send(&e->wake);
	while (!cmd->done)
		pthread_cond_wait(&cmd->cond, &e->q_lock);
	pthread_mutex_unlock(&e->q_lock);
	pthread_cond_destroy(&cmd->cond);
	return cmd->result;
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	if (e->started) {
		pthread_mutex_lock(&e->q_lock);
		e->stopping = 1;
		uv_async_send(&e->wake);
		pthread_mutex_unlock(&e->q_lock);
		pthread_join(e->thread, NULL);
		pipe_free(e->pipe);
		uv_loop_close(&e->loop);
	}
	recipe_catalog_free(&e->recipes);
	config_free(e->cfg);
	while (e->nold_cfgs > 0)
		config_free(e->old_cfgs[--e->nold_cfgs]);
	free(e->old_cfgs);
	free(e->cfg_json);
	view_digests_free(e);
	pthread_mutex_destroy(&e->digest_lock);
	pthread_mutex_destroy(&e->record_lock);
	store_close(e->store);
	if (e->lock_fd >= 0)
		close(e->lock_fd);
	pthread_mutex_destroy(&e->cfg_lock);
	pthread_mutex_destroy(&e->files_lock);
	pthread_rwlock_destroy(&e->ns_lock);
	pthread_mutex_destroy(&e->active_lock);
	pthread_mutex_destroy(&e->q_lock);
	free(e->store_dir);
	free(e->mountpoint);
	free(e);
}

const char *engine_mountpoint(const struct engine *e)
{
	return e->mountpoint;
}

pid_t engine_daemon_pid(struct engine *e)
{
	char *v = NULL;
	pid_t pid = 0;

	if (store_meta_get(e->store, "daemon_pid", &v) == 0)
		pid = (pid_t)atoi(v);
	free(v);
	return pid;
}

/* Sends a recorder command (verb "record" or "record-cancel") for item to
 * the loop thread; 0 or a negative errno with the reason in why. */
static int record_call(struct engine *e, struct engine_cmd *cmd, const char *item,
		       const char *verb, char *why, size_t whysize)
{
	int rc;

	snprintf(cmd->item, sizeof(cmd->item), "%s", item);
	snprintf(cmd->verb, sizeof(cmd->verb), "%s", verb);
	rc = engine_call(e, cmd);
	if (rc == -ENOTCONN || rc == -ESHUTDOWN)
		snprintf(cmd->msg, sizeof(cmd->msg), "the pipeline is not running");
	snprintf(why, whysize, "%s", rc ? cmd->msg : "");
	return rc == -ESHUTDOWN ? -ENOTCONN : rc;
}

int engine_record(struct engine *e, const char *item, const struct record_req *req,
		  int64_t *run_id, int *run_no, char *log, size_t logsize, char *why, size_t whysize)
{
	struct engine_cmd cmd;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	cmd.payload = req;
	rc = record_call(e, &cmd, item, "record", why, whysize);
	if (rc)
		return rc;
	*run_id = cmd.run_id;
	*run_no = cmd.run_no;
	snprintf(log, logsize, "%s", cmd.log);
	return 0;
}

int engine_record_cancel(struct engine *e, const char *item, int64_t run_id, char *why,
			 size_t whysize)
{
	struct engine_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.run_id = run_id;
	return record_call(e, &cmd, item, "record-cancel", why, whysize);
}
