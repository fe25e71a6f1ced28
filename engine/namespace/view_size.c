/*
 * view_size.c - the sizes of rendered views remembered between stats.
 *
 * DESIGN
 *
 * A view's size is its rendering's length, and views are asked for their
 * attributes at every stat (their attribute timeout is 0: the kernel
 * cannot know when they change). A sweep of the mount (find, ls -lR, an
 * indexer) would render status, status.json, evidence.md, junit.xml,
 * report.html and change.diff of every item to give their sizes.
 *
 * Those views are functions of the item's row, the store's other rows, the
 * pipeline's configuration, the commits of the item's branch and base, and
 * the time (view.c, view_junit.c, view_report.c). The store's connection
 * is the daemon's only writer, and it counts its commits (store_commits);
 * a configuration is never freed nor reused while the engine is open; the
 * commits are read from git. So a size rendered under a stamp of those
 * (struct view_stamp) is the size of any rendering made under an equal
 * stamp, except one that depends on the time or on state kept in memory:
 * packet.c keeps nothing rendered while the item has a run going or a
 * state the store did not take (a full disk), nor a report.html with a
 * run not ended, nor a rendering during which the stamp moved.
 *
 * The commits. Looking up the branch and the base (a name such as "main"
 * is looked up as git does, in four places) at every stat cost two ref
 * lookups a view: 18% of the daemon's processor in a sweep that stat-ed
 * views. So each item's entry also remembers the change count of the
 * repository's refs (refs_watch.h: inotify, read at each stamp) at which
 * its commits were last looked up: while the count has not moved, they
 * are the same, and a stat looks nothing up. Once it moved (a commit on
 * any branch), the next stat of the item looks both up again, and when
 * they are unchanged its sizes stay and the entry takes the new count: a
 * commit elsewhere costs each item one lookup, not a rendering (when the
 * store did not change too: the engine records a move of an item's head,
 * and any write of the store moves every stamp). Where the refs cannot be
 * watched (the count is 0), and for an item whose base is no ref
 * (repo_rev_is_ref: main@{1}, an abbreviated commit id, which may resolve
 * otherwise with no ref changed), every stat looks them up.
 *
 * One entry per item (its stamp and a size per kind), least recently used
 * dropped first (lru.h), at most SIZE_ENTRIES: about 200 bytes each.
 *
 * index.html. The root's page is a row of every live item (view_index.c),
 * and `ls -l` of the root stats it: rendering it costs a few statements
 * and a ref lookup an item (0.23-0.31 s of a 0.40 s `ls -l` of 3,000
 * items, tests/bench/results/2026-12-05-vm-read-rows-ab.md). Its rows are
 * functions of the same things as the item's views, so its size is kept
 * once, under a stamp without head and base: the refs' count stands for
 * every item's commits, and a rendering that found an item whose base is
 * no ref, or a row that shows the time, is clocked and not kept.
 */
#include <assert.h>
#include <string.h>
#include <stdlib.h>

#include "namespace.h"

#define SIZE_ENTRIES 65536

struct size_entry {
	struct lru_node node; /* key: the item id */
	struct view_stamp stamp;
	unsigned have;        /* bit k: size[k] is kept */
	uint64_t size[VIEW_SIZE_KINDS];
};

static void free_entry(struct lru_node *node)
{
	free(node);
}

/* The change count of the refs of the repository at repo (refs_watch.h),
 * through the engine's one watch, which moves to another repository when
 * the configuration names another; no count is given twice. 0: not
 * watched. */
static uint64_t refs_count(struct engine *e, const char *repo)
{
	uint64_t n = 0;

	pthread_mutex_lock(&e->refs_lock);
	if (e->refs && strcmp(refs_watch_path(e->refs), repo) != 0) {
		/* A new watch counts from 1 again: its counts start past every
		 * count given before, so that none is given twice. */
		refs_watch_close(e->refs);
		e->refs = NULL;
		e->refs_base = e->refs_last;
	}
	if (e->refs || refs_watch_open(repo, &e->refs) == 0)
		n = refs_watch_count(e->refs);
	if (n) {
		n += e->refs_base;
		if (n > e->refs_last)
			e->refs_last = n;
	}
	pthread_mutex_unlock(&e->refs_lock);
	return n;
}

void view_stamp(struct engine *e, struct view_stamp *st)
{
	const struct pfs_config *cfg = pipeline_config_get(e->pl);

	memset(st, 0, sizeof(*st));
	/* The commits first: a change of the store from here on moves them.
	 * Then the refs' count: a change of a ref from here on moves it, and
	 * commits looked up after it are at least as new. */
	st->commits = store_commits(e->store);
	st->cfg = cfg;
	st->refs = cfg->repo ? refs_count(e, cfg->repo) : 1;
}

void view_stamp_exact(struct engine *e, const struct item *it, struct view_stamp *st)
{
	const struct pfs_config *cfg = pipeline_config_get(e->pl);

	if (!cfg->repo || repo_branch_head(cfg->repo, it->branch, st->head))
		st->head[0] = '\0';
	if (!cfg->repo || repo_resolve(cfg->repo, it->base, st->base))
		st->base[0] = '\0';
	st->exact = 1;
	/* A base that is no ref (main@{1}, an abbreviated id) may resolve
	 * otherwise with no ref changed: always looked up. */
	st->by_refs = !cfg->repo || repo_rev_is_ref(cfg->repo, it->base);
}

int view_stamp_equal(const struct view_stamp *a, const struct view_stamp *b)
{
	return a->commits == b->commits && a->cfg == b->cfg && a->refs == b->refs &&
	       a->exact == b->exact && a->by_refs == b->by_refs && strcmp(a->head, b->head) == 0 &&
	       strcmp(a->base, b->base) == 0;
}

void view_sizes_init(struct engine *e)
{
	pthread_mutex_init(&e->size_lock, NULL);
	pthread_mutex_init(&e->refs_lock, NULL);
	e->refs = NULL;
	e->refs_base = 0;
	e->refs_last = 0;
	lru_init(&e->sizes, SIZE_ENTRIES, SIZE_ENTRIES * sizeof(struct size_entry), free_entry);
	memset(&e->index_size, 0, sizeof(e->index_size));
}

void view_sizes_free(struct engine *e)
{
	lru_clear(&e->sizes);
	pthread_mutex_destroy(&e->size_lock);
	refs_watch_close(e->refs);
	e->refs = NULL;
	pthread_mutex_destroy(&e->refs_lock);
}

/* Whether the entry's sizes hold under st (see view_size_get). */
static int entry_holds(const struct size_entry *s, const struct view_stamp *st)
{
	if (s->stamp.commits != st->commits || s->stamp.cfg != st->cfg)
		return 0;
	if (!st->exact)
		return st->refs != 0 && s->stamp.refs == st->refs;
	return strcmp(s->stamp.head, st->head) == 0 && strcmp(s->stamp.base, st->base) == 0;
}

int view_size_get(struct engine *e, int64_t item, int kind, const struct view_stamp *st,
		  uint64_t *size)
{
	struct size_entry *s;
	int hit = 0;

	pthread_mutex_lock(&e->size_lock);
	s = (struct size_entry *)lru_get(&e->sizes, item);
	if (s && entry_holds(s, st)) {
		/* Looked up after st's count was read: they hold at it. */
		if (st->exact)
			s->stamp.refs = st->by_refs ? st->refs : 0;
		if (s->have & (1u << kind)) {
			*size = s->size[kind];
			hit = 1;
		}
	}
	pthread_mutex_unlock(&e->size_lock);
	return hit;
}

void view_size_keep(struct engine *e, int64_t item, int kind, const struct view_stamp *st,
		    uint64_t size)
{
	struct size_entry *s;

	assert(st->exact);
	pthread_mutex_lock(&e->size_lock);
	s = (struct size_entry *)lru_get(&e->sizes, item);
	if (s && !entry_holds(s, st)) {
		s->stamp = *st;
		s->have = 0;
	}
	if (!s && (s = calloc(1, sizeof(*s)))) {
		s->node.key = item;
		s->node.bytes = sizeof(*s);
		s->stamp = *st;
		s = (struct size_entry *)lru_put(&e->sizes, &s->node);
	}
	if (s) {
		s->stamp.refs = st->by_refs ? st->refs : 0;
		s->size[kind] = size;
		s->have |= 1u << kind;
	}
	pthread_mutex_unlock(&e->size_lock);
}

int view_index_size_get(struct engine *e, const struct view_stamp *st, uint64_t *size)
{
	const struct view_stamp_index *k = &e->index_size;
	int hit;

	pthread_mutex_lock(&e->size_lock);
	hit = st->refs != 0 && k->refs == st->refs && k->commits == st->commits && k->cfg == st->cfg;
	if (hit)
		*size = k->size;
	pthread_mutex_unlock(&e->size_lock);
	return hit;
}

void view_index_size_keep(struct engine *e, const struct view_stamp *st, uint64_t size)
{
	struct view_stamp_index *k = &e->index_size;

	if (!st->refs)
		return;
	pthread_mutex_lock(&e->size_lock);
	k->commits = st->commits;
	k->refs = st->refs;
	k->cfg = st->cfg;
	k->size = size;
	pthread_mutex_unlock(&e->size_lock);
}

int view_unstampable(struct engine *e, int64_t item)
{
	enum item_state state;
	char stage[8], err[8];

	return pipeline_active_item(e->pl, item) ||
	       pipeline_unstored_state(e->pl, item, &state, stage, sizeof(stage), err, sizeof(err));
}
