/*
 * engine.c - the top of the engine: creating a store, and opening one as
 * an engine: the store, then the pipeline over it (pipeline.h), then the
 * namespace's tables (namespace.h), with the pipeline's hooks pointed at
 * the namespace; closing them in the reverse order.
 *
 * DESIGN: the daemon forks first, then calls engine_open (SQLite and
 * libgit2 are never carried across fork). FUSE worker threads call the
 * namespace functions (packet*.c) directly; they serialise on the store's
 * lock. Pipeline state lives on the pipeline's loop thread, started by
 * engine_start. Nothing below calls up into this file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "namespace.h"

/* The configuration JSON with "repo" set to repo (caller frees), the
 * rest of its bytes as written; NULL with the reason in err. */
static char *with_repo(const char *json, const char *repo, char *err, size_t errlen)
{
	cJSON *root = cJSON_Parse(json);
	char *out;

	if (!root || !cJSON_IsObject(root)) {
		snprintf(err, errlen, "pipeline: %s", root ? "not a JSON object" : "invalid JSON");
		cJSON_Delete(root);
		return NULL;
	}
	cJSON_Delete(root);
	/* The author's bytes kept (tabs, key order): only repo's value changes. */
	out = config_set_repo(json, repo);
	if (!out)
		snprintf(err, errlen, "pipeline: %s", strerror(ENOMEM));
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
		/* 0711: the run_as user (SPEC §5) reaches the worktrees under
		 * it, and nobody but the owner lists it. */
		if (mkdir(store, 0711) || chmod(store, 0711)) {
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
	rc = pipeline_config_check(cfg, err, errlen);
	if (rc)
		goto fail;
	/* The database is the store owner's alone (0600, whatever the
	 * umask), from its first byte: SQLite gives its -wal and -shm files
	 * the database's mode. */
	snprintf(path, sizeof(path), "%s/%s", store, STORE_DB_NAME);
	rc = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (rc < 0 || fchmod(rc, 0600) < 0) {
		rc = rc < 0 ? -errno : (close(rc), -errno);
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto fail;
	}
	close(rc);
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
	/* The store's signing key pair (engine.h, ENGINE_SIGNING_KEY). */
	{
		char pub[4096];

		snprintf(path, sizeof(path), "%s/%s", store, ENGINE_SIGNING_KEY);
		snprintf(pub, sizeof(pub), "%s/%s", store, ENGINE_SIGNING_PUB);
		rc = sign_key_make(path, pub);
		if (rc) {
			snprintf(err, errlen, "%s: cannot make the signing key: %s", path,
				 strerror(-rc));
			goto fail;
		}
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
	snprintf(path, sizeof(path), "%s/%s", store, ENGINE_SIGNING_KEY);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", store, ENGINE_SIGNING_PUB);
	unlink(path);
	if (made_dir)
		rmdir(store);
	return rc;
}

/* ---- the pipeline's hooks ---- */

/* The pipeline changed a path on its own: tell the watcher. */
static void on_pipeline_changed(void *arg, const char *item, const char *rel,
				enum pipeline_change what)
{
	static const enum engine_change map[] = {
		[PIPELINE_MODIFIED] = ENGINE_MODIFIED,
		[PIPELINE_CREATED] = ENGINE_CREATED,
		[PIPELINE_ARCHIVED] = ENGINE_ARCHIVED,
		[PIPELINE_TIMES] = ENGINE_TIMES,
	};

	engine_changed(arg, item, rel, map[what]);
}

/* The pipeline wrote a document to the store: open copies take it. */
static void on_pipeline_doc_written(void *arg, int64_t item_id, const char *rel)
{
	engine_doc_refresh(arg, item_id, rel);
}

/* ---- open and close ---- */

/* The database and its -wal and -shm files are readable and writable by
 * the store owner alone (0600: SPEC §5, run_as), also in a store made
 * before packetfs set it so. Best effort: a daemon that may not chmod them
 * leaves them as they are. */
static void private_db(const char *dir)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char path[4096];
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s%s", dir, STORE_DB_NAME, suffix[i]);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077))
			chmod(path, st.st_mode & 0700);
	}
}

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
	if (flock(e->lock_fd, LOCK_EX | LOCK_NB) == 0) {
		private_db(e->store_dir);
		return 0;
	}
	snprintf(path, sizeof(path), "%s", e->store_dir);
	if (store_open(e->store_dir, 0, 1, &e->store, NULL, 0) == 0) {
		/* The pid only completes the message: none recorded, or unreadable, names
		 * none. */
		(void)store_meta_get(e->store, "daemon_pid", &pid);
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
	struct pipeline_options po = {0};
	struct engine *e;
	struct stat sb;
	char pidtext[32];
	int rc;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->lock_fd = -1;
	pthread_mutex_init(&e->files_lock, NULL);
	pthread_rwlock_init(&e->ns_lock, NULL);
	pthread_mutex_init(&e->digest_lock, NULL);
	view_sizes_init(e);
	pthread_mutex_init(&e->record_lock, NULL);
	pthread_mutex_init(&e->refusal_lock, NULL);
	pthread_mutex_init(&e->tmp_lock, NULL);
	pthread_mutex_init(&e->remove_lock, NULL);
	packet__who_init(e);
	pthread_mutex_init(&e->owed_lock, NULL);
	pthread_cond_init(&e->owed_cond, NULL);
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
	/* The store's group: the group of the store directory. */
	if (stat(e->store_dir, &sb) == 0)
		e->gid = sb.st_gid;
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
	po.store = e->store;
	po.store_dir = e->store_dir;
	po.mountpoint = e->mountpoint;
	po.readonly = e->readonly;
	po.hooks.changed = on_pipeline_changed;
	po.hooks.doc_written = on_pipeline_doc_written;
	po.hooks.arg = e;
	rc = pipeline_open(&po, &e->pl, err, errlen);
	if (rc)
		goto fail;
	if (!e->readonly) {
		snprintf(pidtext, sizeof(pidtext), "%d", (int)getpid());
		/* A hint for the message of a second packetfs on the store (above); the
		 * mount works without it. */
		(void)store_meta_set(e->store, "daemon_pid", pidtext);
		rc = pipeline_recover(e->pl);
		if (rc) {
			snprintf(err, errlen, "crash recovery failed: %s", strerror(-rc));
			goto fail;
		}
	}
	*out = e;
	return 0;
fail:
	engine_close(e);
	return rc;
}

int engine_start(struct engine *e)
{
	return pipeline_start(e->pl);
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	pipeline_close(e->pl);
	view_digests_free(e);
	pthread_mutex_destroy(&e->digest_lock);
	view_sizes_free(e);
	pthread_mutex_destroy(&e->record_lock);
	packet__refusals_free(e);
	pthread_mutex_destroy(&e->refusal_lock);
	packet__tmps_free(e);
	pthread_mutex_destroy(&e->tmp_lock);
	packet__removers_free(e);
	pthread_mutex_destroy(&e->remove_lock);
	pthread_cond_destroy(&e->owed_cond);
	pthread_mutex_destroy(&e->owed_lock);
	packet__who_free(e);
	store_close(e->store);
	if (e->lock_fd >= 0)
		close(e->lock_fd);
	pthread_mutex_destroy(&e->files_lock);
	pthread_rwlock_destroy(&e->ns_lock);
	free(e->store_dir);
	free(e->mountpoint);
	free(e);
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

int engine_run_program(char *const *argv, int timeout_ms, int quiet)
{
	struct capture c = { 0 };
	int r;

	c.argv = argv;
	c.err = quiet ? PROC_OUT_NULL : PROC_OUT_INHERIT;
	c.timeout_ms = timeout_ms;
	c.max = 64 * 1024;
	r = capture_exec(&c);
	if (r == 0 && !quiet && c.len) {
		fwrite(c.out, 1, c.len, stdout);
		fflush(stdout);
	}
	free(c.out);
	if (r)
		return r;
	return WIFEXITED(c.status) ? WEXITSTATUS(c.status) : 128 + WTERMSIG(c.status);
}
