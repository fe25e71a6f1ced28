/*
 * pipe_env.c - the environment of a stage or recipe process (SPEC §5, §6;
 * pipe__make_env in pipe_int.h): the daemon's own, less what packetfs
 * sets for the run, the stage's "env" over it, then the PACKET_*
 * variables (the plan's header lines among them), and for a recipe RECIPE_NAME and its GPUs. Loop thread.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "pipe_int.h"

extern char **environ;

/* Whether the stage's own env (NAME=value strings) sets var's name. */
static int env_sets(char *const *env, const char *var)
{
	size_t n = strcspn(var, "=");

	for (; env && *env; env++)
		if (strncmp(*env, var, n) == 0 && (*env)[n] == '=')
			return 1;
	return 0;
}

char **pipe__make_env(struct pipe *p, const struct item *it, const char *stage, const char *recipe,
		      const char *cuda)
{
	struct pfs_config *cfg = pipeline_config_item(p->pl, it);
	const struct pfs_stage *st = recipe ? NULL : config_stage(cfg, stage, NULL);
	char *const *own = st ? st->env : NULL;
	const char *mnt = p->pl->mountpoint ? p->pl->mountpoint : "";
	char **env = NULL, var[PATH_MAX + 64];
	size_t i;

	/* The daemon's environment, less what packetfs sets for this run
	 * and what the stage's "env" replaces. */
	for (i = 0; environ[i]; i++) {
		if (config_env_reserved(environ[i]) || strncmp(environ[i], "RECIPE_", 7) == 0 ||
		    strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) == 0 ||
		    strncmp(environ[i], "CUDA_DEVICE_ORDER=", 18) == 0 || env_sets(own, environ[i]))
			continue;
		strv_push(&env, environ[i]);
	}
	for (i = 0; own && own[i]; i++)
		strv_push(&env, own[i]);
	snprintf(var, sizeof(var), "PACKET_ITEM=%s", it->name);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_DIR=%s/%s", mnt, it->name);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_WORKTREE=%s/worktrees/%s", p->pl->store_dir, it->name);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_STAGE=%s", stage);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_ITERATION=%d", it->iteration);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_BRANCH=%s", it->branch);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_BASE=%s", it->base);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_REPO=%s", cfg->repo);
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_LEARNINGS=%s/learnings", mnt);
	strv_push(&env, var);
	/* The plan's header lines (SPEC §5 "Routes and templates"), "" when
	 * absent; PACKET_TEMPLATE is the template in effect. */
	snprintf(var, sizeof(var), "PACKET_ROUTE=%s", it->route ? it->route : "");
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_TEMPLATE=%s", it->template ? it->template : "");
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_ENGINE=%s", it->engine ? it->engine : "");
	strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_REVIEW_REQUEST=%s",
		 it->review_request ? it->review_request : "");
	strv_push(&env, var);
	if (st && st->rounds_max) {
		snprintf(var, sizeof(var), "PACKET_ROUND=%d", it->round);
		strv_push(&env, var);
	}
	if (recipe) {
		snprintf(var, sizeof(var), "RECIPE_NAME=%s", recipe);
		strv_push(&env, var);
		snprintf(var, sizeof(var), "CUDA_VISIBLE_DEVICES=%s", cuda ? cuda : "");
		strv_push(&env, var);
		/* nvidia-smi numbers devices in PCI bus order, CUDA fastest first
		 * unless told otherwise: the pool's indices are nvidia-smi's. */
		strv_push(&env, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
	}
	return env;
}
