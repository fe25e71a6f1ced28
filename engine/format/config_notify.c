/*
 * config_notify.c - the "notify" entries of .packetfs/pipeline.json (SPEC §5;
 * config.h): which item events run which program.
 *
 * Design: "notify" is an array of objects {"on": [NAME...], "run": [ARGV...],
 * "timeout_s": N}, read in the file's order like the stages, the first
 * problem stopping the parse with "notify[i].field: why" and its line and
 * column. A name in "on" is an item state entered by a "state" event or an
 * item event type (config_notify_known); an unknown one is refused with
 * the known name it was likely meant to be. "run"'s program must be an
 * absolute path: the notifier runs from "/" with the daemon's environment,
 * where a bare name would depend on the daemon's PATH.
 *
 * No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "util.h"

static const char *const notify_keys[] = { "on", "run", "timeout_s", NULL };

/* The item states first (STATES of them), then the event types of items. */
#define STATES 6
const char *const config_notify_known[] = {
	"queued", "running", "waiting", "blocked", "failed", "done",
	"item_created", "stage_started", "stage_finished", "recipe_started", "recipe_finished",
	"recipe_reattached", "record_queued", "registry_external", "gpu_held", "approved",
	"approve_dropped", "hold", "release", "archived", "disposition", "iteration",
	"uncommitted", "head_moved", "round_waiting", "interrupted", "rewound", "template", NULL,
};

int config_notify_wants(const struct pfs_notify *n, const char *type, const char *state)
{
	const char *want = strcmp(type, "state") == 0 ? state : type;
	char **v;
	int i;

	/* A state's name matches the state events that enter it, an event
	 * type's the events of that type, never one the other. */
	if (!want)
		return 0;
	for (i = 0; config_notify_known[i] && strcmp(config_notify_known[i], want) != 0; i++)
		;
	if (!config_notify_known[i] || (want == state) != (i < STATES))
		return 0;
	for (v = n->on; v && *v; v++)
		if (strcmp(*v, want) == 0)
			return 1;
	return 0;
}

/* "on": a non-empty array of known names, none twice. */
static int parse_on(struct ctx *c, const char *path, const cJSON *obj, struct pfs_notify *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "on");
	char field[PATH_MAX_LEN];
	size_t i, j, k;
	int rc;

	config__join(field, path, "on");
	if (!v) /* at the entry, which has a place in the text */
		return config__fail(c, path, "\"on\" is required");
	rc = config__get_strv(c, field, v, 0, &n->on);
	if (rc)
		return rc;
	for (i = 0; n->on[i]; i++) {
		const char *meant;

		snprintf(field, sizeof(field), "%s.on[%zu]", path, i);
		for (k = 0; config_notify_known[k] && strcmp(config_notify_known[k], n->on[i]); k++)
			;
		if (!config_notify_known[k]) {
			meant = config__suggest(n->on[i], config_notify_known);
			if (meant)
				return config__fail(c, field, "unknown state or event \"%.64s\" (did you "
						    "mean \"%s\"?)", n->on[i], meant);
			return config__fail(c, field, "unknown state or event \"%.64s\" (a state: "
					    "queued, running, waiting, blocked, failed, done; or an "
					    "item event type such as stage_finished)", n->on[i]);
		}
		for (j = 0; j < i; j++)
			if (strcmp(n->on[j], n->on[i]) == 0)
				return config__fail(c, field, "\"%s\" is listed twice", n->on[i]);
	}
	return 0;
}

static int parse_entry(struct ctx *c, const cJSON *obj, struct pfs_notify *n, size_t index)
{
	const cJSON *v;
	char path[32], field[PATH_MAX_LEN];
	int rc;

	snprintf(path, sizeof(path), "notify[%zu]", index);
	n->timeout_s = NOTIFY_TIMEOUT_DEFAULT_S;
	rc = config__check_object(c, path, obj, notify_keys,
				  "an object {\"on\": [STATE...], \"run\": [\"/abs/prog\", ...]}");
	if (rc)
		return rc;
	rc = parse_on(c, path, obj, n);
	if (rc)
		return rc;
	v = cJSON_GetObjectItemCaseSensitive(obj, "run");
	config__join(field, path, "run");
	if (!v)
		return config__fail(c, path, "\"run\" is required");
	rc = config__get_strv(c, field, v, 0, &n->run);
	if (rc)
		return rc;
	if (n->run[0][0] != '/') {
		snprintf(field, sizeof(field), "%s.run[0]", path);
		return config__fail(c, field, "must be an absolute path (the program runs from \"/\" "
				    "with the daemon's PATH)");
	}
	return config__opt_int(c, path, obj, "timeout_s", 1, &n->timeout_s);
}

int config__parse_notify(struct ctx *c, const cJSON *root, struct pfs_config *cfg)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "notify");
	const cJSON *e;
	size_t n = 0, i = 0;
	int rc;

	if (!v)
		return 0;
	if (!cJSON_IsArray(v))
		return config__fail(c, "notify", "must be an array of objects {\"on\": [STATE...], "
				    "\"run\": [\"/abs/prog\", ...]}");
	cJSON_ArrayForEach(e, v)
		n++;
	if (!n)
		return 0;
	cfg->notify = calloc(n, sizeof(*cfg->notify));
	if (!cfg->notify)
		return -ENOMEM;
	cfg->nnotify = n;
	cJSON_ArrayForEach(e, v) {
		rc = parse_entry(c, e, &cfg->notify[i], i);
		if (rc)
			return rc;
		i++;
	}
	return 0;
}
