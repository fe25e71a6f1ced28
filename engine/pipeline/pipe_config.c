/*
 * pipe_config.c - the configuration in force (SPEC §5) and its recipe
 * catalog (SPEC §6): checking a new one against the world, storing it and
 * swapping it in.
 *
 * Configurations are immutable and rare to change: a replaced one is kept
 * on pl->old_cfgs until pipeline_close, so a reader may use the pointer it
 * got from pipeline_config_get for as long as the pipeline is open. The
 * catalog is read under cfg_lock: a stat of recipes_dir and of each recipe
 * file tells whether it is still fresh, and only a change reads it again.
 * Holding the lock while it loads keeps two threads from loading the same
 * change twice; a load reads a few small files.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pipe_int.h"

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

/* run_as (SPEC §5) names a user of this machine, and this process may run
 * programs as it: it is root, or it is that user. 0 or -EINVAL with err
 * set. */
static int check_run_as(const char *name, char *err, size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	int r = getpwnam_r(name, &pw, buf, sizeof(buf), &res);

	if (r || !res) {
		snprintf(err, errlen, "run_as: %s: %s", name,
			 r && r != ENOENT && r != ESRCH ? strerror(r) : "no such user");
		return -EINVAL;
	}
	if (geteuid() != 0 && pw.pw_uid != geteuid()) {
		snprintf(err, errlen, "run_as: %s: only a daemon running as root runs stages as "
			 "another user (this one runs as uid %d)", name, (int)geteuid());
		return -EINVAL;
	}
	return 0;
}

int pipeline_config_check(const struct pfs_config *cfg, char *err, size_t errlen)
{
	struct stat st;
	size_t i, k;
	int rc;

	if (cfg->run_as && (rc = check_run_as(cfg->run_as, err, errlen)))
		return rc;
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
	for (i = 0; i < cfg->ntemplates; i++) {
		const struct pfs_config *path = cfg->templates[i].path;

		for (k = 1; k < path->nstages; k++) {
			if (path->stages[k].run && !program_exists(path->stages[k].run[0])) {
				snprintf(err, errlen, "templates.%s.stages[%zu].run: %s: no such "
					 "executable", cfg->templates[i].name, k - 1,
					 path->stages[k].run[0]);
				return -EINVAL;
			}
		}
	}
	for (i = 0; i < cfg->nnotify; i++) {
		if (!program_exists(cfg->notify[i].run[0])) {
			snprintf(err, errlen, "notify[%zu].run: %s: no such executable", i,
				 cfg->notify[i].run[0]);
			return -EINVAL;
		}
	}
	return 0;
}

struct pfs_config *pipeline_config_get(struct pipeline *pl)
{
	struct pfs_config *cfg;

	pthread_mutex_lock(&pl->cfg_lock);
	cfg = pl->cfg;
	pthread_mutex_unlock(&pl->cfg_lock);
	return cfg;
}

struct pfs_config *pipeline_config_item(struct pipeline *pl, const struct item *it)
{
	struct pfs_config *cfg = pipeline_config_get(pl);
	const struct pfs_config *path = it && it->template ? config_path(cfg, it->template) : NULL;

	/* Configurations are never modified once parsed (config.h). */
	return path ? (struct pfs_config *)path : cfg;
}

int pipeline_config_json(struct pipeline *pl, struct buf *out)
{
	int rc;

	pthread_mutex_lock(&pl->cfg_lock);
	rc = buf_puts(out, pl->cfg_json);
	if (rc == 0 && (out->len == 0 || out->data[out->len - 1] != '\n'))
		rc = buf_puts(out, "\n");
	pthread_mutex_unlock(&pl->cfg_lock);
	return rc;
}

const struct recipe_catalog *pipeline_recipes_hold(struct pipeline *pl)
{
	const char *dir;
	struct recipe_catalog cat;
	int rc;

	pthread_mutex_lock(&pl->cfg_lock);
	dir = pl->cfg ? pl->cfg->recipes_dir : NULL;
	if (recipe_catalog_fresh(dir, &pl->recipes))
		return &pl->recipes;
	rc = recipe_catalog_load(dir, &cat);
	if (rc != -ENOMEM) {
		recipe_catalog_free(&pl->recipes);
		pl->recipes = cat;
	}
	return &pl->recipes;
}

void pipeline_recipes_release(struct pipeline *pl)
{
	pthread_mutex_unlock(&pl->cfg_lock);
}

/* Installs cfg as the one in force (cfg_lock held); keeps the old one. */
static int config_install(struct pipeline *pl, struct pfs_config *cfg)
{
	assert(util_mutex_held(&pl->cfg_lock));
	if (pl->cfg) {
		struct pfs_config **v = realloc(pl->old_cfgs, (pl->nold_cfgs + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pl->old_cfgs = v;
		v[pl->nold_cfgs++] = pl->cfg;
	}
	/* Published for readers without the lock too (pipe__notify). */
	__atomic_store_n(&pl->cfg, cfg, __ATOMIC_RELEASE);
	return 0;
}

/* Records the refusal of a configuration as a "config_rejected" event. */
static void config_rejected(struct pipeline *pl, const char *err)
{
	cJSON *j = cJSON_CreateString(err);
	char *q = j ? cJSON_PrintUnformatted(j) : NULL;
	char extra[1200];

	cJSON_Delete(j);
	snprintf(extra, sizeof(extra), ",\"error\":%s", q ? q : "\"\"");
	free(q);
	pipeline_event(pl, 0, NULL, "config_rejected", extra);
}

int pipeline_config_set(struct pipeline *pl, const char *json, size_t len, char *err,
			size_t errlen)
{
	struct pfs_config *cfg = NULL;
	struct recipe_catalog cat = {0};
	char *copy;
	int rc;

	rc = config_parse(json, len, &cfg, err, errlen);
	if (rc == 0) {
		rc = pipeline_config_check(cfg, err, errlen);
		if (rc)
			config_free(cfg);
	}
	if (rc) {
		config_rejected(pl, err);
		return rc;
	}
	copy = strndup(json, len);
	if (!copy) {
		config_free(cfg);
		return -ENOMEM;
	}
	recipe_catalog_load(cfg->recipes_dir, &cat);
	pthread_mutex_lock(&pl->cfg_lock);
	rc = pl->readonly ? -EROFS : store_meta_set(pl->store, "pipeline", copy);
	if (rc == 0)
		rc = config_install(pl, cfg);
	if (rc == 0) {
		free(pl->cfg_json);
		pl->cfg_json = copy;
		recipe_catalog_free(&pl->recipes);
		pl->recipes = cat;
	}
	pthread_mutex_unlock(&pl->cfg_lock);
	if (rc) {
		snprintf(err, errlen, "cannot store the configuration: %s", strerror(-rc));
		config_free(cfg);
		free(copy);
		recipe_catalog_free(&cat);
	} else {
		pipeline_event(pl, 0, NULL, "config_changed", "");
		pipeline_cenv_refresh(pl);
	}
	return rc;
}
