/*
 * pipe_heads.c - item branch heads moved outside the engine (SPEC §5: a
 * commit made by hand in an item's worktree, a git push into its branch).
 *
 * Design: uv_fs_event watches (inotify) on the directories of the
 * repository's common git directory where the item branches' refs live:
 * refs/heads/packetfs (loose refs; git writes them as a lock file renamed
 * over the ref), refs/heads (where refs/heads/packetfs is made when the
 * first item is) and the git directory itself (packed-refs, rewritten by
 * git pack-refs and by a delete). A change of a loose ref arms a short
 * timer for that item's branch alone; one of packed-refs, of refs/heads/
 * packetfs itself or a watch that failed, for all items. When the timer
 * fires, those branch heads are read again and compared with the heads
 * seen last (other files of the git directory, such as the index, are
 * not looked at). A head that moved is reported as the engine
 * reports its own moves: change.diff, validation/evidence.md (runs at the
 * old head are stale), status and status.json change, and a "head_moved"
 * event names both commits. Verdict and assessment need nothing more:
 * they are bound to the commit they were made at (verdict_head,
 * assessment_head) and every gate and status compares that with the head
 * on disk when it decides.
 *
 * The first head seen of an item at start is only remembered. A new item's
 * first head is the one it was made at (pipeline_item_made): the branch
 * is made before the item is stored, so a scan woken by the new ref can
 * miss the item, and a move before the next scan would otherwise be taken
 * for the first head. Moves made while the daemon was down are not reported
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

#include "exec.h"
#include "format.h"
#include "git.h"
#include "store.h"
#include "pipe_int.h"

#define HEADS_DIRS 3
#define HEADS_DELAY_MS 20
#define HEADS_NAMES 32 /* items to check by name before checking all */

struct head_seen {
	int64_t id;
	char head[41];
};

struct pipe_heads {
	struct pipe *p;
	uv_fs_event_t ev[HEADS_DIRS]; /* the git dir, refs/heads, refs/heads/packetfs */
	int ev_init[HEADS_DIRS];      /* ev[i] is initialised and not closed */
	int ev_on[HEADS_DIRS];        /* ev[i] is started */
	uv_timer_t timer;
	int timer_on;
	int closing;                  /* handles still closing */
	int stopped;
	char repo[PATH_MAX];          /* the configured repository the watches are for */
	char gitdir[PATH_MAX];
	struct head_seen *seen;
	size_t nseen, capseen;
	char names[HEADS_NAMES][NAME_MAX + 1]; /* items whose loose ref changed */
	int nnames;
	int all;                      /* check every item at the next scan */
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
	if (!h->ev_init[i]) {
		if (uv_fs_event_init(&h->p->pl->loop, &h->ev[i]))
			return;
		h->ev[i].data = h;
		h->ev_init[i] = 1;
	}
	if (uv_fs_event_start(&h->ev[i], on_ref_event, dir, 0) == 0)
		h->ev_on[i] = 1;
}

/* Stops the watches (they start again on another directory). */
static void unwatch_all(struct pipe_heads *h)
{
	int i;

	for (i = 0; i < HEADS_DIRS; i++) {
		if (h->ev_on[i])
			uv_fs_event_stop(&h->ev[i]);
		h->ev_on[i] = 0;
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
		h->all = 1;
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
	char *b;
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
		pipe__changed(p->pl, it->name, "validation/junit.xml", PIPELINE_MODIFIED);
		pipe__changed(p->pl, it->name, "validation/measurements.md", PIPELINE_MODIFIED);
		pipe__changed(p->pl, it->name, "validation/scope.md", PIPELINE_MODIFIED);
		pipe__item_written(p, it);
		b = pipe__json_string(it->branch);
		pipe__event(p, it, "head_moved", ",\"branch\":%s,\"from\":\"%s\",\"to\":\"%s\"",
			    b ? b : "\"\"", s->head, head);
		free(b);
	}
	memcpy(s->head, head, sizeof(s->head));
	return 0;
}

/* Checks the items named since the last scan, or all of them. */
static void scan(struct pipe_heads *h)
{
	struct item it;
	int i;

	if (h->stopped)
		return;
	watch_refs(h);
	if (h->repo[0] && h->all) {
		/* check_item never stops the walk; on a store error the items not reached
		 * are not checked this time. */
		(void)store_item_each(h->p->pl->store, 0, check_item, h);
	} else if (h->repo[0]) {
		for (i = 0; i < h->nnames; i++) {
			if (store_item_get(h->p->pl->store, h->names[i], &it) != 0)
				continue;
			if (!it.archived)
				check_item(h, &it);
			item_clear(&it);
		}
	}
	h->all = 0;
	h->nnames = 0;
}

/* Notes what an event of watch i about name (NULL: unknown) asks to check. */
static void note_change(struct pipe_heads *h, int i, const char *name)
{
	size_t n;
	int k;

	if (i == 0) {
		/* The git directory: packed-refs alone holds branch heads. */
		if (name && strncmp(name, "packed-refs", 11) != 0)
			return;
		h->all = 1;
		return;
	}
	if (i == 1) {
		/* refs/heads: refs/heads/packetfs made or removed. */
		if (name && strcmp(name, "packetfs") != 0)
			return;
		h->all = 1;
		return;
	}
	if (!name || h->nnames == HEADS_NAMES) {
		h->all = 1;
		return;
	}
	/* git writes BRANCH.lock, then renames it over BRANCH. */
	n = strlen(name);
	if (n > 5 && strcmp(name + n - 5, ".lock") == 0)
		n -= 5;
	if (n > NAME_MAX)
		return;
	for (k = 0; k < h->nnames; k++)
		if (strncmp(h->names[k], name, n) == 0 && h->names[k][n] == '\0')
			return;
	memcpy(h->names[h->nnames], name, n);
	h->names[h->nnames++][n] = '\0';
}

static void on_timer(uv_timer_t *t)
{
	scan(t->data);
}

static void on_ref_event(uv_fs_event_t *ev, const char *name, int events, int status)
{
	struct pipe_heads *h = ev->data;
	int i = (int)(ev - h->ev);

	(void)events;
	if (status < 0) {
		/* The watch failed: start it again at the scan. */
		if (h->ev_on[i])
			uv_fs_event_stop(ev);
		h->ev_on[i] = 0;
		h->all = 1;
	} else {
		note_change(h, i, name);
	}
	if (!h->all && h->nnames == 0)
		return;
	if (!h->timer_on)
		scan(h);
	else if (!uv_is_active((uv_handle_t *)&h->timer))
		uv_timer_start(&h->timer, on_timer, HEADS_DELAY_MS, 0);
}

int pipe__heads_made(struct pipe *p, int64_t id, const char *head)
{
	struct pipe_heads *h = p->heads;
	struct head_seen *s;

	if (!h || h->stopped || strlen(head) != 40)
		return 0;
	if (!(s = seen_find(h, id)) && !(s = seen_add(h, id)))
		return -ENOMEM;
	memcpy(s->head, head, sizeof(s->head));
	return 0;
}

void pipe__heads_start(struct pipe *p)
{
	struct pipe_heads *h;

	if (p->heads || p->shutting_down || !(h = calloc(1, sizeof(*h))))
		return;
	h->p = p;
	h->all = 1;
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
	int i;

	if (!h)
		return;
	p->heads = NULL;
	h->stopped = 1;
	unwatch_all(h);
	for (i = 0; i < HEADS_DIRS; i++) {
		if (!h->ev_init[i])
			continue;
		h->ev_init[i] = 0;
		h->closing++;
		uv_close((uv_handle_t *)&h->ev[i], on_closed);
	}
	if (h->timer_on) {
		h->timer_on = 0;
		h->closing++;
		uv_close((uv_handle_t *)&h->timer, on_closed);
	}
	heads_free_if_done(h);
}
