/*
 * refusal.c - the last refused write of .packetfs/pipeline.json and of
 * each item's validation/registry.jsonl, read back beside them as
 * .packetfs/pipeline.error and ITEM/validation/registry.error (namespace.h).
 *
 * Design: the daemon keeps them in memory (they are about this mount's
 * writers, not part of an item's record): one slot for the configuration
 * and a short list by item id, each "TIME: why\n" with the RFC 3339 time
 * of the refusal. A slot is replaced by the next refusal (the
 * configuration's is emptied by the next configuration taken), and the
 * list keeps at most REFUSAL_ITEMS items (the oldest refusal goes first).
 * A refused item name (mkdir) has no item to keep it by: it is logged
 * and told in the mount's events instead.
 * Threads: any; everything under e->refusal_lock. Each change is told to
 * the watcher (engine_changed) so that a reader polling the file sees it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cjson/cJSON.h>

#include "packet_int.h"

#define REFUSAL_ITEMS 256

struct refusal {
	int64_t item; /* 0: pipeline.json */
	char *text;   /* "TIME: why\n" */
	struct refusal *next;
};

void packet__refusal_set(struct engine *e, int64_t item, const char *item_name, const char *why)
{
	struct refusal **pp, *r, *found = NULL;
	char when[32];
	struct buf b;
	size_t n = 0;

	buf_init(&b);
	util_rfc3339(util_now_ns(), when);
	if (buf_printf(&b, "%s: %s\n", when, why) < 0)
		return;
	pthread_mutex_lock(&e->refusal_lock);
	for (pp = &e->refusals; *pp; pp = &(*pp)->next) {
		if ((*pp)->item == item) {
			found = *pp;
			*pp = found->next;
			break;
		}
	}
	if (!found)
		found = calloc(1, sizeof(*found));
	if (found) {
		free(found->text);
		found->item = item;
		found->text = buf_steal(&b);
		found->next = e->refusals; /* the newest first */
		e->refusals = found;
		for (r = found; r->next; r = r->next) {
			if (++n >= REFUSAL_ITEMS) {
				struct refusal *old = r->next;

				r->next = old->next;
				free(old->text);
				free(old);
				break;
			}
		}
	}
	pthread_mutex_unlock(&e->refusal_lock);
	buf_free(&b);
	if (item)
		engine_changed(e, item_name, "validation/registry.error", ENGINE_MODIFIED);
	else
		engine_changed(e, NULL, ".packetfs/pipeline.error", ENGINE_MODIFIED);
}

void packet__refusal_clear(struct engine *e, int64_t item, const char *item_name)
{
	struct refusal **pp, *found = NULL;

	pthread_mutex_lock(&e->refusal_lock);
	for (pp = &e->refusals; *pp; pp = &(*pp)->next)
		if ((*pp)->item == item) {
			found = *pp;
			*pp = found->next;
			break;
		}
	pthread_mutex_unlock(&e->refusal_lock);
	if (!found)
		return;
	free(found->text);
	free(found);
	if (item)
		engine_changed(e, item_name, "validation/registry.error", ENGINE_MODIFIED);
	else
		engine_changed(e, NULL, ".packetfs/pipeline.error", ENGINE_MODIFIED);
}

int packet__refusal_render(struct engine *e, int64_t item, struct buf *out)
{
	struct refusal *r;
	int rc = 0;

	pthread_mutex_lock(&e->refusal_lock);
	for (r = e->refusals; r; r = r->next)
		if (r->item == item) {
			rc = buf_puts(out, r->text);
			break;
		}
	pthread_mutex_unlock(&e->refusal_lock);
	return rc;
}

void packet__refusals_free(struct engine *e)
{
	struct refusal *r;

	while ((r = e->refusals)) {
		e->refusals = r->next;
		free(r->text);
		free(r);
	}
}

void packet__refuse(struct engine *e, int64_t item, const char *item_name, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (item)
		util_log(LOG_WARNING, "%s/validation/registry.jsonl: %s", item_name, why);
	else
		util_log(LOG_WARNING, ".packetfs/pipeline.json: %s", why);
	packet__refusal_set(e, item, item_name, why);
}

int packet__item_name_refused(struct engine *e, const char *name)
{
	static const char why[] = "invalid item name (use [a-z0-9][a-z0-9._-]{0,63})";
	char shown[256];
	size_t i = 0, k = 0, n = strlen(name), len;
	struct buf extra;
	cJSON *j;
	char *q;

	/* The name as the event can hold it: bytes that are no UTF-8 as '?'. */
	while (i < n && k + 5 < sizeof(shown)) {
		len = util_utf8_char((const unsigned char *)name + i, n - i, NULL);
		if (len == 0) {
			shown[k++] = '?';
			i++;
		} else {
			memcpy(shown + k, name + i, len);
			k += len;
			i += len;
		}
	}
	shown[k] = '\0';
	j = cJSON_CreateString(shown);
	q = j ? cJSON_PrintUnformatted(j) : NULL;
	util_log(LOG_WARNING, "mkdir %s: %s", shown, why);
	buf_init(&extra);
	if (q && buf_printf(&extra, ",\"name\":%s,\"error\":\"%s\"", q, why) == 0)
		pipeline_event(e->pl, 0, NULL, "item_refused", extra.data);
	buf_free(&extra);
	free(q);
	cJSON_Delete(j);
	return -EINVAL;
}
