/*
 * view_digest.c - registry digests kept per item, so that evidence.md and
 * the status read only the registry lines appended since their last
 * rendering instead of parsing the whole registry at every stat.
 *
 * Each item's digest (registry.h) is kept with the id of the last line it
 * took, in one of DIGEST_SLOTS slots chosen by item id. A rendering feeds
 * it the lines above that id (store_registry_since) and renders from it.
 * The registry is append-only (triggers refuse updates and deletes) and
 * items are never deleted, so (item id, last line id) names the lines a
 * digest holds exactly. The digests hold at most DIGEST_BYTES together; a
 * digest that would pass that serves its rendering and is dropped.
 *
 * Locking: one mutex over the slots, taken before the store's lock (the
 * feed runs under both); renderings of different items take turns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "namespace.h"

#define DIGEST_BYTES (32u << 20)

/* Feeds one line to the digest d (store_registry_since's callback). */
struct feed {
	struct registry_digest *d;
	int64_t last_id;
};

static int feed_line(void *arg, int64_t id, const char *line, size_t len)
{
	struct feed *f = arg;
	int rc = registry_digest_add(f->d, line ? line : "", line ? len : 0);

	if (rc == 0)
		f->last_id = id;
	return rc;
}

static void slot_clear(struct engine *e, struct digest_slot *s)
{
	e->digest_bytes -= s->bytes;
	registry_digest_free(s->d);
	s->d = NULL;
	s->item_id = 0;
	s->last_id = 0;
	s->bytes = 0;
}

int view_digest(struct engine *e, int64_t item_id,
		int (*fn)(void *arg, const struct registry_digest *d), void *arg)
{
	struct digest_slot *s = &e->digests[(uint64_t)item_id % DIGEST_SLOTS];
	struct feed f;
	int rc;

	pthread_mutex_lock(&e->digest_lock);
	if (s->d && s->item_id != item_id)
		slot_clear(e, s);
	if (!s->d) {
		s->d = registry_digest_new();
		if (!s->d) {
			pthread_mutex_unlock(&e->digest_lock);
			return -ENOMEM;
		}
		s->item_id = item_id;
	}
	f.d = s->d;
	f.last_id = s->last_id;
	rc = store_registry_since(e->store, item_id, s->last_id, feed_line, &f);
	s->last_id = f.last_id;
	if (rc == 0)
		rc = fn(arg, s->d);
	/* A digest that failed midway holds part of a line's effect: dropped.
	 * One past the budget serves this call only. */
	e->digest_bytes -= s->bytes;
	s->bytes = registry_digest_bytes(s->d);
	e->digest_bytes += s->bytes;
	if (rc < 0 || e->digest_bytes > DIGEST_BYTES)
		slot_clear(e, s);
	pthread_mutex_unlock(&e->digest_lock);
	return rc;
}

void view_digests_free(struct engine *e)
{
	size_t i;

	for (i = 0; i < DIGEST_SLOTS; i++)
		slot_clear(e, &e->digests[i]);
}

void view_cases_free(struct view_cases *c)
{
	size_t i;

	for (i = 0; c->v && i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].status);
		free(c->v[i].command);
		free(c->v[i].evidence);
		free(c->v[i].note);
		free(c->v[i].started_at);
		free(c->v[i].log_sha256);
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* view_digest's callback of view_cases_read. */
static int copy_cases(void *arg, const struct registry_digest *d)
{
	struct view_cases *c = arg;
	struct registry_latest l;
	size_t i, n = strv_len(c->names);

	c->v = calloc(n ? n : 1, sizeof(*c->v));
	if (!c->v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct view_case *k = &c->v[c->n++];

		k->name = strdup(c->names[i]);
		if (!k->name)
			return -ENOMEM;
		if (!c->head || !registry_digest_latest(d, c->names[i], c->head, &l))
			continue;
		k->ran = 1;
		k->run = l.run;
		k->duration_s = l.duration_s;
		k->has_exit_code = l.has_exit_code;
		k->exit_code = l.exit_code;
		k->signal = l.signal;
		k->status = strdup(l.status);
		k->command = strdup(l.command);
		k->evidence = strdup(l.evidence);
		k->note = strdup(l.note);
		k->started_at = strdup(l.started_at);
		k->log_sha256 = strdup(l.log_sha256);
		if (!k->status || !k->command || !k->evidence || !k->note || !k->started_at ||
		    !k->log_sha256)
			return -ENOMEM;
	}
	return 0;
}

int view_cases_read(struct engine *e, int64_t item_id, struct view_cases *c)
{
	return view_digest(e, item_id, copy_cases, c);
}
