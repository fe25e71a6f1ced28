/*
 * pipe_heads.c - item branch heads moved outside the engine (SPEC §5: a
 * commit made by hand in an item's worktree, a git push into its branch).
 *
 * Design: uv_fs_event watches (inotify) on the directories of the
 * repository's common git directory where the item branches' refs live:
 * refs/heads/packetfs (loose refs; git writes them as a lock file renamed
 * over the ref), refs/heads (where refs/heads/packetfs is made when the
 * first item is) and the git directory itself (packed-refs, rewritten by
 * git pack-refs and by a delete). Any change there arms a short timer;
 * when it fires, every live item's branch head is read again and compared
 * with the head seen last. A head that moved is reported as the engine
 * reports its own moves: change.diff, validation/evidence.md (runs at the
 * old head are stale), status and status.json change, and a "head_moved"
 * event names both commits. Verdict and assessment need nothing more:
 * they are bound to the commit they were made at (verdict_head,
 * assessment_head) and every gate and status compares that with the head
 * on disk when it decides.
 *
 * The first head seen of an item (at start, or of a new item) is only
 * remembered. Moves made while the daemon was down are not reported
 * (status reads the head from git and shows them all the same). A
 * configuration naming another repository moves the watches at the next
 * scan (a ref change in the repository watched before, or the next start).
 *
 * Everything here runs on the loop thread.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../service/service.h"
#include "../store/store.h"
#include "pipe_int.h"

#define HEADS_DIRS 3
#define HEADS_DELAY_MS 20

struct head_seen {
	int64_t id;
	char head[41];
};

struct pipe_heads {
	struct pipe *p;
	uv_fs_event_t ev[HEADS_DIRS]; /* the git dir, refs/heads, refs/heads/packetfs */
	int ev_on[HEADS_DIRS];        /* ev[i] is initialised and not closed */
	uv_timer_t timer;
	int timer_on;
	int closing;                  /* handles still closing */
	int stopped;
	char repo[PATH_MAX];          /* the configured repository the watches are for */
	char gitdir[PATH_MAX];
	struct head_seen *seen;
	size_t nseen, capseen;
};

static void heads_free_if_done(struct pipe_heads *h)
{
	if (h->stopped && h->closing == 0) {
		free(h->seen);
		free(h);
	}
}

static void on_closed(uv_handle_t *hd)
{
	struct pipe_heads *h = hd->data;

	h->closing--;
	heads_free_if_done(h);
}

static void on_ref_event(uv_fs_event_t *ev, const char *name, int events, int status);

/* Starts the watch i on dir (once; a directory not there yet is tried again
 * at the next scan). */
static void watch_dir(struct pipe_heads *h, int i, const char *dir)
{
	if (h->ev_on[i] || h->stopped)
		return;
	if (uv_fs_event_init(&h->p->pl->loop, &h->ev[i]))
		return;
	h->ev[i].data = h;
	h->ev_on[i] = 1;
	if (uv_fs_event_start(&h->ev[i], on_ref_event, dir, 0)) {
		h->ev_on[i] = 0;
		h->closing++;
		uv_close((uv_handle_t *)&h->ev[i], on_closed);
	}
}

static void unwatch_all(struct pipe_heads *h)
{
	int i;

	for (i = 0; i < HEADS_DIRS; i++) {
		if (!h->ev_on[i])
			continue;
		h->ev_on[i] = 0;
		h->closing++;
		uv_close((uv_handle_t *)&h->ev[i], on_closed);
	}
}

/* Watches the refs of the configured repository (again, when the
 * configuration names another one). */
static void watch_refs(struct pipe_heads *h)
{
	const char *repo = pipeline_config_get(h->p->pl)->repo;
	char dir[PATH_MAX + 32];

	if (!repo || !repo[0])
		return;
	if (strcmp(repo, h->repo) != 0) {
		unwatch_all(h);
		h->gitdir[0] = '\0';
		snprintf(h->repo, sizeof(h->repo), "%s", repo);
	}
	if (!h->gitdir[0] && repo_common_dir(repo, h->gitdir, sizeof(h->gitdir)) != 0) {
		h->gitdir[0] = '\0';
		return;
	}
	watch_dir(h, 0, h->gitdir);
	snprintf(dir, sizeof(dir), "%s/refs/heads", h->gitdir);
	watch_dir(h, 1, dir);
	snprintf(dir, sizeof(dir), "%s/refs/heads/packetfs", h->gitdir);
	watch_dir(h, 2, dir);
}

static struct head_seen *seen_find(struct pipe_heads *h, int64_t id)
{
	size_t i;

	for (i = 0; i < h->nseen; i++)
		if (h->seen[i].id == id)
			return &h->seen[i];
	return NULL;
}

static struct head_seen *seen_add(struct pipe_heads *h, int64_t id)
{
	if (h->nseen == h->capseen) {
		size_t cap = h->capseen ? h->capseen * 2 : 16;
		struct head_seen *n = realloc(h->seen, cap * sizeof(*n));

		if (!n)
			return NULL;
		h->seen = n;
		h->capseen = cap;
	}
	h->seen[h->nseen].id = id;
	h->seen[h->nseen].head[0] = '\0';
	return &h->seen[h->nseen++];
}

/* One live item: its head now against the one seen last. */
static int check_item(void *arg, const struct item *it)
{
	struct pipe_heads *h = arg;
	struct pipe *p = h->p;
	struct head_seen *s = seen_find(h, it->id);
	char head[41] = "";
	int first = s == NULL;

	if (!it->branch || !it->branch[0] || repo_branch_head(h->repo, it->branch, head) != 0)
		return 0;
	if (!s && !(s = seen_add(h, it->id)))
		return 0;
	if (strcmp(s->head, head) == 0)
		return 0;
	if (!first) {
		pipe__changed(p->pl, it->name, "change.diff", PIPELINE_MODIFIED);
		pipe__changed(p->pl, it->name, "validation/evidence.md", PIPELINE_MODIFIED);
		pipe__item_written(p, it);
		pipe__event(p, it, "head_moved", ",\"branch\":\"%s\",\"from\":\"%s\",\"to\":\"%s\"",
			    it->branch, s->head, head);
	}
	memcpy(s->head, head, sizeof(s->head));
	return 0;
}

static void scan(struct pipe_heads *h)
{
	if (h->stopped)
		return;
	watch_refs(h);
	if (h->repo[0])
		store_item_each(h->p->pl->store, 0, check_item, h);
}

static void on_timer(uv_timer_t *t)
{
	scan(t->data);
}

static void on_ref_event(uv_fs_event_t *ev, const char *name, int events, int status)
{
	struct pipe_heads *h = ev->data;

	(void)name;
	(void)events;
	if (status < 0) {
		/* The directory went away (a repository moved): watch again. */
		int i;

		for (i = 0; i < HEADS_DIRS; i++)
			if (&h->ev[i] == ev && h->ev_on[i]) {
				h->ev_on[i] = 0;
				h->closing++;
				uv_close((uv_handle_t *)ev, on_closed);
			}
	}
	if (!h->timer_on)
		scan(h);
	else if (!uv_is_active((uv_handle_t *)&h->timer))
		uv_timer_start(&h->timer, on_timer, HEADS_DELAY_MS, 0);
}

void pipe__heads_start(struct pipe *p)
{
	struct pipe_heads *h;

	if (p->heads || p->shutting_down || !(h = calloc(1, sizeof(*h))))
		return;
	h->p = p;
	if (uv_timer_init(&p->pl->loop, &h->timer) == 0) {
		h->timer.data = h;
		h->timer_on = 1;
	}
	p->heads = h;
	scan(h);
}

void pipe__heads_stop(struct pipe *p)
{
	struct pipe_heads *h = p->heads;

	if (!h)
		return;
	p->heads = NULL;
	h->stopped = 1;
	unwatch_all(h);
	if (h->timer_on) {
		h->timer_on = 0;
		h->closing++;
		uv_close((uv_handle_t *)&h->timer, on_closed);
	}
	heads_free_if_done(h);
}
