/*
 * packet.c - the packet namespace of SPEC §3, addressed by path: which
 * entries exist, their attributes and content, and what changing them
 * means. engine.h documents the public functions.
 *
 * Design. A path resolves to a struct node: its kind (a document, a
 * generated view, a log, a fixed directory...) and, inside an item, the
 * item row and the item-relative path. Documents live in the store; while
 * a document is open its content is held once in a struct open_doc shared
 * by every handle (so readers see writers at once, and concurrent
 * appenders do not lose lines) and committed as one new revision when a
 * handle is flushed after a change. Views are rendered from the store (and
 * git) at open and read from that snapshot, except the append-only ones
 * (events, registry.jsonl, logs), which are read live so that tail -f sees
 * them grow.
 *
 * Invariants: an open_doc is in e->docs while it has handles and is not
 * unlinked; its rel is kept current across renames. Nothing is committed
 * for a handle that wrote nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_int.h"
#include "packetfs-config.h"
#include "registry.h"
#include "repo.h"

enum kind {
	N_ROOT,
	N_EVENTS_ALL,
	N_PFS_DIR,
	N_PIPELINE,
	N_RECIPES_DIR,
	N_RECIPE,
	N_VERSION,
	N_ARCHIVE_DIR,
	N_ITEM,
	N_DOC,
	N_DOCDIR,
	N_CTL,
	N_STATUS,
	N_STATUS_JSON,
	N_ITEM_EVENTS,
	N_DIFF,
	N_STAGES_DIR,
	N_STAGE_LOG,
	N_VALIDATION_DIR,
	N_REGISTRY,
	N_EVIDENCE,
	N_LOGS_DIR,
	N_RECIPE_LOG,
	N_WORKTREE,
	N_HISTORY_DIR,
	N_HISTORY_FILE,
};

struct node {
	enum kind kind;
	int archived;        /* under .archive/: read-only */
	int has_item;
	struct item item;    /* when has_item */
	char rel[PATH_MAX];  /* item-relative path (documents, history) */
	int rev;             /* N_HISTORY_FILE */
	char name[256];      /* N_RECIPE: the file name */
	struct doc_meta doc; /* N_DOC, N_DOCDIR; sizes of logs and history files */
};

struct open_doc {
	int64_t item_id;
	char *rel;            /* protected by files_lock */
	int refs;             /* protected by files_lock */
	int unlinked;         /* protected by files_lock */
	pthread_mutex_t lock;
	struct buf content;   /* protected by lock */
	int dirty;            /* protected by lock */
	int stored;           /* protected by lock: exists in the store */
	mode_t mode;          /* protected by lock */
	int64_t mtime_ns;     /* protected by lock */
	struct open_doc *next;
};

struct pfs_file {
	struct engine *e;
	enum kind kind;
	int flags;
	int64_t item_id;
	char item_name[ITEM_NAME_MAX + 1];
	struct open_doc *od;  /* N_DOC */
	struct buf snap;      /* snapshot views, pipeline.json being edited */
	int64_t run_id;       /* logs */
	struct buf line;      /* ctl, registry: a partial line */
	int wrote;            /* anything written through this handle */
	int advanced;         /* ctl: the empty-write advance was applied */
	int trunc_pending;    /* documents: created or emptied at open, nothing written yet */
	int64_t provisional;  /* documents: revision committed before any write (see od_commit) */
	struct pfs_caller opener; /* who opened it: the author of commits at release */
	int snap_dirty;       /* pipeline.json changed */
};

static const char *const item_entries[] = {
	"ctl", "status", "status.json", "events", "change.diff", "stages", "validation",
	"worktree", ".history", NULL,
};

static void node_clear(struct node *n)
{
	if (n->has_item)
		item_clear(&n->item);
	n->has_item = 0;
}

/* The open document at (item, rel) or NULL; files_lock held. */
static struct open_doc *od_find_locked(struct engine *e, int64_t item, const char *rel)
{
	struct open_doc *d;

	for (d = e->docs; d; d = d->next)
		if (d->item_id == item && strcmp(d->rel, rel) == 0)
			return d;
	return NULL;
}

/* Fills n->doc from an open document's in-memory state. */
static void od_meta(struct open_doc *d, struct doc_meta *m)
{
	pthread_mutex_lock(&d->lock);
	m->is_dir = 0;
	m->size = d->content.len;
	m->mode = d->mode;
	m->mtime_ns = d->mtime_ns;
	m->ctime_ns = d->mtime_ns;
	pthread_mutex_unlock(&d->lock);
}

/* Resolves a document path inside an item: open documents first. */
static int resolve_doc(struct engine *e, struct node *n)
{
	struct open_doc *d;
	int rc;

	pthread_mutex_lock(&e->files_lock);
	d = od_find_locked(e, n->item.id, n->rel);
	if (d) {
		od_meta(d, &n->doc);
		n->kind = N_DOC;
	}
	pthread_mutex_unlock(&e->files_lock);
	if (d)
		return 0;
	rc = store_doc_stat(e->store, n->item.id, n->rel, &n->doc);
	if (rc)
		return rc;
	n->kind = n->doc.is_dir ? N_DOCDIR : N_DOC;
	return 0;
}

struct hist_probe {
	const char *dir; /* "" or "a/b" */
	size_t dlen;
	const char *leaf;
	int found_dir;
	int found_rev;
};

static int hist_probe_cb(void *arg, const struct rev_info *r)
{
	struct hist_probe *p = arg;
	const char *rest = r->path;

	if (p->dlen) {
		if (strncmp(r->path, p->dir, p->dlen) != 0 || r->path[p->dlen] != '/')
			return 0;
		rest = r->path + p->dlen + 1;
	}
	if (p->leaf) {
		size_t ll = strlen(p->leaf);

		if (strncmp(rest, p->leaf, ll) == 0 && rest[ll] == '/')
			p->found_dir = 1;
	}
	return p->found_dir;
}

/* Resolves .history/<rest> of an item. */
static int resolve_history(struct engine *e, struct node *n, const char *rest)
{
	struct hist_probe p = {0};
	const char *at;
	char dir[PATH_MAX];
	char *end;
	long rev;

	if (!*rest) {
		n->kind = N_HISTORY_DIR;
		n->rel[0] = '\0';
		return 0;
	}
	if (strlen(rest) >= sizeof(n->rel))
		return -ENAMETOOLONG;
	at = strrchr(rest, '@');
	if (at && !strchr(at, '/') && at[1]) {
		rev = strtol(at + 1, &end, 10);
		if (*end == '\0' && rev > 0) {
			char *data = NULL;
			size_t len;

			snprintf(n->rel, sizeof(n->rel), "%.*s", (int)(at - rest), rest);
			if (store_rev_read(e->store, n->item.id, n->rel, (int)rev, &data, &len) == 0) {
				free(data);
				n->kind = N_HISTORY_FILE;
				n->rev = (int)rev;
				n->doc.size = len;
				return 0;
			}
		}
	}
	/* A directory of .history: some revision's path lies below it. */
	snprintf(dir, sizeof(dir), "%s", rest);
	{
		char *slash = strrchr(dir, '/');

		if (slash) {
			*slash = '\0';
			p.dir = dir;
			p.dlen = strlen(dir);
			p.leaf = slash + 1;
		} else {
			p.dir = "";
			p.leaf = dir;
		}
	}
	store_rev_each(e->store, n->item.id, NULL, hist_probe_cb, &p);
	if (!p.found_dir)
		return -ENOENT;
	n->kind = N_HISTORY_DIR;
	snprintf(n->rel, sizeof(n->rel), "%s", rest);
	return 0;
}

/* Resolves the part of a path below an item directory. */
static int resolve_in_item(struct engine *e, struct node *n, const char *rest)
{
	const char *slash;
	size_t c1len;
	struct run r;

	if (!*rest) {
		n->kind = N_ITEM;
		return 0;
	}
	slash = strchr(rest, '/');
	c1len = slash ? (size_t)(slash - rest) : strlen(rest);
#define C1(s) (c1len == sizeof(s) - 1 && strncmp(rest, s, c1len) == 0)
	if (!slash) {
		if (C1("ctl"))
			return n->kind = N_CTL, 0;
		if (C1("status"))
			return n->kind = N_STATUS, 0;
		if (C1("status.json"))
			return n->kind = N_STATUS_JSON, 0;
		if (C1("events"))
			return n->kind = N_ITEM_EVENTS, 0;
		if (C1("change.diff"))
			return n->kind = N_DIFF, 0;
		if (C1("worktree"))
			return n->kind = N_WORKTREE, 0;
		if (C1("stages"))
			return n->kind = N_STAGES_DIR, 0;
		if (C1("validation"))
			return n->kind = N_VALIDATION_DIR, 0;
		if (C1(".history"))
			return resolve_history(e, n, "");
	} else if (C1(".history")) {
		return resolve_history(e, n, slash + 1);
	} else if (C1("stages")) {
		if (strchr(slash + 1, '/'))
			return -ENOENT;
		snprintf(n->rel, sizeof(n->rel), "%s", rest);
		if (store_run_by_log(e->store, n->item.id, n->rel, &r))
			return -ENOENT;
		n->doc.size = (uint64_t)r.log_size;
		run_clear(&r);
		return n->kind = N_STAGE_LOG, 0;
	} else if (C1("validation")) {
		const char *v = slash + 1;

		if (strcmp(v, "registry.jsonl") == 0)
			return n->kind = N_REGISTRY, 0;
		if (strcmp(v, "evidence.md") == 0)
			return n->kind = N_EVIDENCE, 0;
		if (strcmp(v, "logs") == 0)
			return n->kind = N_LOGS_DIR, 0;
		if (strncmp(v, "logs/", 5) == 0) {
			if (strchr(v + 5, '/'))
				return -ENOENT;
			snprintf(n->rel, sizeof(n->rel), "%s", rest);
			if (store_run_by_log(e->store, n->item.id, n->rel, &r))
				return -ENOENT;
			n->doc.size = (uint64_t)r.log_size;
			run_clear(&r);
			return n->kind = N_RECIPE_LOG, 0;
		}
	} else if (C1("ctl") || C1("status") || C1("status.json") || C1("events") ||
		   C1("change.diff") || C1("worktree")) {
		return -ENOTDIR;
	}
#undef C1
	if (strlen(rest) >= sizeof(n->rel))
		return -ENAMETOOLONG;
	snprintf(n->rel, sizeof(n->rel), "%s", rest);
	return resolve_doc(e, n);
}

/* Resolves path into n (node_clear it after). 0 or -ENOENT/-ENOTDIR. */
static int resolve(struct engine *e, const char *path, struct node *n)
{
	const char *p = path, *slash;
	char name[ITEM_NAME_MAX + 2];
	size_t len;
	int rc;

	memset(n, 0, sizeof(*n));
	if (p[0] != '/')
		return -EINVAL;
	p++;
	if (!*p)
		return n->kind = N_ROOT, 0;
	if (strcmp(p, "events") == 0)
		return n->kind = N_EVENTS_ALL, 0;
	if (strcmp(p, ".packetfs") == 0)
		return n->kind = N_PFS_DIR, 0;
	if (strcmp(p, ".packetfs/pipeline.json") == 0)
		return n->kind = N_PIPELINE, 0;
	if (strcmp(p, ".packetfs/version") == 0)
		return n->kind = N_VERSION, 0;
	if (strcmp(p, ".packetfs/recipes") == 0)
		return n->kind = N_RECIPES_DIR, 0;
	if (strncmp(p, ".packetfs/recipes/", 18) == 0) {
		const char *f = p + 18;
		const struct recipe *rp = NULL;
		size_t i;

		pthread_mutex_lock(&e->cfg_lock);
		for (i = 0; i < e->recipes.n; i++)
			if (strcmp(e->recipes.v[i].file, f) == 0)
				rp = &e->recipes.v[i];
		pthread_mutex_unlock(&e->cfg_lock);
		if (!rp)
			return -ENOENT;
		snprintf(n->name, sizeof(n->name), "%s", f);
		return n->kind = N_RECIPE, 0;
	}
	if (strncmp(p, ".packetfs/", 10) == 0 || strcmp(p, "events") == 0)
		return -ENOENT;
	if (strcmp(p, ".archive") == 0)
		return n->kind = N_ARCHIVE_DIR, 0;
	if (strncmp(p, ".archive/", 9) == 0) {
		n->archived = 1;
		p += 9;
	}
	slash = strchr(p, '/');
	len = slash ? (size_t)(slash - p) : strlen(p);
	if (len > ITEM_NAME_MAX)
		return -ENOENT;
	memcpy(name, p, len);
	name[len] = '\0';
	if (!engine_valid_item_name(name))
		return -ENOENT;
	rc = store_item_get(e->store, name, &n->item);
	if (rc)
		return rc;
	n->has_item = 1;
	if (n->item.archived != n->archived) {
		node_clear(n);
		return -ENOENT;
	}
	rc = resolve_in_item(e, n, slash ? slash + 1 : "");
	if (rc)
		node_clear(n);
	return rc;
}

/* ---- content of views ---- */

static int is_dir_kind(enum kind k)
{
	switch (k) {
	case N_ROOT:
	case N_PFS_DIR:
	case N_RECIPES_DIR:
	case N_ARCHIVE_DIR:
	case N_ITEM:
	case N_DOCDIR:
	case N_STAGES_DIR:
	case N_VALIDATION_DIR:
	case N_LOGS_DIR:
	case N_HISTORY_DIR:
		return 1;
	default:
		return 0;
	}
}

static const char ctl_verbs[] =
	"verbs: advance, run STAGE, rerun RECIPE, cancel, approve, hold, release, archive\n";

/* Renders the content of a non-log view into out. */
static int render(struct engine *e, struct node *n, struct buf *out)
{
	struct pfs_config *cfg;
	char **lines = NULL;
	size_t i, nl;
	int rc = 0;

	switch (n->kind) {
	case N_EVENTS_ALL:
		return store_events_render(e->store, 0, out);
	case N_ITEM_EVENTS:
		return store_events_render(e->store, n->item.id, out);
	case N_VERSION:
		return buf_printf(out, "packetfs %s\n", PACKETFS_VERSION);
	case N_PIPELINE:
		pthread_mutex_lock(&e->cfg_lock);
		rc = buf_puts(out, e->cfg_json);
		if (rc == 0 && (out->len == 0 || out->data[out->len - 1] != '\n'))
			rc = buf_puts(out, "\n");
		pthread_mutex_unlock(&e->cfg_lock);
		return rc;
	case N_RECIPE: {
		char path[PATH_MAX], *data = NULL;
		size_t len;

		cfg = engine_config_get(e);
		snprintf(path, sizeof(path), "%s/%s", cfg->recipes_dir ? cfg->recipes_dir : "", n->name);
		rc = util_read_file(path, 16 << 20, &data, &len);
		if (rc == 0)
			rc = buf_append(out, data, len);
		free(data);
		return rc;
	}
	case N_STATUS:
	case N_STATUS_JSON:
		return view_status(e, &n->item, n->kind == N_STATUS_JSON, out);
	case N_EVIDENCE:
		return view_evidence(e, &n->item, out);
	case N_DIFF:
		return view_change_diff(e, &n->item, out);
	case N_CTL:
		if (n->item.last_result[0])
			rc = buf_printf(out, "%s\n", n->item.last_result);
		return rc ? rc : buf_puts(out, ctl_verbs);
	case N_REGISTRY:
		rc = store_registry_lines(e->store, n->item.id, &lines, &nl);
		for (i = 0; rc == 0 && i < nl; i++) {
			rc = buf_puts(out, lines[i]);
			if (rc == 0)
				rc = buf_puts(out, "\n");
		}
		strv_free(lines);
		return rc;
	case N_HISTORY_FILE: {
		char *data = NULL;
		size_t len;

		rc = store_rev_read(e->store, n->item.id, n->rel, n->rev, &data, &len);
		if (rc == 0)
			rc = buf_append(out, data, len);
		free(data);
		return rc;
	}
	default:
		return -EINVAL;
	}
}

static int64_t parse_rfc3339(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (int64_t)timegm(&tm) * 1000000000;
}

/* Attributes of a resolved node. */
static int node_stat(struct engine *e, struct node *n, struct pfs_stat *st)
{
	int64_t now = util_now_ns();

	memset(st, 0, sizeof(*st));
	st->uid = e->uid;
	st->gid = e->gid;
	st->nlink = 1;
	st->mtime_ns = st->ctime_ns = e->start_ns;
	if (n->has_item) {
		int64_t t = parse_rfc3339(n->item.updated_at);

		if (t)
			st->mtime_ns = st->ctime_ns = t;
	}
	if (is_dir_kind(n->kind)) {
		st->mode = S_IFDIR | (n->kind == N_DOCDIR ? n->doc.mode : 0755);
		st->nlink = 2;
		if (n->kind == N_DOCDIR)
			st->mtime_ns = n->doc.mtime_ns, st->ctime_ns = n->doc.ctime_ns;
		if (n->archived || n->kind == N_STAGES_DIR || n->kind == N_LOGS_DIR ||
		    n->kind == N_HISTORY_DIR || n->kind == N_RECIPES_DIR || n->kind == N_ARCHIVE_DIR)
			st->mode = S_IFDIR | 0555;
		return 0;
	}
	switch (n->kind) {
	case N_WORKTREE: {
		char target[PATH_MAX];

		st->mode = S_IFLNK | 0777;
		st->size = (uint64_t)snprintf(target, sizeof(target), "%s/worktrees/%s", e->store_dir,
					      n->item.name);
		return 0;
	}
	case N_DOC:
		st->mode = S_IFREG | (n->archived ? (n->doc.mode & 0555) : n->doc.mode);
		st->size = n->doc.size;
		st->mtime_ns = n->doc.mtime_ns;
		st->ctime_ns = n->doc.ctime_ns;
		return 0;
	case N_STAGE_LOG:
	case N_RECIPE_LOG:
		st->mode = S_IFREG | 0444;
		st->size = n->doc.size;
		st->view = 1;
		st->mtime_ns = st->ctime_ns = now;
		return 0;
	default:
		break;
	}
	{
		struct buf b;
		int rc;

		buf_init(&b);
		rc = render(e, n, &b);
		if (rc && n->kind != N_DIFF && n->kind != N_RECIPE) {
			buf_free(&b);
			return rc;
		}
		st->size = b.len;
		buf_free(&b);
	}
	st->view = n->kind != N_PIPELINE;
	if (n->kind == N_CTL || n->kind == N_REGISTRY || n->kind == N_PIPELINE)
		st->mode = S_IFREG | (n->archived ? 0444 : 0644);
	else if (n->kind == N_RECIPE)
		st->mode = S_IFREG | 0555;
	else
		st->mode = S_IFREG | 0444;
	if (n->kind == N_STATUS || n->kind == N_STATUS_JSON || n->kind == N_DIFF ||
	    n->kind == N_EVIDENCE || n->kind == N_EVENTS_ALL || n->kind == N_ITEM_EVENTS ||
	    n->kind == N_REGISTRY)
		st->mtime_ns = st->ctime_ns = now;
	return 0;
}

int engine_getattr(struct engine *e, const char *path, struct pfs_stat *st)
{
	struct node n;
	int rc = resolve(e, path, &n);

	if (rc)
		return rc;
	rc = node_stat(e, &n, st);
	node_clear(&n);
	return rc;
}

int engine_readlink(struct engine *e, const char *path, char *buf, size_t size)
{
	struct node n;
	int rc = resolve(e, path, &n);

	if (rc)
		return rc;
	if (n.kind != N_WORKTREE)
		rc = -EINVAL;
	else if ((size_t)snprintf(buf, size, "%s/worktrees/%s", e->store_dir, n.item.name) >= size)
		rc = -ENAMETOOLONG;
	node_clear(&n);
	return rc;
}

/* ---- readdir ---- */

struct dir_walk {
	struct engine *e;
	const char *path; /* the directory's path */
	engine_dir_cb cb;
	void *arg;
	int stop;
	char **seen;      /* names already listed (documents vs open documents) */
};

/* Lists one child by resolving and stat-ing its full path. */
static int emit(struct dir_walk *w, const char *name)
{
	char full[PATH_MAX];
	struct pfs_stat st;

	if (w->stop)
		return 1;
	if ((size_t)snprintf(full, sizeof(full), "%s%s%s", w->path, strcmp(w->path, "/") ? "/" : "",
			     name) >= sizeof(full))
		return 0;
	if (engine_getattr(w->e, full, &st))
		return 0;
	if (w->cb(w->arg, name, &st))
		w->stop = 1;
	return w->stop;
}

static int emit_item(void *arg, const struct item *it)
{
	return emit(arg, it->name);
}

static int emit_doc(void *arg, const char *name, const struct doc_meta *m)
{
	struct dir_walk *w = arg;

	(void)m;
	strv_push(&w->seen, name);
	return emit(w, name);
}

static int emit_run(void *arg, const struct run *r)
{
	const char *slash = strrchr(r->log_path, '/');

	return emit(arg, slash ? slash + 1 : r->log_path);
}

struct hist_list {
	struct dir_walk *w;
	const char *dir;
	size_t dlen;
};

static int emit_hist(void *arg, const struct rev_info *r)
{
	struct hist_list *h = arg;
	const char *rest = r->path, *slash;
	char name[PATH_MAX];
	size_t i;

	if (h->dlen) {
		if (strncmp(r->path, h->dir, h->dlen) != 0 || r->path[h->dlen] != '/')
			return 0;
		rest = r->path + h->dlen + 1;
	}
	slash = strchr(rest, '/');
	if (slash) {
		snprintf(name, sizeof(name), "%.*s", (int)(slash - rest), rest);
		for (i = 0; h->w->seen && h->w->seen[i]; i++)
			if (strcmp(h->w->seen[i], name) == 0)
				return 0;
		strv_push(&h->w->seen, name);
	} else {
		if (r->size < 0)
			return 0;
		snprintf(name, sizeof(name), "%s@%d", rest, r->rev);
	}
	return emit(h->w, name);
}

/* Lists open documents of dir that are not stored yet. */
static void emit_open_docs(struct dir_walk *w, int64_t item, const char *dir)
{
	size_t dlen = strlen(dir), i;
	char **names = NULL;
	struct open_doc *d;

	pthread_mutex_lock(&w->e->files_lock);
	for (d = w->e->docs; d; d = d->next) {
		const char *rest = d->rel;

		if (d->item_id != item)
			continue;
		if (dlen) {
			if (strncmp(d->rel, dir, dlen) != 0 || d->rel[dlen] != '/')
				continue;
			rest = d->rel + dlen + 1;
		}
		if (strchr(rest, '/'))
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
			emit(w, names[i]);
	}
	strv_free(names);
}

int engine_readdir(struct engine *e, const char *path, engine_dir_cb cb, void *arg)
{
	struct dir_walk w = {e, path, cb, arg, 0, NULL};
	struct node n;
	size_t i;
	int rc = resolve(e, path, &n);

	if (rc)
		return rc;
	if (!is_dir_kind(n.kind)) {
		node_clear(&n);
		return -ENOTDIR;
	}
	switch (n.kind) {
	case N_ROOT:
		emit(&w, "events");
		emit(&w, ".packetfs");
		emit(&w, ".archive");
		rc = store_item_each(e->store, 0, emit_item, &w);
		break;
	case N_PFS_DIR:
		emit(&w, "pipeline.json");
		emit(&w, "recipes");
		emit(&w, "version");
		break;
	case N_RECIPES_DIR: {
		char **files = NULL;

		pthread_mutex_lock(&e->cfg_lock);
		for (i = 0; i < e->recipes.n; i++)
			strv_push(&files, e->recipes.v[i].file);
		pthread_mutex_unlock(&e->cfg_lock);
		for (i = 0; files && files[i]; i++)
			emit(&w, files[i]);
		strv_free(files);
		break;
	}
	case N_ARCHIVE_DIR:
		rc = store_item_each(e->store, 1, emit_item, &w);
		break;
	case N_ITEM:
		for (i = 0; item_entries[i]; i++)
			emit(&w, item_entries[i]);
		rc = store_doc_list(e->store, n.item.id, "", emit_doc, &w);
		emit_open_docs(&w, n.item.id, "");
		break;
	case N_VALIDATION_DIR:
		emit(&w, "registry.jsonl");
		emit(&w, "evidence.md");
		emit(&w, "logs");
		rc = store_doc_list(e->store, n.item.id, "validation", emit_doc, &w);
		emit_open_docs(&w, n.item.id, "validation");
		break;
	case N_DOCDIR:
		rc = store_doc_list(e->store, n.item.id, n.rel, emit_doc, &w);
		emit_open_docs(&w, n.item.id, n.rel);
		break;
	case N_STAGES_DIR:
		rc = store_run_each(e->store, n.item.id, "stage", NULL, emit_run, &w);
		break;
	case N_LOGS_DIR:
		rc = store_run_each(e->store, n.item.id, "recipe", NULL, emit_run, &w);
		break;
	case N_HISTORY_DIR: {
		struct hist_list h = {&w, n.rel, strlen(n.rel)};

		rc = store_rev_each(e->store, n.item.id, NULL, emit_hist, &h);
		break;
	}
	default:
		break;
	}
	strv_free(w.seen);
	node_clear(&n);
	return rc;
}

/* ---- who ---- */

struct who_buf {
	struct store_who w;
	char comm[32];
	char stage[64];
};

static void who_fill(struct engine *e, const struct pfs_caller *c, struct who_buf *wb)
{
	char path[64];
	FILE *f;

	memset(wb, 0, sizeof(*wb));
	wb->w.uid = c ? c->uid : getuid();
	wb->w.pid = c ? c->pid : 0;
	if (c && c->pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(wb->comm, sizeof(wb->comm), f))
				wb->comm[strcspn(wb->comm, "\n")] = '\0';
			fclose(f);
		}
		engine_active_stage_of(e, c->pid, wb->stage, sizeof(wb->stage));
	}
	wb->w.comm = wb->comm;
	wb->w.stage = wb->stage;
}

/* ---- open documents ---- */

static void od_destroy(struct open_doc *d)
{
	buf_free(&d->content);
	free(d->rel);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/*
 * Takes a reference on the open document (item, rel). An open one is
 * shared; otherwise it is loaded from the store, or made empty when create
 * and the store has none (excl: -EEXIST when it exists anywhere). The
 * store is read without files_lock, so the load is checked afterwards
 * against the revision then current and repeated if a commit slipped in.
 */
static int od_get(struct engine *e, int64_t item, const char *rel, int create, int excl,
		  mode_t mode, struct open_doc **out)
{
	struct open_doc *d, *nd;
	struct doc_meta m, now;
	int rc, tries;

	for (tries = 0; tries < 8; tries++) {
		pthread_mutex_lock(&e->files_lock);
		d = od_find_locked(e, item, rel);
		if (d && !excl)
			d->refs++;
		pthread_mutex_unlock(&e->files_lock);
		if (d) {
			if (excl)
				return -EEXIST;
			*out = d;
			return 0;
		}
		nd = calloc(1, sizeof(*nd));
		if (!nd || !(nd->rel = strdup(rel))) {
			free(nd);
			return -ENOMEM;
		}
		pthread_mutex_init(&nd->lock, NULL);
		nd->item_id = item;
		nd->refs = 1;
		rc = store_doc_stat(e->store, item, rel, &m);
		if (rc == 0 && m.is_dir)
			rc = -EISDIR;
		else if (rc == 0 && excl)
			rc = -EEXIST;
		if (rc == -ENOENT && create) {
			nd->mode = mode & 07777;
			nd->dirty = 1;
			nd->mtime_ns = util_now_ns();
			m.rev_id = 0;
			rc = 0;
		} else if (rc == 0) {
			rc = store_doc_read(e->store, item, rel, &nd->content.data, &nd->content.len);
			nd->content.cap = nd->content.len + 1;
			nd->mode = m.mode;
			nd->mtime_ns = m.mtime_ns;
			nd->stored = 1;
		}
		if (rc) {
			od_destroy(nd);
			return rc;
		}
		/* Insert unless another thread opened it, or a commit changed the
		 * document, meanwhile. */
		pthread_mutex_lock(&e->files_lock);
		d = od_find_locked(e, item, rel);
		if (!d) {
			if (store_doc_stat(e->store, item, rel, &now))
				now.rev_id = 0;
			if (now.rev_id == m.rev_id) {
				nd->next = e->docs;
				e->docs = nd;
				pthread_mutex_unlock(&e->files_lock);
				*out = nd;
				return 0;
			}
		}
		pthread_mutex_unlock(&e->files_lock);
		od_destroy(nd);
	}
	return -EAGAIN;
}

static void od_unlink_locked(struct engine *e, struct open_doc *d)
{
	struct open_doc **pp;

	for (pp = &e->docs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	d->next = NULL;
	d->unlinked = 1;
}

static void od_put(struct engine *e, struct open_doc *d)
{
	int last;

	pthread_mutex_lock(&e->files_lock);
	last = --d->refs == 0;
	if (last && !d->unlinked)
		od_unlink_locked(e, d);
	pthread_mutex_unlock(&e->files_lock);
	if (last)
		od_destroy(d);
}

/*
 * Commits a changed open document. amend (a revision id, or 0) names a
 * revision this handle committed only to make an O_TRUNC or a create
 * durable at a close before any write: while it is still the current one
 * its content is replaced, so a shell's `echo x > f` leaves one revision.
 * *rev_id (may be NULL) gets the current revision id afterwards. Holds
 * ns_lock shared, so a rename or unlink cannot move the path meanwhile.
 */
static int od_commit(struct engine *e, struct open_doc *d, const struct pfs_caller *c,
		     int64_t amend, int64_t *rev_id)
{
	struct doc_meta m;
	struct who_buf wb;
	char *rel;
	int rc = 0, unlinked;

	who_fill(e, c, &wb);
	pthread_rwlock_rdlock(&e->ns_lock);
	/* files_lock before d->lock never nests the other way (see od_meta). */
	pthread_mutex_lock(&e->files_lock);
	unlinked = d->unlinked;
	rel = strdup(d->rel);
	pthread_mutex_unlock(&e->files_lock);
	pthread_mutex_lock(&d->lock);
	if (!rel) {
		rc = -ENOMEM;
	} else if (d->dirty && !unlinked) {
		const char *data = d->content.data ? d->content.data : "";

		rc = amend ? store_doc_amend(e->store, d->item_id, rel, amend, data, d->content.len,
					     d->mode, d->mtime_ns)
			   : -ESTALE;
		if (rc == -ESTALE)
			rc = store_doc_write(e->store, d->item_id, rel, data, d->content.len, d->mode,
					     d->mtime_ns, d->stored ? "write" : "create", &wb.w, NULL);
		if (rc == 0) {
			d->dirty = 0;
			d->stored = 1;
		}
	}
	if (rc == 0 && rev_id && rel)
		*rev_id = store_doc_stat(e->store, d->item_id, rel, &m) == 0 ? m.rev_id : 0;
	pthread_mutex_unlock(&d->lock);
	pthread_rwlock_unlock(&e->ns_lock);
	free(rel);
	return rc;
}

static uint64_t max_doc(struct engine *e)
{
	return (uint64_t)engine_config_get(e)->max_doc_size;
}

/* Resizes an open document's content (zero-filling growth). Lock held. */
static int od_resize(struct open_doc *d, uint64_t size)
{
	if (size > d->content.len) {
		size_t grow = (size_t)(size - d->content.len);
		char *z = calloc(1, grow ? grow : 1);
		int rc;

		if (!z)
			return -ENOMEM;
		rc = buf_append(&d->content, z, grow);
		free(z);
		if (rc)
			return rc;
	} else if (size < d->content.len) {
		d->content.len = (size_t)size;
		d->content.data[size] = '\0';
	} else {
		return 0;
	}
	d->dirty = 1;
	d->mtime_ns = util_now_ns();
	return 0;
}

/* ---- creating and changing entries ---- */

/* Splits path into its parent and last component (name points into path). */
static int split(const char *path, char *parent, size_t size, const char **name)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1])
		return -EINVAL;
	if (slash == path)
		snprintf(parent, size, "/");
	else if ((size_t)(slash - path) >= size)
		return -ENAMETOOLONG;
	else
		snprintf(parent, size, "%.*s", (int)(slash - path), path);
	*name = slash + 1;
	if (strlen(*name) > 255)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether new documents may be made in directory node p; rel gets the
 * item-relative path of name inside it. */
static int doc_parent(struct node *p, const char *name, char *rel, size_t size)
{
	const char *prefix;

	switch (p->kind) {
	case N_ITEM:
		prefix = "";
		break;
	case N_VALIDATION_DIR:
		prefix = "validation";
		break;
	case N_DOCDIR:
		prefix = p->rel;
		break;
	case N_ROOT:
	case N_PFS_DIR:
	case N_RECIPES_DIR:
	case N_ARCHIVE_DIR:
	case N_STAGES_DIR:
	case N_LOGS_DIR:
	case N_HISTORY_DIR:
		return -EACCES;
	default:
		return -ENOTDIR;
	}
	if (p->archived)
		return -EACCES;
	if ((size_t)snprintf(rel, size, "%s%s%s", prefix, *prefix ? "/" : "", name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int item_create(struct engine *e, const char *name, const struct pfs_caller *who)
{
	struct pfs_config *cfg = engine_config_get(e);
	char branch[128], wt[PATH_MAX], err[512] = "";
	struct item it;
	int64_t id;
	int rc;

	if (strcmp(name, "events") == 0 || strcmp(name, ".packetfs") == 0 ||
	    strcmp(name, ".archive") == 0)
		return -EEXIST;
	if (!engine_valid_item_name(name))
		return -EINVAL;
	if (e->readonly)
		return -EROFS;
	if (store_item_get(e->store, name, &it) == 0) {
		item_clear(&it);
		return -EEXIST;
	}
	snprintf(branch, sizeof(branch), "packetfs/%s", name);
	snprintf(wt, sizeof(wt), "%s/worktrees/%s", e->store_dir, name);
	rc = repo_item_create(cfg->repo, cfg->base, branch, name, wt, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "packetfs: mkdir %s: %s\n", name, err);
		return rc == -EEXIST ? -EEXIST : rc == -ENOENT ? -ENOENT : -EIO;
	}
	rc = store_item_create(e->store, name, branch, cfg->base, &id);
	if (rc)
		return rc;
	{
		char extra[256];

		snprintf(extra, sizeof(extra), ",\"branch\":\"%s\",\"uid\":%d,\"pid\":%d", branch,
			 who ? (int)who->uid : 0, who ? (int)who->pid : 0);
		engine_event(e, id, name, "item_created", extra);
	}
	return 0;
}

int engine_mkdir(struct engine *e, const char *path, mode_t mode, const struct pfs_caller *who)
{
	char parent[PATH_MAX], rel[PATH_MAX];
	const char *name;
	struct node n, p;
	int rc;

	rc = split(path, parent, sizeof(parent), &name);
	if (rc)
		return rc;
	if (strcmp(parent, "/") == 0)
		return item_create(e, name, who);
	rc = resolve(e, path, &n);
	if (rc == 0) {
		node_clear(&n);
		return -EEXIST;
	}
	rc = resolve(e, parent, &p);
	if (rc)
		return rc;
	rc = doc_parent(&p, name, rel, sizeof(rel));
	if (rc == 0)
		rc = store_doc_mkdir(e->store, p.item.id, rel, mode);
	node_clear(&p);
	return rc;
}

static int ctl_apply(struct engine *e, const char *item, const char *line, char *msg, size_t size);

int engine_rmdir(struct engine *e, const char *path, const struct pfs_caller *who)
{
	struct node n;
	int rc = resolve(e, path, &n);

	(void)who;
	if (rc)
		return rc;
	switch (n.kind) {
	case N_ITEM:
		if (n.archived)
			rc = -EACCES;
		else
			rc = ctl_apply(e, n.item.name, "archive", NULL, 0);
		break;
	case N_DOCDIR:
		rc = n.archived ? -EACCES : store_doc_rmdir(e->store, n.item.id, n.rel);
		break;
	default:
		rc = is_dir_kind(n.kind) ? -EACCES : -ENOTDIR;
	}
	node_clear(&n);
	return rc;
}

int engine_unlink(struct engine *e, const char *path, const struct pfs_caller *who)
{
	struct who_buf wb;
	struct open_doc *d;
	struct node n;
	int rc = resolve(e, path, &n), was_open = 0;

	if (rc)
		return rc;
	if (is_dir_kind(n.kind))
		rc = -EISDIR;
	else if (n.kind == N_REGISTRY && !n.archived)
		rc = -EPERM;
	else if (n.kind != N_DOC || n.archived)
		rc = -EACCES;
	if (rc) {
		node_clear(&n);
		return rc;
	}
	who_fill(e, who, &wb);
	pthread_rwlock_wrlock(&e->ns_lock);
	pthread_mutex_lock(&e->files_lock);
	d = od_find_locked(e, n.item.id, n.rel);
	if (d) {
		od_unlink_locked(e, d);
		was_open = 1;
	}
	pthread_mutex_unlock(&e->files_lock);
	rc = store_doc_unlink(e->store, n.item.id, n.rel, &wb.w);
	pthread_rwlock_unlock(&e->ns_lock);
	if (rc == -ENOENT && was_open)
		rc = 0; /* created but never committed */
	node_clear(&n);
	return rc;
}

/* Commits any pending content of an open document at (item, rel). */
static int commit_if_open(struct engine *e, int64_t item, const char *rel,
			  const struct pfs_caller *who)
{
	struct open_doc *d;
	int rc = 0;

	pthread_mutex_lock(&e->files_lock);
	d = od_find_locked(e, item, rel);
	if (d)
		d->refs++;
	pthread_mutex_unlock(&e->files_lock);
	if (d) {
		rc = od_commit(e, d, who, 0, NULL);
		od_put(e, d);
	}
	return rc;
}

int engine_rename(struct engine *e, const char *from, const char *to, unsigned flags,
		  const struct pfs_caller *who)
{
	char parent[PATH_MAX], rel[PATH_MAX];
	const char *name;
	struct node a, b, p;
	struct who_buf wb;
	int rc, have_b;

	if (flags & ~1u)
		return -EINVAL; /* RENAME_EXCHANGE and others */
	rc = resolve(e, from, &a);
	if (rc)
		return rc;
	if ((a.kind != N_DOC && a.kind != N_DOCDIR) || a.archived) {
		rc = a.kind == N_ITEM ? -EPERM : -EACCES;
		goto out_a;
	}
	rc = split(to, parent, sizeof(parent), &name);
	if (rc)
		goto out_a;
	rc = resolve(e, parent, &p);
	if (rc)
		goto out_a;
	rc = doc_parent(&p, name, rel, sizeof(rel));
	if (rc == 0 && p.item.id != a.item.id)
		rc = -EXDEV;
	if (rc)
		goto out_p;
	have_b = resolve(e, to, &b) == 0;
	if (have_b) {
		if (b.kind == N_REGISTRY)
			rc = -EPERM; /* append-only: never replaced */
		else if (b.kind != N_DOC && b.kind != N_DOCDIR)
			rc = is_dir_kind(b.kind) ? -EISDIR : -EACCES;
		node_clear(&b);
		if (rc)
			goto out_p;
	}
	rc = commit_if_open(e, a.item.id, a.rel, who);
	if (rc)
		goto out_p;
	who_fill(e, who, &wb);
	pthread_rwlock_wrlock(&e->ns_lock);
	rc = store_doc_rename(e->store, a.item.id, a.rel, rel, flags & 1u, &wb.w);
	if (rc == 0) {
		struct open_doc *d;
		size_t alen = strlen(a.rel);

		/* Keep open documents on their content: the replaced target's handles
		 * go stale (as on a local disk), moved ones follow. */
		pthread_mutex_lock(&e->files_lock);
		d = od_find_locked(e, a.item.id, rel);
		if (d)
			od_unlink_locked(e, d);
		for (d = e->docs; d; d = d->next) {
			if (d->item_id != a.item.id)
				continue;
			if (strcmp(d->rel, a.rel) == 0 ||
			    (strncmp(d->rel, a.rel, alen) == 0 && d->rel[alen] == '/')) {
				struct buf nr;

				buf_init(&nr);
				if (buf_printf(&nr, "%s%s", rel, d->rel + alen) == 0) {
					free(d->rel);
					d->rel = buf_steal(&nr);
				}
			}
		}
		pthread_mutex_unlock(&e->files_lock);
	}
	pthread_rwlock_unlock(&e->ns_lock);
out_p:
	node_clear(&p);
out_a:
	node_clear(&a);
	return rc;
}

int engine_chmod(struct engine *e, const char *path, mode_t mode)
{
	struct pfs_stat st;
	struct node n;
	int rc = resolve(e, path, &n);

	if (rc)
		return rc;
	if ((n.kind == N_DOC || n.kind == N_DOCDIR) && !n.archived) {
		struct open_doc *d;

		pthread_mutex_lock(&e->files_lock);
		d = od_find_locked(e, n.item.id, n.rel);
		if (d) {
			pthread_mutex_lock(&d->lock);
			d->mode = mode & 07777;
			pthread_mutex_unlock(&d->lock);
		}
		pthread_mutex_unlock(&e->files_lock);
		rc = store_doc_set_mode(e->store, n.item.id, n.rel, mode);
		if (rc == -ENOENT && d)
			rc = 0;
	} else {
		rc = node_stat(e, &n, &st);
		if (rc == 0 && (st.mode & 07777) != (mode & 07777))
			rc = -EACCES;
	}
	node_clear(&n);
	return rc;
}

int engine_utimens(struct engine *e, const char *path, int64_t mtime_ns)
{
	struct node n;
	int rc = resolve(e, path, &n);

	if (rc)
		return rc;
	if (n.archived) {
		rc = -EACCES;
	} else if (n.kind == N_DOC || n.kind == N_DOCDIR) {
		struct open_doc *d;

		pthread_mutex_lock(&e->files_lock);
		d = od_find_locked(e, n.item.id, n.rel);
		if (d) {
			pthread_mutex_lock(&d->lock);
			d->mtime_ns = mtime_ns < 0 ? util_now_ns() : mtime_ns;
			pthread_mutex_unlock(&d->lock);
		}
		pthread_mutex_unlock(&e->files_lock);
		rc = store_doc_set_mtime(e->store, n.item.id, n.rel, mtime_ns);
		if (rc == -ENOENT && d)
			rc = 0;
	} else if (n.kind == N_CTL || n.kind == N_REGISTRY || n.kind == N_PIPELINE) {
		rc = 0; /* touch of a trigger or append-only file changes nothing */
	} else {
		rc = is_dir_kind(n.kind) ? 0 : -EACCES;
	}
	node_clear(&n);
	return rc;
}

/* ---- the trigger file ---- */

static int ctl_apply(struct engine *e, const char *item, const char *line, char *msg, size_t size)
{
	struct engine_cmd cmd;
	const char *sp;
	size_t vlen;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	while (*line == ' ' || *line == '\t')
		line++;
	sp = line + strcspn(line, " \t");
	vlen = (size_t)(sp - line);
	if (vlen == 0 || vlen >= sizeof(cmd.verb))
		return -EINVAL;
	snprintf(cmd.item, sizeof(cmd.item), "%s", item);
	memcpy(cmd.verb, line, vlen);
	while (*sp == ' ' || *sp == '\t')
		sp++;
	if (strlen(sp) >= sizeof(cmd.arg))
		return -EINVAL;
	snprintf(cmd.arg, sizeof(cmd.arg), "%s", sp);
	vlen = strlen(cmd.arg);
	while (vlen && (cmd.arg[vlen - 1] == ' ' || cmd.arg[vlen - 1] == '\t' ||
			cmd.arg[vlen - 1] == '\r'))
		cmd.arg[--vlen] = '\0';
	rc = engine_call(e, &cmd);
	if (rc == -ENOTCONN)
		snprintf(cmd.msg, sizeof(cmd.msg), "the pipeline engine is not running");
	if (msg)
		snprintf(msg, size, "%s", cmd.msg);
	if (rc)
		fprintf(stderr, "packetfs: %s: ctl %s: %s\n", item, line, cmd.msg);
	return rc;
}

/* Applies every complete line in f->line; keeps a trailing partial line. */
static int ctl_lines(struct pfs_file *f)
{
	char *nl;
	int rc = 0;

	while (rc == 0 && f->line.len && (nl = memchr(f->line.data, '\n', f->line.len))) {
		size_t n = (size_t)(nl - f->line.data);
		char *cmd = strndup(f->line.data, n);

		if (!cmd)
			return -ENOMEM;
		memmove(f->line.data, nl + 1, f->line.len - n - 1);
		f->line.len -= n + 1;
		f->line.data[f->line.len] = '\0';
		if (strspn(cmd, " \t\r") != strlen(cmd))
			rc = ctl_apply(f->e, f->item_name, cmd, NULL, 0);
		free(cmd);
	}
	if (rc)
		f->line.len = 0;
	return rc;
}

/* ---- the registry ---- */

/* Current size of registry.jsonl. */
static uint64_t registry_size(struct engine *e, int64_t item)
{
	char **lines = NULL;
	size_t n = 0, i;
	uint64_t size = 0;

	if (store_registry_lines(e->store, item, &lines, &n) == 0)
		for (i = 0; i < n; i++)
			size += strlen(lines[i]) + 1;
	strv_free(lines);
	return size;
}

static int registry_write(struct pfs_file *f, const char *buf, size_t size, uint64_t off)
{
	struct engine *e = f->e;
	size_t keep = f->line.len, start = 0, i;
	char **ok = NULL;
	int rc = 0;

	if (!(f->flags & O_APPEND) && off != registry_size(e, f->item_id) + f->line.len)
		return -EPERM;
	rc = buf_append(&f->line, buf, size);
	if (rc)
		return rc;
	/* Check every complete line first: all are stored or none. */
	for (i = 0; i < f->line.len && rc == 0; i++) {
		char err[256], *norm = NULL;

		if (f->line.data[i] != '\n')
			continue;
		rc = registry_check_external(f->line.data + start, i - start, &norm, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "packetfs: %s/validation/registry.jsonl: %s\n", f->item_name, err);
		} else {
			rc = strv_push(&ok, norm);
			free(norm);
		}
		start = i + 1;
	}
	if (rc) {
		f->line.len = keep;
		if (f->line.data)
			f->line.data[keep] = '\0';
		strv_free(ok);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	for (i = 0; ok && ok[i] && rc == 0; i++) {
		rc = store_registry_append(e->store, f->item_id, ok[i], "external", 0);
		if (rc == 0)
			engine_event(e, f->item_id, f->item_name, "registry_external", "");
	}
	strv_free(ok);
	memmove(f->line.data, f->line.data + start, f->line.len - start);
	f->line.len -= start;
	f->line.data[f->line.len] = '\0';
	return rc ? rc : (int)size;
}

/* ---- open files ---- */

static int wants_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

int engine_file_open(struct engine *e, const char *path, int flags, mode_t mode,
		     const struct pfs_caller *who, struct pfs_file **out)
{
	struct pfs_file *f;
	struct node n;
	int rc, creating = 0, wr = wants_write(flags);

	rc = resolve(e, path, &n);
	if (rc == -ENOENT && (flags & O_CREAT)) {
		char parent[PATH_MAX], rel[PATH_MAX];
		const char *name;
		struct node p;

		rc = split(path, parent, sizeof(parent), &name);
		if (rc)
			return rc;
		rc = resolve(e, parent, &p);
		if (rc)
			return rc;
		rc = doc_parent(&p, name, rel, sizeof(rel));
		if (rc == 0 && e->readonly)
			rc = -EROFS;
		if (rc) {
			node_clear(&p);
			return rc;
		}
		memset(&n, 0, sizeof(n));
		n.kind = N_DOC;
		n.has_item = 1;
		n.item = p.item; /* moves ownership */
		p.has_item = 0;
		snprintf(n.rel, sizeof(n.rel), "%s", rel);
		creating = 1;
	} else if (rc) {
		return rc;
	} else if ((flags & O_CREAT) && (flags & O_EXCL)) {
		node_clear(&n);
		return -EEXIST;
	}
	if (is_dir_kind(n.kind)) {
		rc = wr ? -EISDIR : -EISDIR;
		goto fail_node;
	}
	if (wr && (n.archived || e->readonly)) {
		rc = e->readonly ? -EROFS : -EACCES;
		goto fail_node;
	}
	if (wr && n.kind != N_DOC && n.kind != N_CTL && n.kind != N_REGISTRY && n.kind != N_PIPELINE) {
		rc = -EACCES;
		goto fail_node;
	}
	if (n.kind == N_REGISTRY && (flags & O_TRUNC) && registry_size(e, n.item.id) > 0) {
		rc = -EPERM;
		goto fail_node;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		rc = -ENOMEM;
		goto fail_node;
	}
	f->e = e;
	f->kind = n.kind;
	f->flags = flags;
	if (who)
		f->opener = *who;
	else
		f->opener.uid = getuid(), f->opener.gid = getgid();
	if (n.has_item) {
		f->item_id = n.item.id;
		snprintf(f->item_name, sizeof(f->item_name), "%s", n.item.name);
	}
	switch (n.kind) {
	case N_DOC:
		rc = od_get(e, n.item.id, n.rel, creating, creating && (flags & O_EXCL), mode, &f->od);
		f->trunc_pending = creating;
		if (rc == 0 && (flags & O_TRUNC) && wr) {
			pthread_mutex_lock(&f->od->lock);
			f->trunc_pending |= f->od->content.len > 0;
			rc = od_resize(f->od, 0);
			pthread_mutex_unlock(&f->od->lock);
		}
		break;
	case N_STAGE_LOG:
	case N_RECIPE_LOG: {
		struct run r;

		rc = store_run_by_log(e->store, n.item.id, n.rel, &r);
		if (rc == 0) {
			f->run_id = r.id;
			run_clear(&r);
		}
		break;
	}
	case N_EVENTS_ALL:
	case N_ITEM_EVENTS:
	case N_REGISTRY:
		break; /* read live */
	case N_PIPELINE:
		rc = (flags & O_TRUNC) ? 0 : render(e, &n, &f->snap);
		f->snap_dirty = (flags & O_TRUNC) != 0;
		break;
	default:
		rc = render(e, &n, &f->snap);
		if (rc && n.kind == N_DIFF) {
			/* A diff git cannot compute reads as an explanation. */
			buf_free(&f->snap);
			rc = buf_printf(&f->snap, "# change.diff unavailable: %s\n", strerror(-rc));
		}
		break;
	}
	if (rc) {
		if (f->od)
			od_put(e, f->od);
		buf_free(&f->snap);
		free(f);
		goto fail_node;
	}
	node_clear(&n);
	*out = f;
	return 0;
fail_node:
	node_clear(&n);
	return rc;
}

static ssize_t slice(const struct buf *b, char *out, size_t size, uint64_t off)
{
	size_t n;

	if (off >= b->len)
		return 0;
	n = b->len - (size_t)off < size ? b->len - (size_t)off : size;
	memcpy(out, b->data + off, n);
	return (ssize_t)n;
}

ssize_t engine_file_read(struct pfs_file *f, char *buf, size_t size, uint64_t off)
{
	struct engine *e = f->e;
	ssize_t n;

	switch (f->kind) {
	case N_DOC:
		pthread_mutex_lock(&f->od->lock);
		n = slice(&f->od->content, buf, size, off);
		pthread_mutex_unlock(&f->od->lock);
		return n;
	case N_STAGE_LOG:
	case N_RECIPE_LOG:
		return store_log_read(e->store, f->run_id, off, buf, size);
	case N_EVENTS_ALL:
	case N_ITEM_EVENTS:
	case N_REGISTRY: {
		/* Append-only: read live, so tail -f sees growth. */
		struct buf b;
		int rc;

		buf_init(&b);
		if (f->kind == N_REGISTRY) {
			char **lines = NULL;
			size_t i, nl;

			rc = store_registry_lines(e->store, f->item_id, &lines, &nl);
			for (i = 0; rc == 0 && i < nl; i++)
				rc = buf_printf(&b, "%s\n", lines[i]);
			strv_free(lines);
		} else {
			rc = store_events_render(e->store, f->kind == N_EVENTS_ALL ? 0 : f->item_id, &b);
		}
		n = rc ? rc : slice(&b, buf, size, off);
		buf_free(&b);
		return n;
	}
	default:
		return slice(&f->snap, buf, size, off);
	}
}

ssize_t engine_file_write(struct pfs_file *f, const char *buf, size_t size, uint64_t off,
			  const struct pfs_caller *who)
{
	struct open_doc *d = f->od;
	int rc;

	(void)who;
	f->wrote = 1;
	switch (f->kind) {
	case N_DOC:
		pthread_mutex_lock(&d->lock);
		if (f->flags & O_APPEND)
			off = d->content.len;
		if (off + size > max_doc(f->e)) {
			pthread_mutex_unlock(&d->lock);
			return -EFBIG;
		}
		rc = 0;
		if (off + size > d->content.len)
			rc = od_resize(d, off + size);
		if (rc == 0 && size) {
			memcpy(d->content.data + off, buf, size);
			d->dirty = 1;
			d->mtime_ns = util_now_ns();
		}
		pthread_mutex_unlock(&d->lock);
		return rc ? rc : (ssize_t)size;
	case N_CTL:
		if (f->line.len + size > 4096)
			return -EINVAL;
		rc = buf_append(&f->line, buf, size);
		if (rc == 0)
			rc = ctl_lines(f);
		return rc ? rc : (ssize_t)size;
	case N_REGISTRY:
		return registry_write(f, buf, size, off);
	case N_PIPELINE:
		if (off + size > (1u << 20))
			return -EFBIG;
		if (off > f->snap.len) {
			static const char spaces[64] = {0};

			while (f->snap.len < off)
				buf_append(&f->snap, spaces,
					   off - f->snap.len < sizeof(spaces) ? off - f->snap.len
									      : sizeof(spaces));
		}
		if (off + size > f->snap.len) {
			rc = buf_append(&f->snap, buf + (f->snap.len - off), off + size - f->snap.len);
			if (rc)
				return rc;
			memcpy(f->snap.data + off, buf, size - (off + size - f->snap.len));
		} else {
			memcpy(f->snap.data + off, buf, size);
		}
		f->snap_dirty = 1;
		return (ssize_t)size;
	default:
		return -EACCES;
	}
}

int engine_file_truncate(struct pfs_file *f, uint64_t size, const struct pfs_caller *who)
{
	int rc;

	(void)who;
	switch (f->kind) {
	case N_DOC:
		if (size > max_doc(f->e))
			return -EFBIG;
		pthread_mutex_lock(&f->od->lock);
		rc = od_resize(f->od, size);
		pthread_mutex_unlock(&f->od->lock);
		return rc;
	case N_CTL:
		return 0;
	case N_REGISTRY:
		return size == registry_size(f->e, f->item_id) ? 0 : -EPERM;
	case N_PIPELINE:
		if (size > (1u << 20))
			return -EFBIG;
		if (size <= f->snap.len) {
			f->snap.len = (size_t)size;
			if (f->snap.data)
				f->snap.data[size] = '\0';
		}
		f->snap_dirty = 1;
		return 0;
	default:
		return -EACCES;
	}
}

int engine_truncate(struct engine *e, const char *path, uint64_t size, const struct pfs_caller *who)
{
	struct pfs_file *f;
	int rc, flags = O_WRONLY;

	/* The registry refuses O_TRUNC-less writes only at the wrong offset;
	 * truncate by path goes through the same checks as ftruncate. */
	rc = engine_file_open(e, path, flags, 0, who, &f);
	if (rc)
		return rc;
	rc = engine_file_truncate(f, size, who);
	if (rc == 0 && f->kind == N_DOC)
		rc = od_commit(e, f->od, who, 0, NULL);
	f->advanced = 1; /* a truncate of ctl is no trigger */
	f->wrote = 1;
	if (rc)
		f->snap_dirty = 0;
	engine_file_release(f);
	return rc;
}

int engine_file_flush(struct pfs_file *f, const struct pfs_caller *who)
{
	struct engine *e = f->e;
	char err[512];
	int rc = 0;

	if (!who)
		who = &f->opener;
	switch (f->kind) {
	case N_DOC:
		/* A shell opens with O_TRUNC, dup2()s and closes the first fd before
		 * it writes: that close must be durable, but the writes that follow
		 * amend the same revision instead of adding one. */
		if (f->trunc_pending && !f->wrote) {
			f->trunc_pending = 0;
			return od_commit(e, f->od, who, 0, &f->provisional);
		}
		rc = od_commit(e, f->od, who, f->wrote ? f->provisional : 0, NULL);
		if (f->wrote)
			f->provisional = 0;
		return rc;
	case N_CTL:
		if (f->line.len) {
			char *cmd = strndup(f->line.data, f->line.len);

			f->line.len = 0;
			if (!cmd)
				return -ENOMEM;
			if (strspn(cmd, " \t\r") != strlen(cmd))
				rc = ctl_apply(e, f->item_name, cmd, NULL, 0);
			free(cmd);
			f->advanced = 1;
		}
		return rc;
	case N_REGISTRY:
		/* A fragment waits for the rest of its line across flushes (a shell
		 * closes duplicates of the fd after each command). A whole object
		 * that only lacks its newline is refused now: a line ends with one.
		 * Release drops a fragment that never got its end. */
		if (f->line.len) {
			char *norm = NULL, why[64];

			if (registry_check_external(f->line.data, f->line.len, &norm, why, sizeof(why)) == 0) {
				free(norm);
				f->line.len = 0;
				fprintf(stderr, "packetfs: %s/validation/registry.jsonl: line without "
						"newline not stored\n", f->item_name);
				return -EINVAL;
			}
		}
		return 0;
	case N_PIPELINE:
		if (!f->snap_dirty)
			return 0;
		/* Emptied and not (yet) written: refused, but kept pending so that a
		 * shell's write after its dup2 flush is judged whole at the next one. */
		if (f->snap.len == 0)
			return -EINVAL;
		f->snap_dirty = 0;
		rc = engine_config_set(e, f->snap.data ? f->snap.data : "", f->snap.len, err, sizeof(err));
		if (rc)
			fprintf(stderr, "packetfs: .packetfs/pipeline.json: %s (old configuration kept)\n",
				err);
		return rc;
	default:
		return 0;
	}
}

int engine_file_fsync(struct pfs_file *f, const struct pfs_caller *who)
{
	int rc = f->kind == N_DOC ? engine_file_flush(f, who) : 0;

	return rc ? rc : store_sync(f->e->store);
}

void engine_file_release(struct pfs_file *f)
{
	if (!f)
		return;
	if (f->kind == N_DOC)
		engine_file_flush(f, NULL);
	if (f->kind == N_PIPELINE && f->snap_dirty) {
		char err[512];

		if (engine_config_set(f->e, f->snap.data ? f->snap.data : "", f->snap.len, err,
				      sizeof(err)))
			fprintf(stderr, "packetfs: .packetfs/pipeline.json: %s (old configuration kept)\n",
				err);
	}
	/* Writing nothing to ctl means advance. Decided at the last close, not
	 * at a flush: a shell's `: > ctl` flushes once when it moves the fd. The
	 * outcome is in ctl's last result. */
	if (f->kind == N_CTL && wants_write(f->flags) && !f->wrote && !f->advanced)
		ctl_apply(f->e, f->item_name, "advance", NULL, 0);
	if (f->kind == N_REGISTRY && f->line.len)
		fprintf(stderr, "packetfs: %s/validation/registry.jsonl: incomplete last line "
				"(no newline) not stored\n",
			f->item_name);
	if (f->od)
		od_put(f->e, f->od);
	buf_free(&f->snap);
	buf_free(&f->line);
	free(f);
}

int engine_file_direct(const struct pfs_file *f)
{
	return f->kind != N_DOC;
}

int engine_file_getattr(struct pfs_file *f, struct pfs_stat *st)
{
	struct engine *e = f->e;

	if (f->kind == N_DOC) {
		memset(st, 0, sizeof(*st));
		pthread_mutex_lock(&f->od->lock);
		st->mode = S_IFREG | f->od->mode;
		st->size = f->od->content.len;
		st->mtime_ns = st->ctime_ns = f->od->mtime_ns;
		pthread_mutex_unlock(&f->od->lock);
		st->nlink = 1;
		st->uid = e->uid;
		st->gid = e->gid;
		return 0;
	}
	return -ENOSYS;
}
