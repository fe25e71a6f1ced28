/*
 * config_default.c - the pipeline.json of a new store without --pipeline
 * (config.h: config_default_json).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"

/* Adds {"name": name} plus one optional string and one optional number. */
static int add_stage(cJSON *stages, const char *name, const char *key, const char *val,
		     const char *nkey, double num)
{
	cJSON *st = cJSON_CreateObject();

	if (!st || !cJSON_AddItemToArray(stages, st))
		goto fail;
	if (!cJSON_AddStringToObject(st, "name", name))
		return -ENOMEM;
	if (key && !cJSON_AddStringToObject(st, key, val))
		return -ENOMEM;
	if (nkey && !cJSON_AddNumberToObject(st, nkey, num))
		return -ENOMEM;
	return 0;
fail:
	cJSON_Delete(st);
	return -ENOMEM;
}

char *config_default_json(const char *repo, const char *base, const char *recipes_dir)
{
	cJSON *root = cJSON_CreateObject(), *stages;
	char *text = NULL, *out = NULL;
	size_t n;

	if (!root || !repo || !cJSON_AddStringToObject(root, "repo", repo) ||
	    !cJSON_AddStringToObject(root, "base", base ? base : "main"))
		goto out;
	if (recipes_dir && !cJSON_AddStringToObject(root, "recipes_dir", recipes_dir))
		goto out;
	if (!cJSON_AddStringToObject(root, "gpus", "auto") ||
	    !cJSON_AddNumberToObject(root, "max_parallel_recipes", 2))
		goto out;
	stages = cJSON_AddArrayToObject(root, "stages");
	if (!stages || add_stage(stages, "plan", NULL, NULL, NULL, 0) ||
	    add_stage(stages, "print", NULL, NULL, NULL, 0) ||
	    add_stage(stages, "validate", "recipes", "plan", NULL, 0) ||
	    add_stage(stages, "review", "on_needs_changes", "print", "max_iterations", 3) ||
	    add_stage(stages, "publish", "gate", "approve", NULL, 0))
		goto out;
	text = cJSON_Print(root);
	if (!text)
		goto out;
	n = strlen(text);
	out = malloc(n + 2);
	if (out) {
		memcpy(out, text, n);
		out[n] = '\n';
		out[n + 1] = '\0';
	}
out:
	cJSON_free(text);
	cJSON_Delete(root);
	return out;
}
