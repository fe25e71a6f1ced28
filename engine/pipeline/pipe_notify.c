/*
 * pipe_notify.c - the "notify" programs of pipeline.json (SPEC §5): for each
 * item event an entry's "on" names, its program runs with the event on
 * stdin; what it did goes to the daemon's log, never into the pipeline.
 *
 * DESIGN. Every item event is stored by pipeline_event (or, for a stage's
 * start, with its run by store_run_begin); right after, pipe__notify
 * matches it against the entries of the configuration in force, on
 * whatever thread recorded it (the loop, a FUSE worker, crash recovery
 * before the loop runs). A match becomes a notice: the entry (its
 * configuration stays valid until pipeline_close), the item, the event's
 * type and state, and the JSON the program reads - the event line's object
 * plus the item's state, stage and last_error as the store has them then,
 * and the mount point. Notices wait on pl->notify_head under notify_lock,
 * which takes no other lock; the loop is woken with uv_async_send. So
 * recording an event costs a match and, on a match, one read of the item
 * row: nothing waits for a notifier.
 *
 * The loop thread starts notices in FIFO order through the runner (own
 * process group, the run_as user, stdin from a memfd, cwd "/", the entry's
 * timeout then SIGTERM and SIGKILL after cancel_grace_s), at most
 * NOTIFY_PARALLEL at once, and the notices of one item and one entry one
 * at a time, so that a notifier sees an item's events in their order. A
 * notifier that hangs holds back its item's later notices until its
 * timeout kills it, and nothing else. At most NOTIFY_QUEUE_MAX notices
 * wait; one more is dropped with a log line (a notifier far slower than
 * the events it is given). The end of each notifier is logged: the exit
 * status or signal, a timeout, and the first lines of its output.
 *
 * At shutdown (pipe__notify_stop) waiting notices are dropped, with a log
 * line counting them, and running notifiers are cancelled; events recorded
 * after that run nothing.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pipe_int.h"

extern char **environ;

#define NOTIFY_PARALLEL 4      /* notifiers running at once */
#define NOTIFY_QUEUE_MAX 10000 /* notices waiting, at most */
#define NOTIFY_OUT_MAX 512     /* bytes of a notifier's output kept for the log */
#define NOTIFY_OUT_LINES 3     /* lines of it the log shows */

/* One run of a notifier for one event. */
struct notice {
	struct notice *next;
	struct pipeline *pl;
	const struct pfs_config *cfg; /* the configuration it matched; valid until close */
	size_t entry;                 /* in cfg->notify */
	char item[ITEM_NAME_MAX + 1];
	char type[32];                /* the event's type */
	char state[16];               /* the item's state */
	char stage[64];               /* the item's stage */
	char *json;                   /* stdin: one JSON object and a newline */
	struct runner_proc *proc;     /* while it runs */
	char out[NOTIFY_OUT_MAX + 1]; /* the start of its output */
	size_t out_len;
};

static void notice_free(struct notice *n)
{
	if (!n)
		return;
	free(n->json);
	free(n);
}

/* The string member key of o, or "". */
static const char *member(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Adds key: value to o unless o has key. */
static void add_missing(cJSON *o, const char *key, const char *value)
{
	if (!cJSON_GetObjectItemCaseSensitive(o, key))
		cJSON_AddStringToObject(o, key, value ? value : "");
}

/* The notice of entry i of cfg for event ev (parsed) of item item_id; the
 * item's row completes it (it may be NULL: not read). NULL on ENOMEM. */
static struct notice *notice_new(struct pipeline *pl, const struct pfs_config *cfg, size_t i,
				 cJSON *ev, const struct item *it)
{
	struct notice *n = calloc(1, sizeof(*n));
	char *text;

	if (!n)
		return NULL;
	n->pl = pl;
	n->cfg = cfg;
	n->entry = i;
	snprintf(n->item, sizeof(n->item), "%s", member(ev, "item"));
	snprintf(n->type, sizeof(n->type), "%s", member(ev, "type"));
	add_missing(ev, "state", it ? item_state_name(it->state) : "");
	add_missing(ev, "stage", it ? it->stage : "");
	add_missing(ev, "last_error", it ? it->last_error : "");
	if (pl->mountpoint)
		add_missing(ev, "mountpoint", pl->mountpoint);
	snprintf(n->state, sizeof(n->state), "%s", member(ev, "state"));
	snprintf(n->stage, sizeof(n->stage), "%s", member(ev, "stage"));
	text = cJSON_PrintUnformatted(ev);
	n->json = text ? malloc(strlen(text) + 2) : NULL;
	if (!n->json) {
		free(text);
		free(n);
		return NULL;
	}
	sprintf(n->json, "%s\n", text);
	free(text);
	return n;
}

void pipe__notify(struct pipeline *pl, int64_t item_id, const char *line)
{
	/* Read without cfg_lock, which a caller may hold (pipeline_recipes_hold
	 * around a state change): configurations are never freed before
	 * pipeline_close, and config_install publishes with a release store. */
	const struct pfs_config *cfg = __atomic_load_n(&pl->cfg, __ATOMIC_ACQUIRE);
	struct notice *list = NULL, **tail = &list, *n;
	struct item it;
	int have_item = 0, dropped = 0, wake = 0;
	const char *type, *state;
	cJSON *ev;
	size_t i;

	if (!cfg || !cfg->nnotify || !item_id || pl->readonly)
		return;
	ev = cJSON_Parse(line);
	if (!cJSON_IsObject(ev)) {
		cJSON_Delete(ev);
		return;
	}
	type = member(ev, "type");
	state = member(ev, "state");
	for (i = 0; i < cfg->nnotify; i++) {
		if (!config_notify_wants(&cfg->notify[i], type, state))
			continue;
		if (!have_item)
			have_item = store_item_get_id(pl->store, item_id, &it) == 0 ? 1 : -1;
		n = notice_new(pl, cfg, i, ev, have_item > 0 ? &it : NULL);
		if (!n) {
			util_log(LOG_ERR, "notify: %s: %s: %s", member(ev, "item"), type,
				 strerror(ENOMEM));
			continue;
		}
		*tail = n;
		tail = &n->next;
	}
	if (have_item > 0)
		item_clear(&it);
	cJSON_Delete(ev);
	if (!list)
		return;
	pthread_mutex_lock(&pl->notify_lock);
	while (list) {
		n = list;
		list = n->next;
		n->next = NULL;
		if (pl->notify_phase == NOTIFY_STOPPED || pl->notify_queued >= NOTIFY_QUEUE_MAX) {
			dropped += pl->notify_phase != NOTIFY_STOPPED;
			notice_free(n);
			continue;
		}
		*pl->notify_tail = n;
		pl->notify_tail = &n->next;
		pl->notify_queued++;
		wake = pl->notify_phase == NOTIFY_RUNNING;
	}
	if (wake)
		uv_async_send(&pl->wake);
	pthread_mutex_unlock(&pl->notify_lock);
	if (dropped)
		util_log(LOG_WARNING, "notify: %d notification(s) dropped: %d wait already (the "
			 "notifiers are slower than the events)", dropped, NOTIFY_QUEUE_MAX);
}

/* ---- the loop thread ---- */

static void on_output(void *arg, const char *data, size_t len)
{
	struct notice *n = arg;
	size_t room = NOTIFY_OUT_MAX - n->out_len;

	if (len > room)
		len = room;
	memcpy(n->out + n->out_len, data, len);
	n->out_len += len;
}

/* The first lines of n's output as one line ("a | b | c"), into out. */
static void output_lines(const struct notice *n, char *out, size_t size)
{
	size_t i, k = 0;
	int lines = 0, at_start = 1;

	for (i = 0; i < n->out_len && k + 4 < size && lines < NOTIFY_OUT_LINES; i++) {
		char ch = n->out[i];

		if (ch == '\n') {
			lines++;
			at_start = 1;
			continue;
		}
		if (at_start && k) {
			memcpy(out + k, " | ", 3);
			k += 3;
		}
		at_start = 0;
		out[k++] = (ch >= ' ' && ch != 0x7f) || (unsigned char)ch >= 0x80 ? ch : '?';
	}
	out[k] = '\0';
}

static void on_exit_cb(void *arg, const struct runner_result *res)
{
	struct notice *n = arg;
	struct pipeline *pl = n->pl;
	const struct pfs_notify *e = &n->cfg->notify[n->entry];
	char what[160], lines[NOTIFY_OUT_MAX + 64], event[64];
	int prio = LOG_WARNING;

	if (res->spawn_error)
		snprintf(what, sizeof(what), "could not start: %s", strerror(-res->spawn_error));
	else if (res->timed_out)
		snprintf(what, sizeof(what), "timed out (timeout_s %d): ended by %s", e->timeout_s,
			 res->kill_signal == SIGKILL ? "SIGTERM, then SIGKILL" : "SIGTERM");
	else if (res->cancelled)
		snprintf(what, sizeof(what), "cancelled: the daemon stops");
	else if (res->term_signal)
		snprintf(what, sizeof(what), "killed by signal %d (%s)", res->term_signal,
			 strsignal(res->term_signal));
	else if (res->exit_code)
		snprintf(what, sizeof(what), "exited with status %d", res->exit_code);
	else {
		snprintf(what, sizeof(what), "exited with status 0");
		prio = LOG_INFO;
	}
	if (strcmp(n->type, "state") == 0)
		snprintf(event, sizeof(event), "state %s", n->state);
	else
		snprintf(event, sizeof(event), "%s", n->type);
	output_lines(n, lines, sizeof(lines));
	util_log(prio, "notify: %s: %s: %s %s; ran %.1f s%s%s", n->item, event, e->run[0], what,
		 res->duration_s, lines[0] ? ": " : "", lines);
	n->proc = NULL;
	/* Off the running list, then the next may start. */
	{
		struct notice **pp;

		for (pp = &pl->notify_live; *pp; pp = &(*pp)->next) {
			if (*pp == n) {
				*pp = n->next;
				break;
			}
		}
	}
	assert(pl->notify_running > 0);
	pl->notify_running--;
	notice_free(n);
	pipe__notify_pump(pl);
}

/* Whether a notice of n's item and entry runs now. */
static int item_busy(const struct pipeline *pl, const struct notice *n)
{
	const struct notice *r;

	for (r = pl->notify_live; r; r = r->next)
		if (r->cfg == n->cfg && r->entry == n->entry && strcmp(r->item, n->item) == 0)
			return 1;
	return 0;
}

/* The notifier's environment: the daemon's, less the PACKET_* variables,
 * then PACKET_ITEM, PACKET_STATE, PACKET_EVENT, PACKET_STAGE and, with a
 * mount, PACKET_DIR. NULL on ENOMEM. */
static char **notify_env(const struct notice *n)
{
	char **env = NULL, var[PATH_MAX + 64];
	size_t i;
	int rc = 0;

	for (i = 0; environ[i] && rc == 0; i++)
		if (strncmp(environ[i], "PACKET_", 7) != 0)
			rc = strv_push(&env, environ[i]);
	snprintf(var, sizeof(var), "PACKET_ITEM=%s", n->item);
	rc = rc ? rc : strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_STATE=%s", n->state);
	rc = rc ? rc : strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_EVENT=%s", n->type);
	rc = rc ? rc : strv_push(&env, var);
	snprintf(var, sizeof(var), "PACKET_STAGE=%s", n->stage);
	rc = rc ? rc : strv_push(&env, var);
	if (n->pl->mountpoint) {
		snprintf(var, sizeof(var), "PACKET_DIR=%s/%s", n->pl->mountpoint, n->item);
		rc = rc ? rc : strv_push(&env, var);
	}
	if (rc) {
		strv_free(env);
		return NULL;
	}
	return env;
}

/* Starts notice n (off the queue). On a failure to start, logs it and
 * frees n. */
static void notice_start(struct pipeline *pl, struct notice *n)
{
	const struct pfs_notify *e = &n->cfg->notify[n->entry];
	struct runner_spec spec = { .argv = e->run, .cwd = "/",
				    .timeout_s = (unsigned)e->timeout_s,
				    .grace_s = (unsigned)n->cfg->cancel_grace_s, .stdin_data = n->json,
				    .stdin_len = strlen(n->json) };
	struct runner_user *user = NULL;
	char **env = notify_env(n);
	int rc = env ? 0 : -ENOMEM;

	if (n->cfg->cancel_grace_s == 0)
		spec.grace_s = 1;
	spec.env = env;
	if (rc == 0 && n->cfg->run_as) {
		rc = runner_user_lookup(n->cfg->run_as, &user);
		if (rc == 0 && user->uid != geteuid())
			spec.user = user;
	}
	if (rc == 0)
		rc = runner_start(&pl->loop, &spec, on_output, on_exit_cb, n, &n->proc);
	runner_user_free(user);
	strv_free(env);
	if (rc) {
		util_log(LOG_WARNING, "notify: %s: %s: %s not started: %s%s", n->item, n->type,
			 e->run[0], n->cfg->run_as && rc == -ENOENT ? "run_as: no such user: " : "",
			 n->cfg->run_as && rc == -ENOENT ? n->cfg->run_as : strerror(-rc));
		notice_free(n);
		return;
	}
	n->next = pl->notify_live;
	pl->notify_live = n;
	pl->notify_running++;
}

void pipe__notify_pump(struct pipeline *pl)
{
	struct notice **pp, *n;

	ASSERT_LOOP_THREAD(pl);
	if (pl->notify_stopping)
		return;
	while (pl->notify_running < NOTIFY_PARALLEL) {
		pthread_mutex_lock(&pl->notify_lock);
		pl->notify_phase = NOTIFY_RUNNING;
		for (pp = &pl->notify_head; (n = *pp) && item_busy(pl, n); pp = &n->next)
			;
		if (n) {
			*pp = n->next;
			if (pl->notify_tail == &n->next)
				pl->notify_tail = pp;
			n->next = NULL;
			pl->notify_queued--;
		}
		pthread_mutex_unlock(&pl->notify_lock);
		if (!n)
			return;
		notice_start(pl, n);
	}
}

void pipe__notify_stop(struct pipeline *pl)
{
	struct notice *list, *n;
	size_t dropped;

	ASSERT_LOOP_THREAD(pl);
	pl->notify_stopping = 1;
	pthread_mutex_lock(&pl->notify_lock);
	pl->notify_phase = NOTIFY_STOPPED;
	list = pl->notify_head;
	dropped = pl->notify_queued;
	pl->notify_head = NULL;
	pl->notify_tail = &pl->notify_head;
	pl->notify_queued = 0;
	pthread_mutex_unlock(&pl->notify_lock);
	while ((n = list)) {
		list = n->next;
		notice_free(n);
	}
	if (dropped)
		util_log(LOG_WARNING, "notify: %zu notification(s) not sent: the daemon stops",
			 dropped);
	for (n = pl->notify_live; n; n = n->next)
		if (n->proc)
			runner_cancel(n->proc);
}

void pipe__notify_free(struct pipeline *pl)
{
	struct notice *n;

	while ((n = pl->notify_head)) {
		pl->notify_head = n->next;
		notice_free(n);
	}
	pl->notify_tail = &pl->notify_head;
	pl->notify_queued = 0;
}
