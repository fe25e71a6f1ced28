/*
 * config_probe.c - the "probes" of .packetfs/pipeline.json (SPEC §6, "The
 * compute environment"; config.h): what compute-env.md asks of the
 * machines, and what a recipe's "# requires:" header names.
 *
 * Design: "probes" is an object from a probe's name to its command, either
 * an argument vector ["python3", "-c", "import torch; print(...)"] or an
 * object {"run": [ARGV...], "timeout_s": N}, kept in the file's order.
 * A name is [a-z0-9][a-z0-9._-]{0,63}, as an item's (a recipe header
 * names it among blanks and commas). The program is run without a shell,
 * found on the daemon's PATH: a probe asks whether the machine has it, so
 * a missing program is an answer ("absent"), not an error of the file.
 *
 * No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "util.h"

static const char *const probe_keys[] = { "run", "timeout_s", NULL };

int config_probe_name_ok(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > CONFIG_PROBE_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		char ch = name[i];
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
			 (i > 0 && (ch == '.' || ch == '_' || ch == '-'));

		if (!ok)
			return 0;
	}
	return 1;
}

const struct pfs_probe *config_probe(const struct pfs_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nprobes; i++)
		if (strcmp(cfg->probes[i].name, name) == 0)
			return &cfg->probes[i];
	return NULL;
}

/* One probe, the value v of key name (path its field), into *pr. */
static int parse_probe(struct ctx *c, const char *path, const cJSON *v, struct pfs_probe *pr)
{
	const cJSON *run = v;
	char field[PATH_MAX_LEN];
	int rc;

	pr->timeout_s = CONFIG_PROBE_TIMEOUT_DEFAULT_S;
	if (cJSON_IsObject(v)) {
		rc = config__check_object(c, path, v, probe_keys, "an object {\"run\": [...]}");
		if (rc)
			return rc;
		run = cJSON_GetObjectItemCaseSensitive(v, "run");
		config__join(field, path, "run");
		if (!run)
			return config__fail(c, field, "required");
		rc = config__opt_int(c, path, v, "timeout_s", 1, &pr->timeout_s);
		if (rc)
			return rc;
		if (pr->timeout_s > CONFIG_PROBE_TIMEOUT_MAX_S)
			return config__fail(c, path, "timeout_s: at most %d seconds",
					    CONFIG_PROBE_TIMEOUT_MAX_S);
	} else {
		snprintf(field, sizeof(field), "%s", path);
	}
	if (!cJSON_IsArray(run) || !cJSON_GetArraySize(run))
		return config__fail(c, field, "must be a command, a non-empty array of strings such "
				    "as [\"python3\", \"--version\"], or {\"run\": [...], "
				    "\"timeout_s\": N}");
	return config__get_strv(c, field, run, 0, &pr->run);
}

int config__parse_probes(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	const cJSON *obj, *v;
	char field[PATH_MAX_LEN];
	size_t n = 0;
	int rc;

	rc = config__get_object(c, "", root, "probes", NULL,
				"an object from a probe's name to its command", field, &obj);
	if (rc || !obj)
		return rc;
	cJSON_ArrayForEach(v, obj)
		n++;
	if (n > CONFIG_PROBES_MAX)
		return config__fail(c, "probes", "at most %d probes", CONFIG_PROBES_MAX);
	if (n == 0)
		return 0;
	cfg->probes = calloc(n, sizeof(*cfg->probes));
	if (!cfg->probes)
		return -ENOMEM;
	cJSON_ArrayForEach(v, obj) {
		struct pfs_probe *pr = &cfg->probes[cfg->nprobes];

		config__join(field, "probes", v->string);
		if (!config_probe_name_ok(v->string, strlen(v->string)))
			return config__fail(c, field, "a probe's name must match "
					    "[a-z0-9][a-z0-9._-]{0,63}");
		pr->name = strdup(v->string);
		if (!pr->name)
			return -ENOMEM;
		cfg->nprobes++;
		rc = parse_probe(c, field, v, pr);
		if (rc)
			return rc;
	}
	return 0;
}

void config__free_probes(struct pfs_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nprobes; i++) {
		free(cfg->probes[i].name);
		strv_free(cfg->probes[i].run);
	}
	free(cfg->probes);
	cfg->probes = NULL;
	cfg->nprobes = 0;
}
