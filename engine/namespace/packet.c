/*
 * packet.c - the packet namespace of SPEC §3, addressed by path: which
 * entries exist, their attributes and the content of views. engine.h
 * documents the public functions; packet_dir.c lists directories,
 * packet_doc.c holds open documents, packet_ns.c the changes to the
 * namespace, packet_file.c open files, packet_history.c .history/ (packet_int.h is
 * what they share).
 *
 * Design. A path resolves to a struct node: its kind (a document, a
 * generated view, a log, a fixed directory...) and, inside an item, the
 * item row and the item-relative path. Documents live in the store; an
 * open document (packet_doc.c) is looked up first, so one created and not
 * yet committed already exists, with its in-memory size. Views are
 * rendered from the store (and git) on demand: a stat renders to learn the
 * size, an open (packet_file.c) keeps the rendering as its snapshot; a
 * listing for the front end (engine_list) renders nothing, it names the
 * entries with their types. Every stat says whether its attributes are
 * stable (engine.h): documents and directories whose times the store keeps,
 * and sealed logs, as long as nothing held open can still move them.
 *
 * Invariants: a node owns its item row while has_item, or a reference on
 * the store's kept copy of it (item_ref: the row's strings are that copy's
 * and nothing changes them); packet__node_clear frees or releases it, and
 * packet__resolve leaves nothing to clear when it fails.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "packet_int.h"
#include "packetfs-config.h"

void packet__node_clear(struct node *n)
{
	if (n->has_item && n->item_ref)
		memset(&n->item, 0, sizeof(n->item));
	else if (n->has_item)
		item_clear(&n->item);
	store_item_put(n->item_ref);
	n->item_ref = NULL;
	n->has_item = 0;
}

/* Resolves a document path inside an item: open documents first, but for
 * a new one whose commit failed (a full disk): the close that reported
 * the failure ended its creation, and the next open of the name creates
 * it again (the kernel must not be told it exists, or it would send that
 * open without O_CREAT). */
static int resolve_doc(struct engine *e, struct node *n)
{
	struct open_doc *d;
	int rc;

	pthread_mutex_lock(&e->files_lock);
	d = packet__od_find_locked(e, n->item.id, n->rel);
	if (d) {
		int hidden;

		pthread_mutex_lock(&d->lock);
		hidden = !d->stored && d->commit_failed;
		pthread_mutex_unlock(&d->lock);
		if (hidden)
			d = NULL;
	}
	if (d) {
		packet__od_meta(e, d, &n->doc);
		n->kind = N_DOC;
		n->open = !packet__od_quiet(d);
	}
	pthread_mutex_unlock(&e->files_lock);
	if (d)
		return 0;
	rc = store_doc_stat(e->store, n->item.id, n->rel, &n->doc);
	if (rc)
		return rc;
	n->kind = n->doc.is_dir ? N_DOCDIR : N_DOC;
	n->from_store = 1;
	return 0;
}

static int64_t parse_rfc3339(const char *s);

int packet__run_sealed(const struct run *r)
{
	return r->log_sha256[0] && r->status != RUN_RUNNING &&
	       r->status != RUN_QUEUED;
}

/* Fills a log's node from its run: size, and once sealed its end time. */
static void log_node(struct node *n, const struct run *r)
{
	n->doc.size = (uint64_t)r->log_size;
	n->sealed = packet__run_sealed(r);
	if (n->sealed)
		n->doc.mtime_ns = parse_rfc3339(r->finished_at);
}

/* Permission bits of the generated entries (docs/operating.md "Sharing a mount"): the
 * store owner's, with the store's group; the root and validation/ (where
 * members make items and documents) and ctl and registry.jsonl (which
 * members write) are writable by the group, the root sticky (an item is
 * removed, which archives it, by its owner alone). pipeline.json names
 * the programs the daemon runs: its owner's alone; record takes requests
 * from anyone the mount lets in. */
#define MODE_ROOT 01775
#define MODE_SHARED_DIR 0775
#define MODE_SHARED_FILE 0664

/* A stable directory whose listing is stable; a view dated by the stat. */
#define KIND_LISTED (KIND_STABLE | KIND_LIST_STABLE)
#define KIND_DATED_VIEW (KIND_NOW | KIND_VIEW)

const struct kind_info packet__kinds[N_KINDS] = {
	[N_ROOT] = {NULL, N_ROOT, S_IFDIR | MODE_ROOT, KIND_STABLE},
	[N_EVENTS_ALL] = {"events", N_ROOT, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_INDEX] = {"index.html", N_ROOT, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_PFS_DIR] = {".packetfs", N_ROOT, S_IFDIR | 0755, KIND_STABLE},
	[N_ARCHIVE_DIR] = {".archive", N_ROOT, S_IFDIR | 0555, KIND_STABLE},
	[N_PIPELINE] = {"pipeline.json", N_PFS_DIR, S_IFREG | 0644, KIND_WRITE},
	[N_PIPELINE_ERROR] = {"pipeline.error", N_PFS_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_RECIPES_DIR] = {"recipes", N_PFS_DIR, S_IFDIR | 0555, KIND_STABLE},
	[N_VERSION] = {"version", N_PFS_DIR, S_IFREG | 0444, KIND_STABLE | KIND_VIEW},
	[N_COMPUTE_ENV] = {"compute-env.md", N_PFS_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_RECIPE] = {NULL, N_RECIPES_DIR, S_IFREG | 0555, KIND_VIEW},
	/* Its mode is its own (packet_tmp.c). */
	[N_PFS_TMP] = {NULL, N_PFS_DIR, S_IFREG | 0644, KIND_VIEW | KIND_WRITE},
	[N_ITEM] = {NULL, N_ROOT, S_IFDIR | 0755, KIND_LISTED},
	[N_CTL] = {"ctl", N_ITEM, S_IFREG | MODE_SHARED_FILE, KIND_VIEW | KIND_WRITE},
	[N_STATUS] = {"status", N_ITEM, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_STATUS_JSON] = {"status.json", N_ITEM, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_ITEM_EVENTS] = {"events", N_ITEM, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_DIFF] = {"change.diff", N_ITEM, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_REPORT] = {"report.html", N_ITEM, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_ITEM_COMPUTE_ENV] = {"compute-env.md", N_ITEM, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_STAGES_DIR] = {"stages", N_ITEM, S_IFDIR | 0555, KIND_LISTED},
	[N_VALIDATION_DIR] = {"validation", N_ITEM, S_IFDIR | MODE_SHARED_DIR, KIND_LISTED},
	[N_WORKTREE] = {"worktree", N_ITEM, S_IFLNK | 0777, 0},
	/* Not listed stable: a document's first revision adds its name
	 * unreported. */
	[N_HISTORY_DIR] = {".history", N_ITEM, S_IFDIR | 0555, KIND_STABLE},
	[N_REGISTRY] = {"registry.jsonl", N_VALIDATION_DIR, S_IFREG | MODE_SHARED_FILE,
			KIND_DATED_VIEW | KIND_WRITE},
	[N_REGISTRY_ERROR] = {"registry.error", N_VALIDATION_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_RECORD] = {"record", N_VALIDATION_DIR, S_IFREG | 0666, KIND_DATED_VIEW | KIND_WRITE},
	[N_EVIDENCE] = {"evidence.md", N_VALIDATION_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_JUNIT] = {"junit.xml", N_VALIDATION_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_SCOPE] = {"scope.md", N_VALIDATION_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_MEASUREMENTS] = {"measurements.md", N_VALIDATION_DIR, S_IFREG | 0444, KIND_DATED_VIEW},
	[N_LOGS_DIR] = {"logs", N_VALIDATION_DIR, S_IFDIR | 0555, KIND_LISTED},
	[N_DOC] = {NULL, N_ITEM, S_IFREG | 0644, KIND_STABLE | KIND_WRITE},
	[N_DOCDIR] = {NULL, N_ITEM, S_IFDIR | 0755, KIND_LISTED},
	[N_STAGE_LOG] = {NULL, N_STAGES_DIR, S_IFREG | 0444, KIND_VIEW},
	[N_RECIPE_LOG] = {NULL, N_LOGS_DIR, S_IFREG | 0444, KIND_VIEW},
	[N_HISTORY_FILE] = {NULL, N_HISTORY_DIR, S_IFREG | 0444, KIND_VIEW},
};

int packet__fixed_entry(enum kind parent, const char *name, size_t len)
{
	int k;

	for (k = 0; k < N_KINDS; k++)
		if (packet__kinds[k].name && packet__kinds[k].parent == parent &&
		    strlen(packet__kinds[k].name) == len &&
		    memcmp(packet__kinds[k].name, name, len) == 0)
			return k;
	return -1;
}

/* Resolves a log of the item (rest: "stages/NAME" or "validation/logs/NAME")
 * as kind. 0 or -ENOENT. */
static int resolve_log(struct engine *e, struct node *n, const char *rest, enum kind kind)
{
	struct run r;

	snprintf(n->rel, sizeof(n->rel), "%s", rest);
	if (store_run_by_log(e->store, n->item.id, n->rel, &r))
		return -ENOENT;
	log_node(n, &r);
	run_clear(&r);
	return n->kind = kind, 0;
}

/* Resolves the part of a path below an item directory. shallow: a
 * document's path resolves to N_DOCDIR without asking the store whether it
 * exists or what it is (packet__resolve_shallow). */
static int resolve_in_item(struct engine *e, struct node *n, const char *rest, int shallow)
{
	const char *slash = strchr(rest, '/');
	int x;

	if (!*rest) {
		n->kind = N_ITEM;
		return 0;
	}
	x = packet__fixed_entry(N_ITEM, rest, slash ? (size_t)(slash - rest) : strlen(rest));
	if (x == N_HISTORY_DIR)
		return packet__resolve_history(e, n, slash ? slash + 1 : "");
	if (x >= 0 && !n->learnings && !slash)
		return n->kind = x, 0;
	if (x == N_STAGES_DIR && !n->learnings)
		return strchr(slash + 1, '/') ? -ENOENT : resolve_log(e, n, rest, N_STAGE_LOG);
	if (x == N_VALIDATION_DIR && !n->learnings) {
		const char *v = slash + 1;

		x = packet__fixed_entry(N_VALIDATION_DIR, v, strlen(v));
		if (x >= 0)
			return n->kind = x, 0;
		if (strncmp(v, "logs/", 5) == 0)
			return strchr(v + 5, '/') ? -ENOENT : resolve_log(e, n, rest, N_RECIPE_LOG);
	} else if (x >= 0 && !n->learnings) {
		return -ENOTDIR; /* below a file of the item */
	}
	if (strlen(rest) >= sizeof(n->rel))
		return -ENAMETOOLONG;
	snprintf(n->rel, sizeof(n->rel), "%s", rest);
	if (shallow)
		return n->kind = N_DOCDIR, 0;
	return resolve_doc(e, n);
}

/* packet__resolve; shallow: see resolve_in_item. */
static int resolve_at(struct engine *e, const char *path, struct node *n, int shallow)
{
	const char *p = path, *slash;
	char name[ITEM_NAME_MAX + 2];
	size_t len;
	int rc, k;

	memset(n, 0, sizeof(*n));
	if (p[0] != '/')
		return -EINVAL;
	p++;
	if (!*p)
		return n->kind = N_ROOT, 0;
	k = packet__fixed_entry(N_ROOT, p, strlen(p));
	if (k < 0 && strncmp(p, ".packetfs/", 10) == 0)
		k = packet__fixed_entry(N_PFS_DIR, p + 10, strlen(p + 10));
	if (k >= 0)
		return n->kind = k, 0;
	if (strncmp(p, ".packetfs/recipes/", 18) == 0) {
		const char *f = p + 18;
		const struct recipe *rp = NULL;
		const struct recipe_catalog *cat;
		size_t i;

		cat = pipeline_recipes_hold(e->pl);
		for (i = 0; i < cat->n; i++)
			if (strcmp(cat->v[i].file, f) == 0)
				rp = &cat->v[i];
		pipeline_recipes_release(e->pl);
		if (!rp)
			return -ENOENT;
		snprintf(n->name, sizeof(n->name), "%s", f);
		return n->kind = N_RECIPE, 0;
	}
	if (strncmp(p, ".packetfs/", 10) == 0 && !strchr(p + 10, '/') && packet__tmp_exists(e, p + 10)) {
		snprintf(n->name, sizeof(n->name), "%s", p + 10);
		return n->kind = N_PFS_TMP, 0;
	}
	if (strncmp(p, ".packetfs/", 10) == 0)
		return -ENOENT;
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
	rc = store_item_get_shared(e->store, name, &n->item, &n->item_ref);
	if (rc)
		return rc;
	n->has_item = 1;
	n->learnings = n->item.archived == ITEM_LEARNINGS && !n->archived;
	if (n->item.archived != n->archived && !n->learnings) {
		packet__node_clear(n);
		return -ENOENT;
	}
	rc = resolve_in_item(e, n, slash ? slash + 1 : "", shallow);
	if (rc)
		packet__node_clear(n);
	return rc;
}

/* Resolves path into n (packet__node_clear it after). 0 or -ENOENT/-ENOTDIR. */
int packet__resolve(struct engine *e, const char *path, struct node *n)
{
	return resolve_at(e, path, n, 0);
}

int packet__resolve_shallow(struct engine *e, const char *path, struct node *n)
{
	return resolve_at(e, path, n, 1);
}

int packet__resolve_parent(struct engine *e, const char *path, const char **name, struct node *p)
{
	char parent[PATH_MAX];
	int rc = packet__split(path, parent, sizeof(parent), name);

	return rc ? rc : packet__resolve(e, parent, p);
}

/* ---- content of views ---- */

int packet__is_dir_kind(enum kind k)
{
	return S_ISDIR(packet__kinds[k].mode);
}

int packet__render(struct engine *e, struct node *n, struct buf *out)
{
	int clocked;

	return packet__render_clocked(e, n, out, &clocked);
}

int packet__render_clocked(struct engine *e, struct node *n, struct buf *out, int *clocked)
{
	struct pfs_config *cfg;
	char **lines = NULL;
	size_t i, nl;
	int rc = 0;

	*clocked = 0;
	switch (n->kind) {
	case N_EVENTS_ALL:
		return store_events_render(e->store, 0, out);
	case N_ITEM_EVENTS:
		return store_events_render(e->store, n->item.id, out);
	case N_VERSION:
		return buf_printf(out, "packetfs %s\n", PACKETFS_VERSION);
	case N_PIPELINE:
		return pipeline_config_json(e->pl, out);
	case N_PIPELINE_ERROR:
		return packet__refusal_render(e, 0, out);
	case N_COMPUTE_ENV:
	case N_ITEM_COMPUTE_ENV:
		return pipeline_cenv_render(e->pl, out);
	case N_PFS_TMP:
		return packet__tmp_read(e, n->name, out);
	case N_REGISTRY_ERROR:
		return packet__refusal_render(e, n->item.id, out);
	case N_RECIPE: {
		char path[PATH_MAX], *data = NULL;
		size_t len;

		cfg = pipeline_config_get(e->pl);
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
	case N_JUNIT:
		return view_junit(e, &n->item, out);
	case N_SCOPE:
		return view_scope(e, &n->item, out);
	case N_MEASUREMENTS:
		return view_measurements(e, &n->item, out);
	case N_DIFF:
		return view_change_diff(e, &n->item, out);
	case N_REPORT:
		return view_report_clocked(e, &n->item, out, clocked);
	case N_INDEX:
		return view_index(e, out, clocked);
	case N_RECORD:
		return packet__record_render(e, n->item.id, NULL, out);
	case N_CTL: {
		char kept[512];

		if (pipeline_unstored_result(e->pl, n->item.id, kept, sizeof(kept)))
			rc = buf_printf(out, "%s\n", kept);
		else if (n->item.last_result[0])
			rc = buf_printf(out, "%s\n", n->item.last_result);
		return rc ? rc : buf_puts(out, packet__ctl_verbs);
	}
	case N_REGISTRY:
		rc = store_registry_raw_lines(e->store, n->item.id, &lines, &nl);
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

int packet__stable_kind(enum kind k)
{
	return (packet__kinds[k].flags & KIND_STABLE) != 0;
}

const char *packet__open_doc_child(const struct open_doc *d, int64_t item, const char *dir,
				   size_t dlen)
{
	const char *rest = d->rel;

	if (d->item_id != item)
		return NULL;
	if (dlen) {
		if (strncmp(d->rel, dir, dlen) != 0 || d->rel[dlen] != '/')
			return NULL;
		rest = d->rel + dlen + 1;
	}
	return strchr(rest, '/') ? NULL : rest;
}

/*
 * Whether the directory rel ("" for the item's top level) of item holds a
 * document created open and not stored yet: 0 when not, else the latest
 * time such a document was created at (1 when none was: a document that
 * lost its stored row). The directory shows that time as its mtime and
 * ctime when it is later than its stored ctime, as if the entry were
 * stored (a create stores nothing: one write transaction a new file, not
 * two), and its first commit stores the directory's times
 * (store_doc_write), at a flush the kernel does not take for a change of
 * the directory.
 */
static int64_t holds_unstored(struct engine *e, int64_t item, const char *rel)
{
	size_t dlen = strlen(rel);
	struct open_doc *d;
	int64_t latest = 0;

	pthread_mutex_lock(&e->files_lock);
	for (d = e->docs; d; d = d->next) {
		if (!packet__open_doc_child(d, item, rel, dlen))
			continue;
		pthread_mutex_lock(&d->lock);
		if (!d->stored && (d->created_ns > latest || !latest))
			latest = d->created_ns > 0 ? d->created_ns : 1;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&e->files_lock);
	return latest;
}

/* The stable flag of a resolved node's attributes (struct pfs_stat). */
static int node_stable(struct engine *e, struct node *n)
{
	if (n->kind == N_STAGE_LOG || n->kind == N_RECIPE_LOG)
		return n->sealed;
	if (!packet__stable_kind(n->kind))
		return 0;
	/* A file with several names changes through names the kernel does
	 * not connect to this one. One held open for writing changes at its
	 * commits, which the kernel does not see (the ctime moves); one
	 * open for reading only does not change by being read. */
	if (n->kind == N_DOC)
		return !n->open && n->doc.nlink <= 1;
	if (n->kind == N_ITEM)
		return !holds_unstored(e, n->item.id, "");
	if (n->kind == N_DOCDIR)
		return !holds_unstored(e, n->item.id, n->rel);
	/* Dated by the item's updated time: every write of the item row
	 * reports them (pipe__item_write), at the paths of a live item. The
	 * subdirectories of .history are not reported. */
	if (n->kind == N_STAGES_DIR || n->kind == N_VALIDATION_DIR || n->kind == N_LOGS_DIR ||
	    n->kind == N_HISTORY_DIR)
		return !n->archived && !(n->kind == N_HISTORY_DIR && n->rel[0]);
	return 1;
}

static int64_t parse_rfc3339(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (int64_t)timegm(&tm) * 1000000000;
}

/* The fixed subdirectories of the item directory n (stages/, validation/,
 * .history/; learnings/ has .history/ alone). */
static uint32_t item_subdirs(const struct node *n)
{
	uint32_t sub = 0;
	int k;

	for (k = 0; k < N_KINDS; k++)
		if (packet__kinds[k].name && packet__kinds[k].parent == N_ITEM &&
		    packet__is_dir_kind(k) && (!n->learnings || k == N_HISTORY_DIR))
			sub++;
	return sub;
}

/* Attributes of a resolved node. */
int packet__node_stat(struct engine *e, struct node *n, struct pfs_stat *st, int render)
{
	int64_t now = util_now_ns(), created = 0;

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
	if (packet__is_dir_kind(n->kind)) {
		st->mode = packet__kinds[n->kind].mode;
		st->nlink = 2;
		if (n->kind == N_DOCDIR) {
			st->mode = S_IFDIR | n->doc.mode;
			st->uid = packet__uid(e, n->doc.uid), st->gid = packet__gid(e, n->doc.gid);
			st->mtime_ns = n->doc.mtime_ns, st->ctime_ns = n->doc.ctime_ns;
			st->atime_ns = n->doc.atime_ns;
		} else if (n->kind == N_ITEM) {
			st->mode = S_IFDIR | n->item.dir_mode;
			st->uid = packet__uid(e, n->item.dir_uid);
			st->gid = packet__gid(e, n->item.dir_gid);
			/* learnings/ made by an older store has no times of its own:
			 * its row's update time (above) stands for them. */
			if (n->item.dir_mtime_ns)
				st->mtime_ns = n->item.dir_mtime_ns;
			if (n->item.dir_ctime_ns)
				st->ctime_ns = n->item.dir_ctime_ns;
			st->atime_ns = n->item.dir_atime_ns ? n->item.dir_atime_ns : st->mtime_ns;
		}
		if (n->kind == N_DOCDIR || n->kind == N_ITEM) {
			uint32_t sub = 0;

			created = holds_unstored(e, n->item.id, n->kind == N_ITEM ? "" : n->rel);

			/* The create is the directory's latest change unless a
			 * change stored since (touch -d, chmod: each moves the
			 * ctime to now) came after it. */
			if (created > st->ctime_ns)
				st->mtime_ns = st->ctime_ns = created;

			/* As on a local disk: its own ".", its parent's entry and
			 * the ".." of each subdirectory (counted with the row the
			 * directory resolved from, or asked now). */
			if (n->kind == N_DOCDIR && n->from_store)
				st->nlink += n->doc.subdirs;
			else if (store_doc_subdirs(e->store, n->item.id,
						   n->kind == N_ITEM ? "" : n->rel, &sub) == 0)
				st->nlink += sub;
			if (n->kind == N_ITEM)
				st->nlink += item_subdirs(n);
		}
		if (n->archived)
			st->mode = S_IFDIR | 0555;
		/* node_stable's answer for these, without a second walk. */
		st->stable = n->kind == N_DOCDIR || n->kind == N_ITEM ? !created : node_stable(e, n);
		/* Not the root nor .archive/ (items come and go by the engine's
		 * hand: made by import, archived by ctl), nor .history/. */
		st->list_stable = st->stable && (packet__kinds[n->kind].flags & KIND_LIST_STABLE);
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
	case N_PFS_TMP:
		return packet__tmp_stat(e, n->name, st);
	case N_HISTORY_FILE:
		/* Its size, type, owner and mode were read when it resolved. */
		st->mode = packet__history_mode(n->doc.type);
		if (!S_ISLNK(n->doc.type))
			st->mode = (st->mode & S_IFMT) | n->doc.mode;
		st->uid = packet__uid(e, n->doc.uid), st->gid = packet__gid(e, n->doc.gid);
		st->rdev = n->doc.rdev;
		st->size = n->doc.size;
		st->view = S_ISREG(st->mode);
		return 0;
	case N_DOC:
		st->mode = n->doc.type | (n->archived ? (n->doc.mode & 0555) : n->doc.mode);
		if (S_ISLNK(n->doc.type))
			st->mode = S_IFLNK | 0777;
		st->rdev = n->doc.rdev;
		st->uid = packet__uid(e, n->doc.uid), st->gid = packet__gid(e, n->doc.gid);
		st->size = n->doc.size;
		st->mtime_ns = n->doc.mtime_ns;
		st->ctime_ns = n->doc.ctime_ns;
		st->atime_ns = n->doc.atime_ns;
		st->nlink = n->doc.nlink;
		st->file_id = packet__file_id(n->item.id, n->doc.link);
		st->stable = node_stable(e, n);
		return 0;
	case N_STAGE_LOG:
	case N_RECIPE_LOG:
		/* Growing while its run runs; a sealed log is final, and dated
		 * by the end of its run. */
		st->mode = S_IFREG | 0444;
		st->size = n->doc.size;
		st->view = 1;
		st->mtime_ns = st->ctime_ns = n->sealed && n->doc.mtime_ns ? n->doc.mtime_ns : now;
		st->stable = node_stable(e, n);
		return 0;
	case N_REGISTRY:
	case N_EVENTS_ALL:
	case N_ITEM_EVENTS: {
		/* Append-only views grow large: their size is asked of SQLite,
		 * not rendered. */
		int rc = n->kind == N_REGISTRY
				 ? store_registry_size(e->store, n->item.id, &st->size)
				 : store_events_size(e->store, n->kind == N_EVENTS_ALL ? 0 : n->item.id,
						     &st->size);

		if (rc)
			return rc;
		st->mode = n->archived ? S_IFREG | 0444 : packet__kinds[n->kind].mode;
		st->view = 1;
		st->mtime_ns = st->ctime_ns = now;
		/* registry.jsonl changes by a write through the mount, which the
		 * kernel sees, or by a line the engine adds, which it reports
		 * (pipe__changed): its attributes may be cached, dated by the
		 * answer the kernel then keeps until the next change. (Each `>>`
		 * then opens it without a GETATTR for the permission check.) */
		st->stable = n->kind == N_REGISTRY;
		return 0;
	}
	default:
		break;
	}
	if (render) {
		int rc = packet__view_size(e, n, &st->size);

		if (rc)
			return rc;
	}
	st->view = (packet__kinds[n->kind].flags & KIND_VIEW) != 0;
	st->mode = n->archived ? S_IFREG | 0444 : packet__kinds[n->kind].mode;
	if (packet__kinds[n->kind].flags & KIND_NOW)
		st->mtime_ns = st->ctime_ns = now;
	st->stable = node_stable(e, n);
	return 0;
}

static int getattr_at(struct engine *e, const char *path, struct pfs_stat *st, int render)
{
	struct node n;
	int rc = packet__resolve(e, path, &n);

	if (rc)
		return rc;
	rc = packet__node_stat(e, &n, st, render);
	packet__node_clear(&n);
	return rc;
}

int engine_getattr(struct engine *e, const char *path, struct pfs_stat *st)
{
	return getattr_at(e, path, st, 1);
}

int engine_getattr_unrendered(struct engine *e, const char *path, struct pfs_stat *st)
{
	return getattr_at(e, path, st, 0);
}

/* Whether a name that does not resolve in directory dir (absolute,
 * normalised) may be kept missing by the kernel (engine_lookup): dir is a
 * document directory by its path (the kernel looks up in it, so it exists
 * as one) and holds no document created and not stored yet. */
static int miss_keepable_in(struct engine *e, const char *dir)
{
	struct node n;
	int keep;

	if (packet__resolve_shallow(e, dir, &n))
		return 0;
	keep = n.kind == N_DOCDIR && (packet__kinds[N_DOCDIR].flags & KIND_LIST_STABLE) &&
	       !holds_unstored(e, n.item.id, n.rel);
	packet__node_clear(&n);
	return keep;
}

int engine_lookup(struct engine *e, const char *path, struct pfs_stat *st, int *keepable)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int keep = 0, rc;

	if (keepable) {
		*keepable = 0;
		/* Asked before the name: a document hidden until its first
		 * commit (a full disk) is one created and not stored, so none
		 * that a close could store after the name was asked. */
		if (slash && slash != path && (size_t)(slash - path) < sizeof(dir)) {
			memcpy(dir, path, (size_t)(slash - path));
			dir[slash - path] = '\0';
			keep = miss_keepable_in(e, dir);
		}
	}
	rc = getattr_at(e, path, st, 1);
	if (rc == -ENOENT && keepable)
		*keepable = keep;
	return rc;
}

int engine_valid_item_name(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > ITEM_NAME_MAX)
		return 0;
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (i = 1; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}
