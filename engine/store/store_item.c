/*
 * store_item.c - the items table of the store (store.h): item rows, their
 * cache, their directory times and run numbers. store.c opens the store
 * and holds the helpers of store_int.h that this file uses.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "store_int.h"

/* The string members of struct item and their columns in ITEM_COLS. */
static const struct store_str_col item_strs[] = {
	{ offsetof(struct item, name), 1 },
	{ offsetof(struct item, title), 2 },
	{ offsetof(struct item, stage), 4 },
	{ offsetof(struct item, branch), 7 },
	{ offsetof(struct item, base), 8 },
	{ offsetof(struct item, verdict), 9 },
	{ offsetof(struct item, assessment), 10 },
	{ offsetof(struct item, last_error), 13 },
	{ offsetof(struct item, last_result), 14 },
	{ offsetof(struct item, created_at), 16 },
	{ offsetof(struct item, updated_at), 17 },
	{ offsetof(struct item, disposition), 24 },
	{ offsetof(struct item, route), 28 },
	{ offsetof(struct item, template), 29 },
	{ offsetof(struct item, engine), 30 },
	{ offsetof(struct item, review_request), 31 },
};
#define ITEM_NSTRS (sizeof(item_strs) / sizeof(item_strs[0]))

void item_clear(struct item *it)
{
	store__str_cols_free(it, item_strs, ITEM_NSTRS);
	memset(it, 0, sizeof(*it));
}

#define ITEM_COLS                                                                            \
	"id, name, title, state, stage, stage_ok, iteration, branch, base, verdict, assessment, " \
	"hold, approved, last_error, last_result, archived, created_at, updated_at, "       \
	"dir_mtime_ns, dir_ctime_ns, dir_atime_ns, verdict_head, assessment_head, round, "   \
	"disposition, dir_uid, dir_gid, dir_mode, route, template, engine, review_request"

static int item_row(sqlite3_stmt *st, struct item *it)
{
	memset(it, 0, sizeof(*it));
	it->id = sqlite3_column_int64(st, 0);
	it->stage_ok = sqlite3_column_int(st, 5);
	it->iteration = sqlite3_column_int(st, 6);
	it->hold = sqlite3_column_int(st, 11);
	it->approved = sqlite3_column_int(st, 12);
	it->archived = sqlite3_column_int(st, 15);
	it->dir_mtime_ns = sqlite3_column_int64(st, 18);
	it->dir_ctime_ns = sqlite3_column_int64(st, 19);
	it->dir_atime_ns = sqlite3_column_int64(st, 20);
	snprintf(it->verdict_head, sizeof(it->verdict_head), "%s",
		 (const char *)sqlite3_column_text(st, 21) ? (const char *)sqlite3_column_text(st, 21) : "");
	snprintf(it->assessment_head, sizeof(it->assessment_head), "%s",
		 (const char *)sqlite3_column_text(st, 22) ? (const char *)sqlite3_column_text(st, 22) : "");
	it->round = sqlite3_column_int(st, 23);
	it->dir_uid = (uid_t)sqlite3_column_int64(st, 25);
	it->dir_gid = (gid_t)sqlite3_column_int64(st, 26);
	it->dir_mode = (mode_t)sqlite3_column_int(st, 27) & 07777;
	if (store__str_cols_read(st, it, item_strs, ITEM_NSTRS)) {
		item_clear(it);
		return -ENOMEM;
	}
	/* A store of version 13 or later holds no other state (CHECK); an
	 * older one opened read-only might. */
	if (item_state_parse((const char *)sqlite3_column_text(st, 3), &it->state) != 0) {
		util_log(LOG_ERR, "store: item %s has an unknown state '%s'", it->name,
			 sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "");
		item_clear(it);
		return -EIO;
	}
	return 0;
}

int store_item_create_owned(struct store *s, const char *name, const char *branch,
			    const char *base, uid_t uid, gid_t gid, mode_t mode, int64_t *id)
{
	char now[32];
	int rc;

	store__now(now);
	pthread_mutex_lock(&s->lock);
	store__items_changed(s);
	rc = store__exec(s, "INSERT INTO items(name, branch, base, created_at, updated_at, "
			 "dir_mtime_ns, dir_ctime_ns, dir_atime_ns, dir_uid, dir_gid, dir_mode) "
			 "VALUES (?, ?, ?, ?4, ?4, ?5, ?5, ?5, ?6, ?7, ?8)",
			 "ssssIIIi", name, branch, base, now, util_now_ns(), store__id(uid),
			 store__id(gid), (int)(mode & 07777));
	if (rc == 0 && id)
		*id = sqlite3_last_insert_rowid(s->db);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void store__items_changed(struct store *s)
{
	assert(util_mutex_held(&s->lock));
	s->item_gen++;
}

int item_copy(struct item *dst, const struct item *src)
{
	int rc = 0;

	*dst = *src;
	for (size_t k = 0; k < ITEM_NSTRS; k++) {
		const char *v = STORE_STR(src, item_strs, k);

		STORE_STR(dst, item_strs, k) = strdup(v ? v : "");
		if (!STORE_STR(dst, item_strs, k))
			rc = -ENOMEM;
	}
	if (rc)
		item_clear(dst);
	return rc;
}

/* A kept item row (struct store's items). refs counts the table's
 * reference while it holds the entry and one per borrower
 * (store_item_get_shared); the last one frees it. */
struct item_entry {
	struct lru_node node; /* key: name_key of its name */
	uint64_t gen;         /* item_gen when it was read */
	int refs;             /* atomic */
	struct item it;
};

static void entry_unref(struct item_entry *k)
{
	if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		item_clear(&k->it);
		free(k);
	}
}

static void free_item_entry(struct lru_node *node)
{
	entry_unref((struct item_entry *)node);
}

void store__items_init(struct store *s)
{
	lru_init(&s->items, ITEM_CACHE, ITEM_CACHE_BYTES, free_item_entry);
}

/* The key of name in the item cache (FNV-1a); names that share one take
 * turns in its entry. */
static int64_t name_key(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *name; name++) {
		h ^= (unsigned char)*name;
		h *= 0x100000001b3ULL;
	}
	return (int64_t)h;
}

/* Keeps a copy of it under key (lock held): the entry, or NULL when memory
 * is short or the table would not hold it. */
static struct item_entry *item_keep(struct store *s, int64_t key, const struct item *it)
{
	struct item_entry *k = calloc(1, sizeof(*k));

	if (!k || item_copy(&k->it, it) != 0) {
		free(k);
		return NULL;
	}
	k->refs = 1;
	k->node.key = key;
	k->node.bytes = sizeof(*k) + strlen(it->name) + strlen(it->title) +
			strlen(it->stage) + strlen(it->branch) + strlen(it->base) +
			strlen(it->verdict) + strlen(it->assessment) + strlen(it->last_error) +
			strlen(it->last_result) + strlen(it->created_at) + strlen(it->updated_at) +
			strlen(it->disposition) + strlen(it->route) + strlen(it->template) +
			strlen(it->engine) + strlen(it->review_request) + 17;
	k->gen = s->item_gen;
	return (struct item_entry *)lru_put(&s->items, &k->node);
}

/* The item (by name, or by id when name is NULL) into out; share: out's
 * strings are a kept entry's and *ref holds it (see store_item_get_shared),
 * else out owns them. */
static int item_get_by(struct store *s, const char *sql, const char *name, int64_t id,
		       struct item *out, struct item_ref **ref)
{
	sqlite3_stmt *st;
	struct item_entry *k;
	int64_t key = name ? name_key(name) : 0;
	int rc, keep = name && s->writable;

	if (ref)
		*ref = NULL;
	pthread_mutex_lock(&s->lock);
	k = keep ? (struct item_entry *)lru_get(&s->items, key) : NULL;
	if (!k || k->gen != s->item_gen || strcmp(k->it.name, name) != 0) {
		k = NULL;
		if (name)
			rc = store__first(s, &st, sql, "s", name);
		else
			rc = store__first(s, &st, sql, "I", id);
		if (rc == 0)
			rc = item_row(st, out);
		store__done(st);
		if (rc == 0 && keep)
			k = item_keep(s, key, out);
		if (rc || !k || !ref) {
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
		item_clear(out);
	}
	if (ref) {
		__atomic_add_fetch(&k->refs, 1, __ATOMIC_RELAXED);
		*ref = (struct item_ref *)k;
		*out = k->it;
		rc = 0;
	} else {
		rc = item_copy(out, &k->it);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_item_get(struct store *s, const char *name, struct item *out)
{
	return item_get_by(s, "SELECT " ITEM_COLS " FROM items WHERE name = ?", name, 0, out, NULL);
}

int store_item_get_shared(struct store *s, const char *name, struct item *out,
			  struct item_ref **ref)
{
	return item_get_by(s, "SELECT " ITEM_COLS " FROM items WHERE name = ?", name, 0, out, ref);
}

void store_item_put(struct item_ref *ref)
{
	if (ref)
		entry_unref((struct item_entry *)ref);
}

int store_item_get_id(struct store *s, int64_t id, struct item *out)
{
	return item_get_by(s, "SELECT " ITEM_COLS " FROM items WHERE id = ?", NULL, id, out, NULL);
}

int store__item_write(struct store *s, const struct item *it, const char *now)
{
	if ((unsigned)it->state >= ITEM_NSTATES)
		return -EINVAL;
	store__items_changed(s);
	return store__exec(s, "UPDATE items SET title = ?, state = ?, stage = ?, stage_ok = ?, "
			   "iteration = ?, verdict = ?, assessment = ?, hold = ?, approved = ?, "
			   "last_error = ?, last_result = ?, archived = ?, updated_at = ?, "
			   "verdict_head = ?15, assessment_head = ?16, round = ?17, disposition = ?18, "
			   "route = ?19, template = ?20, engine = ?21, review_request = ?22 "
			   "WHERE id = ?14", "sssiissiissisIssisssss",
			   it->title, item_state_name(it->state), it->stage, it->stage_ok, it->iteration, it->verdict,
			   it->assessment, it->hold, it->approved, it->last_error, it->last_result,
			   it->archived, now, it->id, it->verdict_head, it->assessment_head, it->round,
			   it->disposition, it->route ? it->route : "", it->template ? it->template : "",
			   it->engine ? it->engine : "", it->review_request ? it->review_request : "");
}

int store_item_update(struct store *s, struct item *it)
{
	char now[32];
	int rc;

	store__now(now);
	pthread_mutex_lock(&s->lock);
	rc = store__item_write(s, it, now);
	pthread_mutex_unlock(&s->lock);
	if (rc == 0) {
		char *u = strdup(now);

		if (u) {
			free(it->updated_at);
			it->updated_at = u;
		}
	}
	return rc;
}

static int item_row_cb(sqlite3_stmt *st, void *elem, void *ctx)
{
	(void)ctx;
	return item_row(st, elem);
}

/* Rows of one page of store_item_each: a walk over 100,000 items holds
 * about 110 KiB of rows at a time, not 44 MiB. */
#define ITEM_EACH_PAGE 256

int store_item_each(struct store *s, int archived, int (*cb)(void *arg, const struct item *it),
		    void *arg)
{
	char *after = NULL; /* the last name of the page before; NULL: none */
	struct item *items;
	sqlite3_stmt *st;
	size_t n, i;
	int rc, stop = 0;

	/* Collect a page first so cb runs without the lock (it may call the
	 * store); the next page starts after the last name of this one. */
	do {
		items = NULL;
		n = 0;
		pthread_mutex_lock(&s->lock);
		rc = store__prepare(s, &st,
				    "SELECT " ITEM_COLS " FROM items WHERE archived = ? AND name > ? "
				    "ORDER BY name LIMIT ?",
				    "isi", archived, after ? after : "", ITEM_EACH_PAGE);
		if (rc == 0)
			rc = store__collect(s, st, sizeof(*items), item_row_cb, NULL,
					    (void **)&items, &n);
		pthread_mutex_unlock(&s->lock);
		if (rc == 0 && n > 0) {
			free(after);
			after = strdup(items[n - 1].name);
			if (!after)
				rc = -ENOMEM;
		}
		for (i = 0; i < n; i++) {
			if (rc == 0 && !stop && cb(arg, &items[i]))
				stop = 1;
			item_clear(&items[i]);
		}
		free(items);
	} while (rc == 0 && !stop && n == ITEM_EACH_PAGE);
	free(after);
	return rc < 0 ? rc : 0;
}

int store_item_set_times(struct store *s, int64_t item_id, int64_t atime_ns, int64_t mtime_ns)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	store__items_changed(s);
	rc = store__exec(s, "UPDATE items SET dir_atime_ns = COALESCE(?1, dir_atime_ns), "
			 "dir_mtime_ns = COALESCE(?2, dir_mtime_ns), dir_ctime_ns = ?3 WHERE id = ?4",
			 "ttII", atime_ns, mtime_ns, util_now_ns(), item_id);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = -ENOENT;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_item_set_owner(struct store *s, int64_t item_id, uid_t uid, gid_t gid, mode_t mode)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	store__items_changed(s);
	rc = store__exec(s, "UPDATE items SET dir_uid = ?, dir_gid = ?, dir_mode = ?, "
			 "dir_ctime_ns = ? WHERE id = ?", "IIiII", store__id(uid), store__id(gid),
			 (int)(mode & 07777), util_now_ns(), item_id);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = -ENOENT;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

