/*
 * pipe_full.c - what the store could not take (SPEC §8: a full disk): item
 * states, the ends of runs and their registry lines.
 * When the write of an item's state fails (ENOSPC, or any other error of
 * the store), the item would stay as the store has it, e.g. `running` for
 * a stage whose process has ended. Such a state is kept here, per item,
 * and written again every UNSTORED_RETRY_MS until the store takes it (the
 * disk has room again) or a later state of the item replaces it; a ctl
 * command for the item first writes it (pipe__unstored_flush), and is
 * refused with the store's error while it cannot. Meanwhile status shows
 * the kept state (pipeline_unstored_state). The end of a run (its status,
 * finish time, exit and the sha256 of its log) and a recipe run's registry
 * line are kept the same way and written first, in the order they came,
 * so that the line follows its run and a run is never left `running`.
 * A ctl command's result that the store did not take is kept in memory
 * until a later result is stored, so that ctl still tells why a command
 * failed (it is not written again: the next command's result replaces it).
 *
 * The list is struct pipeline's, under unstored_lock, which is never held
 * while the store is called; everything else here runs on the loop thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "pipe_int.h"

/* How often kept states are written again, in milliseconds. */
#define UNSTORED_RETRY_MS 1000

/* A state of an item that the store did not take. */
struct unstored {
	int64_t item_id;
	enum item_state state;
	char *stage, *last_error;
	int stage_ok;
	struct unstored *next;
};

static void unstored_free(struct unstored *u)
{
	if (!u)
		return;
	free(u->stage);
	free(u->last_error);
	free(u);
}

/* Writes u's state over the item's row as the store has it now, with its
 * state event: the move the store did not take, from the state the store
 * still holds, which the state machine checks again. 0 (also when the item
 * is gone, or the move is refused: -EINVAL is logged there, and nothing is
 * written) or a negative errno. */
static int unstored_write(struct pipe *p, const struct unstored *u)
{
	struct item it;
	char *q;
	int rc = store_item_get_id(p->pl->store, u->item_id, &it);

	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (pipe__state_move(&it, u->state)) {
		item_clear(&it);
		return 0;
	}
	pipe__item_set(&it.stage, u->stage);
	pipe__item_set(&it.last_error, u->last_error);
	it.stage_ok = u->stage_ok;
	rc = pipe__item_write(p, &it);
	if (rc == 0) {
		q = pipe__json_string(it.last_error);
		pipe__event(p, &it, "state", ",\"state\":\"%s\",\"stage\":\"%s\",\"last_error\":%s",
			    item_state_name(it.state), it.stage, q ? q : "\"\"");
		free(q);
	}
	item_clear(&it);
	return rc;
}

/* Takes the kept state of item_id off the list (NULL: none). */
static struct unstored *unstored_take(struct pipeline *pl, int64_t item_id)
{
	struct unstored **up, *u;

	pthread_mutex_lock(&pl->unstored_lock);
	for (up = &pl->unstored; (u = *up); up = &u->next) {
		if (u->item_id == item_id) {
			*up = u->next;
			u->next = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&pl->unstored_lock);
	return u;
}

/* Puts u back on the list, unless a later state of its item is there. */
static void unstored_put(struct pipeline *pl, struct unstored *u)
{
	struct unstored *o;

	pthread_mutex_lock(&pl->unstored_lock);
	for (o = pl->unstored; o && o->item_id != u->item_id; o = o->next)
		;
	if (!o) {
		u->next = pl->unstored;
		pl->unstored = u;
		u = NULL;
	}
	pthread_mutex_unlock(&pl->unstored_lock);
	unstored_free(u);
}

/* The kept states' items, at most max of them, into ids; their count. */
static int unstored_ids(struct pipeline *pl, int64_t *ids, int max)
{
	struct unstored *u;
	int n = 0;

	pthread_mutex_lock(&pl->unstored_lock);
	for (u = pl->unstored; u && n < max; u = u->next)
		ids[n++] = u->item_id;
	pthread_mutex_unlock(&pl->unstored_lock);
	return n;
}

/* A ctl result that the store did not take. */
struct kept_result {
	int64_t item_id;
	char *text;
	struct kept_result *next;
};

void pipe__result_keep(struct pipe *p, int64_t item_id, const char *result)
{
	struct kept_result **kp, *k, *add = NULL;

	ASSERT_LOOP_THREAD(p->pl);
	if (result && !p->shutting_down && (add = calloc(1, sizeof(*add))) != NULL) {
		add->item_id = item_id;
		add->text = strdup(result);
		if (!add->text) {
			free(add);
			add = NULL;
		}
	}
	pthread_mutex_lock(&p->pl->unstored_lock);
	for (kp = &p->pl->results; (k = *kp); kp = &k->next)
		if (k->item_id == item_id)
			break;
	if (k)
		*kp = k->next;
	if (add) {
		add->next = p->pl->results;
		p->pl->results = add;
	}
	pthread_mutex_unlock(&p->pl->unstored_lock);
	if (k) {
		free(k->text);
		free(k);
	}
}

int pipeline_unstored_result(struct pipeline *pl, int64_t item_id, char *buf, size_t size)
{
	struct kept_result *k;
	int found = 0;

	pthread_mutex_lock(&pl->unstored_lock);
	for (k = pl->results; k && k->item_id != item_id; k = k->next)
		;
	if (k) {
		snprintf(buf, size, "%s", k->text);
		found = 1;
	}
	pthread_mutex_unlock(&pl->unstored_lock);
	return found;
}

/* ---- run ends and registry lines ---- */

/* The end of a run that the store did not take, and its registry line. */
struct unsealed {
	int64_t run_id, item_id;
	char item[ITEM_NAME_MAX + 1];
	int sealed;             /* the run row holds its end (or never needed it) */
	enum run_status status;
	char finished_at[32];
	double duration_s;
	int has_exit_code, exit_code, signal;
	char *note;
	char *line;             /* the registry line to append; NULL: none */
	struct unsealed *next;
};

static void unsealed_free(struct unsealed *u)
{
	if (!u)
		return;
	free(u->note);
	free(u->line);
	free(u);
}

/* The entry of run_id, made (sealed, without a line) when there is none;
 * NULL when out of memory. */
static struct unsealed *unsealed_get(struct pipe *p, int64_t run_id)
{
	struct unsealed *u;

	for (u = p->unsealed; u; u = u->next)
		if (u->run_id == run_id)
			return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->run_id = run_id;
	u->sealed = 1;
	u->next = p->unsealed;
	p->unsealed = u;
	return u;
}

/* Writes what u keeps. 0 when all of it is stored now. */
static int unsealed_write(struct pipe *p, struct unsealed *u)
{
	struct run r;
	int64_t size;
	int rc;

	if (!u->sealed) {
		rc = store_run_get(p->pl->store, u->run_id, &r);
		if (rc == -ENOENT) {
			u->sealed = 1;
		} else if (rc == 0) {
			r.status = u->status;
			snprintf(r.finished_at, sizeof(r.finished_at), "%s", u->finished_at);
			r.duration_s = u->duration_s;
			r.has_exit_code = u->has_exit_code;
			r.exit_code = u->exit_code;
			r.signal = u->signal;
			pipe__item_set(&r.note, u->note ? u->note : "");
			rc = store_log_sha256(p->pl->store, r.id, r.log_sha256, &size);
			if (rc == 0)
				rc = store_run_update(p->pl->store, &r);
			run_clear(&r);
			if (rc == 0)
				u->sealed = 1;
		}
		if (!u->sealed)
			return rc ? rc : -EIO;
	}
	if (u->line) {
		rc = store_registry_append(p->pl->store, u->item_id, u->line, "engine", u->run_id);
		if (rc)
			return rc;
		free(u->line);
		u->line = NULL;
		pipe__changed(p->pl, u->item, "validation/registry.jsonl", PIPELINE_MODIFIED);
		pipe__changed(p->pl, u->item, "validation/evidence.md", PIPELINE_MODIFIED);
		pipe__changed(p->pl, u->item, "validation/junit.xml", PIPELINE_MODIFIED);
		pipe__changed(p->pl, u->item, "validation/measurements.md", PIPELINE_MODIFIED);
	}
	return 0;
}

/* Starts the timer that writes kept things again, unless it runs. */
static void retry_arm(struct pipe *p);

void pipe__unsealed_keep(struct pipe *p, const struct run *r)
{
	struct unsealed *u;

	if (p->shutting_down || !(u = unsealed_get(p, r->id)))
		return;
	u->item_id = r->item_id;
	u->sealed = 0;
	u->status = r->status;
	snprintf(u->finished_at, sizeof(u->finished_at), "%s", r->finished_at);
	u->duration_s = r->duration_s;
	u->has_exit_code = r->has_exit_code;
	u->exit_code = r->exit_code;
	u->signal = r->signal;
	free(u->note);
	u->note = r->note ? strdup(r->note) : NULL;
	util_log(LOG_ERR, "run %lld: the store did not take its end (%s); writing it "
		"again every %d ms", (long long)r->id, run_status_name(r->status),
		UNSTORED_RETRY_MS);
	retry_arm(p);
}

void pipe__unsealed_line(struct pipe *p, int64_t item_id, const char *item, int64_t run_id,
			 const char *line)
{
	struct unsealed *u;

	ASSERT_LOOP_THREAD(p->pl);
	if (p->shutting_down || !(u = unsealed_get(p, run_id)))
		return;
	u->item_id = item_id;
	snprintf(u->item, sizeof(u->item), "%s", item);
	free(u->line);
	u->line = strdup(line);
	util_log(LOG_ERR, "%s: the store did not take the registry line of run %lld; "
		"appending it again every %d ms", item, (long long)run_id, UNSTORED_RETRY_MS);
	retry_arm(p);
}

/* Writes every kept run end and line, in the order they were kept (oldest
 * last on the list: walked from its end, so that registry lines keep
 * their order); stops at the first the store refuses. */
static void unsealed_flush(struct pipe *p)
{
	struct unsealed **up, *u;

	for (;;) {
		/* The oldest entry: the list's last. */
		for (up = &p->unsealed; *up && (*up)->next; up = &(*up)->next)
			;
		if (!(u = *up) || unsealed_write(p, u) != 0)
			return;
		*up = NULL;
		unsealed_free(u);
	}
}

static void retry_cb(uv_timer_t *t)
{
	struct pipe *p = t->data;
	int64_t ids[64];
	int i, n;

	unsealed_flush(p);
	n = unstored_ids(p->pl, ids, 64);
	for (i = 0; i < n; i++)
		if (pipe__unstored_flush(p, ids[i]) != 0)
			break; /* the store still refuses: the next tick tries again */
	if (!p->unsealed && unstored_ids(p->pl, ids, 1) == 0)
		uv_timer_stop(t);
}

void pipe__timer_repeat(struct pipe *p, uv_timer_t *t, int *init, uv_timer_cb cb, uint64_t ms)
{
	if (!*init) {
		if (uv_timer_init(&p->pl->loop, t))
			return;
		t->data = p;
		*init = 1;
	}
	if (!uv_is_active((uv_handle_t *)t))
		uv_timer_start(t, cb, ms, ms);
}

static void retry_arm(struct pipe *p)
{
	pipe__timer_repeat(p, &p->unstored_timer, &p->unstored_timer_init, retry_cb,
			   UNSTORED_RETRY_MS);
}

/* ---- item states ---- */

void pipe__unstored_keep(struct pipe *p, const struct item *it)
{
	struct unstored *u = unstored_take(p->pl, it->id);

	unstored_free(u);
	if (p->shutting_down)
		return;
	u = calloc(1, sizeof(*u));
	if (!u)
		return;
	u->item_id = it->id;
	u->state = it->state;
	u->stage = strdup(it->stage);
	u->last_error = strdup(it->last_error);
	u->stage_ok = it->stage_ok;
	if (!u->stage || !u->last_error) {
		unstored_free(u);
		return;
	}
	util_log(LOG_ERR, "%s: the store did not take the state %s (%s); writing it "
		"again every %d ms", it->name, item_state_name(it->state), it->last_error,
		UNSTORED_RETRY_MS);
	unstored_put(p->pl, u);
	/* status shows the kept state (pipeline_unstored_state). */
	pipe__changed(p->pl, it->name, "status", PIPELINE_MODIFIED);
	pipe__changed(p->pl, it->name, "status.json", PIPELINE_MODIFIED);
	retry_arm(p);
}

void pipe__unstored_drop(struct pipe *p, int64_t item_id)
{
	unstored_free(unstored_take(p->pl, item_id));
}

int pipe__unstored_flush(struct pipe *p, int64_t item_id)
{
	struct unstored *u = unstored_take(p->pl, item_id);
	int rc;

	if (!u)
		return 0;
	rc = unstored_write(p, u);
	if (rc) {
		unstored_put(p->pl, u);
		return rc;
	}
	unstored_free(u);
	return 0;
}

void pipe__unstored_stop(struct pipe *p)
{
	struct unstored *u;
	struct unsealed *u2;
	struct kept_result *k;

	pthread_mutex_lock(&p->pl->unstored_lock);
	while ((u = p->pl->unstored)) {
		p->pl->unstored = u->next;
		unstored_free(u);
	}
	while ((k = p->pl->results)) {
		p->pl->results = k->next;
		free(k->text);
		free(k);
	}
	pthread_mutex_unlock(&p->pl->unstored_lock);
	while ((u2 = p->unsealed)) {
		p->unsealed = u2->next;
		unsealed_free(u2);
	}
	if (p->unstored_timer_init) {
		uv_close((uv_handle_t *)&p->unstored_timer, NULL);
		p->unstored_timer_init = 0;
	}
}

int pipeline_unstored_state(struct pipeline *pl, int64_t item_id, enum item_state *state,
			    char *stage, size_t stage_size, char *last_error, size_t error_size)
{
	struct unstored *u;
	int found = 0;

	pthread_mutex_lock(&pl->unstored_lock);
	for (u = pl->unstored; u && u->item_id != item_id; u = u->next)
		;
	if (u) {
		*state = u->state;
		snprintf(stage, stage_size, "%s", u->stage);
		snprintf(last_error, error_size, "%s", u->last_error);
		found = 1;
	}
	pthread_mutex_unlock(&pl->unstored_lock);
	return found;
}
