/*
 * packet_dir.c - directory listings of the packet namespace (engine.h:
 * engine_readdir, engine_list): the root, .packetfs, the recipe catalog,
 * .archive, items (their fixed entries, documents, open documents not yet
 * stored), learnings/, logs and .history (both forms of a revision:
 * packet.c, "Revisions"). packet.c resolves the paths.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "packet_int.h"

struct dir_walk {
	struct engine *e;
	const char *path; /* the directory's path */
	engine_dir_cb cb;
	void *arg;
	int stop;
	int light;        /* engine_list: the entry's kind says its type, nothing is stat-ed */
	char **seen;      /* names already listed (documents vs open documents) */
};

/* Lists one child of kind k: by resolving and stat-ing its full path, or
 * (light) with mode (the file type, permission bits when the caller has
 * them) and the kind's view and stable flags. */
static int emit_kind(struct dir_walk *w, const char *name, enum kind k, mode_t mode)
{
	char full[PATH_MAX];
	struct pfs_stat st;

	if (w->stop)
		return 1;
	if (w->light) {
		memset(&st, 0, sizeof(st));
		st.mode = mode;
		st.view = (packet__kinds[k].flags & KIND_VIEW) != 0;
		st.stable = packet__stable_kind(k);
	} else {
		if ((size_t)snprintf(full, sizeof(full), "%s%s%s", w->path,
				     strcmp(w->path, "/") ? "/" : "", name) >= sizeof(full))
			return 0;
		if (engine_getattr(w->e, full, &st))
			return 0;
	}
	if (w->cb(w->arg, name, &st))
		w->stop = 1;
	return w->stop;
}

static int emit_item(void *arg, const struct item *it)
{
	return emit_kind(arg, it->name, N_ITEM, S_IFDIR);
}

static int emit_doc(void *arg, const char *name, const struct doc_meta *m)
{
	struct dir_walk *w = arg;

	strv_push(&w->seen, name);
	return m->is_dir ? emit_kind(w, name, N_DOCDIR, S_IFDIR | m->mode)
			 : emit_kind(w, name, N_DOC, m->type | m->mode);
}

static int emit_run(void *arg, const struct run *r)
{
	const char *slash = strrchr(r->log_path, '/');

	return emit_kind(arg, slash ? slash + 1 : r->log_path, N_STAGE_LOG, S_IFREG | 0444);
}

/* A listing of a directory of .history (packet.c, "Revisions"). */
struct hist_list {
	struct dir_walk *w;
	int64_t item;
	const char *dir;
	size_t dlen;
	int dir_form;            /* dir is also the directory form of the document dir */
	char last[PATH_MAX];     /* the directory listed last */
	char **longs;            /* the directories with long names listed */
};

/* Lists a revision of the document whose directory form is listed, as the
 * file named by its number. */
static int emit_rev_file(void *arg, const struct rev_info *r)
{
	struct hist_list *h = arg;
	char name[16];

	if (r->size < 0)
		return 0;
	snprintf(name, sizeof(name), "%d", r->rev);
	return emit_kind(h->w, name, N_HISTORY_FILE, packet__history_mode(r->type));
}

static int emit_hist(void *arg, const struct rev_info *r)
{
	struct hist_list *h = arg;
	const char *rest = r->path, *slash;
	char name[PATH_MAX];
	size_t len, k;
	int rev;

	if (h->dlen) {
		if (strncmp(r->path, h->dir, h->dlen) != 0 || r->path[h->dlen] != '/')
			return 0;
		rest = r->path + h->dlen + 1;
	}
	slash = strchr(rest, '/');
	len = slash ? (size_t)(slash - rest) : strlen(rest);
	if (!slash && len <= HISTORY_AT_MAX) {
		if (r->size < 0)
			return 0;
		snprintf(name, sizeof(name), "%s@%d", rest, r->rev);
		return emit_kind(h->w, name, N_HISTORY_FILE, packet__history_mode(r->type));
	}
	/* A directory: one that held documents, or the directory form of a
	 * long name, listed at its first revision with content. Rows come by
	 * path, so those of one name and those below it come together, but
	 * for a long name: other paths sort between "NAME" and "NAME/x"
	 * ("NAME-2"), so those are remembered. A name past NAME_MAX (which no
	 * document made through a mount has) could not be looked up. */
	if ((!slash && r->size < 0) || len > NAME_MAX)
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)len, rest);
	if (strcmp(name, h->last) == 0)
		return 0;
	snprintf(h->last, sizeof(h->last), "%s", name);
	if (len > HISTORY_AT_MAX) {
		for (k = 0; h->longs && h->longs[k]; k++)
			if (strcmp(h->longs[k], name) == 0)
				return 0;
		if (strv_push(&h->longs, name))
			return 0;
	} else if (h->dir_form && (rev = packet__history_rev(name)) != 0) {
		size_t size;

		/* The revision file of that number has the name. */
		if (store_rev_size(h->w->e->store, h->item, h->dir, rev, &size) == 0)
			return 0;
	}
	return emit_kind(h->w, name, N_HISTORY_DIR, S_IFDIR | 0555);
}

/* Lists open documents of dir that are not stored yet. */
static void emit_open_docs(struct dir_walk *w, int64_t item, const char *dir)
{
	size_t dlen = strlen(dir), i;
	char **names = NULL;
	struct open_doc *d;

	pthread_mutex_lock(&w->e->files_lock);
	for (d = w->e->docs; d; d = d->next) {
		const char *rest = packet__open_doc_child(d, item, dir, dlen);

		if (!rest)
			continue;
		strv_push(&names, rest);
	}
	pthread_mutex_unlock(&w->e->files_lock);
	for (i = 0; names && names[i]; i++) {
		size_t k;
		int dup = 0;

		for (k = 0; w->seen && w->seen[k]; k++)
			if (strcmp(w->seen[k], names[i]) == 0)
				dup = 1;
		if (!dup)
			emit_kind(w, names[i], N_DOC, S_IFREG);
	}
	strv_free(names);
}

/* Lists the fixed entries of directory kind dir, in their order; those of
 * a learnings item (learnings) are .history/ alone. */
static void emit_fixed(struct dir_walk *w, enum kind dir, int learnings)
{
	int k;

	for (k = 0; k < N_KINDS; k++)
		if (packet__kinds[k].name && packet__kinds[k].parent == dir &&
		    (!learnings || k == N_HISTORY_DIR))
			emit_kind(w, packet__kinds[k].name, k, packet__kinds[k].mode & S_IFMT);
}

static int list_dir(struct engine *e, const char *path, engine_dir_cb cb, void *arg, int light)
{
	struct dir_walk w = {e, path, cb, arg, 0, light, NULL};
	struct node n;
	size_t i;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	if (!packet__is_dir_kind(n.kind)) {
		packet__node_clear(&n);
		return -ENOTDIR;
	}
	switch (n.kind) {
	case N_ROOT:
		emit_fixed(&w, N_ROOT, 0);
		{
			struct item li;

			if (store_item_get(e->store, "learnings", &li) == 0) {
				if (li.archived == ITEM_LEARNINGS)
					emit_kind(&w, "learnings", N_ITEM, S_IFDIR);
				item_clear(&li);
			}
		}
		rc = store_item_each(e->store, 0, emit_item, &w);
		break;
	case N_PFS_DIR: {
		char **files;

		emit_fixed(&w, N_PFS_DIR, 0);
		files = packet__tmp_names(e);
		for (i = 0; files && files[i]; i++)
			emit_kind(&w, files[i], N_PFS_TMP, S_IFREG);
		strv_free(files);
		break;
	}
	case N_RECIPES_DIR: {
		const struct recipe_catalog *cat;
		char **files = NULL;

		cat = pipeline_recipes_hold(e->pl);
		for (i = 0; i < cat->n; i++)
			strv_push(&files, cat->v[i].file);
		pipeline_recipes_release(e->pl);
		for (i = 0; files && files[i]; i++)
			emit_kind(&w, files[i], N_RECIPE, S_IFREG);
		strv_free(files);
		break;
	}
	case N_ARCHIVE_DIR:
		rc = store_item_each(e->store, 1, emit_item, &w);
		break;
	case N_ITEM:
		/* The engine's entries before the documents: a recursive removal
		 * meets one first and archives the item (packet_remove.c). */
		emit_fixed(&w, N_ITEM, n.learnings);
		rc = store_doc_list(e->store, n.item.id, "", emit_doc, &w);
		emit_open_docs(&w, n.item.id, "");
		break;
	case N_VALIDATION_DIR:
		emit_fixed(&w, N_VALIDATION_DIR, 0);
		rc = store_doc_list(e->store, n.item.id, "validation", emit_doc, &w);
		emit_open_docs(&w, n.item.id, "validation");
		break;
	case N_DOCDIR:
		rc = store_doc_list(e->store, n.item.id, n.rel, emit_doc, &w);
		emit_open_docs(&w, n.item.id, n.rel);
		break;
	case N_STAGES_DIR:
		rc = store_run_each(e->store, n.item.id, "stage", RUN_ANY, emit_run, &w);
		break;
	case N_LOGS_DIR:
		rc = store_run_each(e->store, n.item.id, "recipe", RUN_ANY, emit_run, &w);
		break;
	case N_HISTORY_DIR: {
		const char *base = strrchr(n.rel, '/');
		struct hist_list h = {&w, n.item.id, n.rel, strlen(n.rel), 0, "", NULL};

		h.dir_form = strlen(base ? base + 1 : n.rel) > HISTORY_AT_MAX;
		if (h.dir_form)
			rc = store_rev_each(e->store, n.item.id, n.rel, emit_rev_file, &h);
		if (rc == 0)
			rc = store_rev_each_below(e->store, n.item.id, n.rel, emit_hist, &h);
		strv_free(h.longs);
		break;
	}
	default:
		break;
	}
	strv_free(w.seen);
	packet__node_clear(&n);
	return rc;
}

int engine_readdir(struct engine *e, const char *path, engine_dir_cb cb, void *arg)
{
	return list_dir(e, path, cb, arg, 0);
}

int engine_list(struct engine *e, const char *path, engine_dir_cb cb, void *arg)
{
	return list_dir(e, path, cb, arg, 1);
}
