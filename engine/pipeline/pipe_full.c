/*
 * pipe_full.c - states the store could not take (SPEC §8: a full disk).
 * When the write of an item's state fails (ENOSPC, or any other error of
 * the store), the item would stay as the store has it, e.g. `running` for
 * a stage whose process has ended. Such a state is kept here, per item,
 * and written again every UNSTORED_RETRY_MS until the store takes it (the
 * disk has room again) or a later state of the item replaces it; a ctl
 * command for the item first writes it (pipe__unstored_flush), and is
 * refused with the store's error while it cannot.
 *
 * Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"

/* How often kept states are written again, in milliseconds. */
#define UNSTORED_RETRY_MS 1000

/* A state of an item that the store did not take. */
struct unstored {
	int64_t item_id;
	char *state, *stage, *last_error;
	int stage_ok;
	struct unstored *next;
};

static void unstored_free(struct unstored *u)
{
	if (!u)
		return;
	free(u->state);
	free(u->stage);
	free(u->last_error);
	free(u);
}

/* Writes u's state over the item's row as the store has it now, with its
 * state event. 0 (also when the item is gone) or a negative errno. */
static int unstored_write(struct pipe *p, const struct unstored *u)
{
	struct item it;
	char *q;
	int rc = store_item_get_id(p->pl->store, u->item_id, &it);

	if (rc)
		return rc == -ENOENT ? 0 : rc;
	pipe__item_set(&it.state, u->state);
	pipe__item_set(&it.stage, u->stage);
	pipe__item_set(&it.last_error, u->last_error);
	it.stage_ok = u->stage_ok;
	rc = pipe__item_write(p, &it);
	if (rc == 0) {
		q = pipe__json_string(it.last_error);
		pipe__event(p, &it, "state", ",\"state\":\"%s\",\"stage\":\"%s\",\"last_error\":%s",
			    it.state, it.stage, q ? q : "\"\"");
		free(q);
	}
	item_clear(&it);
	return rc;
}

/* Takes the kept state of item_id off the list (NULL: none). */
static struct unstored *unstored_take(struct pipe *p, int64_t item_id)
{
	struct unstored **up, *u;

	for (up = &p->unstored; (u = *up); up = &u->next) {
		if (u->item_id == item_id) {
			*up = u->next;
			u->next = NULL;
			return u;
		}
	}
	return NULL;
}

static void retry_cb(uv_timer_t *t)
{
	struct pipe *p = t->data;
	struct unstored **up = &p->unstored, *u;

	while ((u = *up)) {
		if (unstored_write(p, u) == 0) {
			*up = u->next;
			unstored_free(u);
		} else {
			up = &u->next;
		}
	}
	if (!p->unstored)
		uv_timer_stop(t);
}

void pipe__unstored_keep(struct pipe *p, const struct item *it)
{
	struct unstored *u = unstored_take(p, it->id);

	unstored_free(u);
	if (p->shutting_down)
		return;
	u = calloc(1, sizeof(*u));
	if (!u)
		return;
	u->item_id = it->id;
	u->state = strdup(it->state);
	u->stage = strdup(it->stage);
	u->last_error = strdup(it->last_error);
	u->stage_ok = it->stage_ok;
	if (!u->state || !u->stage || !u->last_error) {
		unstored_free(u);
		return;
	}
	fprintf(stderr, "packetfs: %s: the store did not take the state %s (%s); writing it "
		"again every %d ms\n", it->name, it->state, it->last_error, UNSTORED_RETRY_MS);
	u->next = p->unstored;
	p->unstored = u;
	if (!p->unstored_timer_init) {
		if (uv_timer_init(&p->pl->loop, &p->unstored_timer))
			return;
		p->unstored_timer.data = p;
		p->unstored_timer_init = 1;
	}
	if (!uv_is_active((uv_handle_t *)&p->unstored_timer))
		uv_timer_start(&p->unstored_timer, retry_cb, UNSTORED_RETRY_MS, UNSTORED_RETRY_MS);
}

void pipe__unstored_drop(struct pipe *p, int64_t item_id)
{
	unstored_free(unstored_take(p, item_id));
}

int pipe__unstored_flush(struct pipe *p, int64_t item_id)
{
	struct unstored *u = unstored_take(p, item_id);
	int rc;

	if (!u)
		return 0;
	rc = unstored_write(p, u);
	if (rc) {
		u->next = p->unstored;
		p->unstored = u;
		return rc;
	}
	unstored_free(u);
	return 0;
}

void pipe__unstored_stop(struct pipe *p)
{
	struct unstored *u;

	while ((u = p->unstored)) {
		p->unstored = u->next;
		unstored_free(u);
	}
	if (p->unstored_timer_init) {
		uv_close((uv_handle_t *)&p->unstored_timer, NULL);
		p->unstored_timer_init = 0;
	}
}
