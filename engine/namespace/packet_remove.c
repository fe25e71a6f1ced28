/*
 * packet_remove.c - a recursive removal of an item (SPEC §3: `rm -rf
 * MOUNT/<item>` ends with the item archived, every document recoverable,
 * at most one message, never a live item left half emptied).
 *
 * Design. GNU rm -r (fts), find -delete and Python's shutil.rmtree open
 * the item's directory, read it, and unlink its entries depth first in
 * the order readdir gives, then rmdir it. An item lists the entries the
 * engine owns (ctl, status, ..., stages/, validation/, worktree, .history/)
 * before its documents (packet_dir.c), and none of them can be unlinked.
 * So: a process that opened an item's directory (engine_dir_opened: a
 * "remover") and then tries to remove an entry the engine owns in that
 * item is removing the item; the engine archives the item then (as rmdir
 * of the item does) and that unlink succeeds. Every later step of the
 * removal finds nothing (ENOENT, which rm -f passes over in silence) and
 * the documents are untouched under .archive/<item>/. rm -rf prints
 * nothing at all.
 * When a tool reaches documents first (another order), the documents and
 * document directories a remover takes away are remembered (the steps of
 * one removal follow each other within STEP_GAP_NS), and archiving
 * the item on its behalf (here, or its rmdir of the item) first restores
 * each one from its last revision (symlinks, FIFOs... as what they were;
 * each name of a hard link as a file of its own): the archive still holds every
 * document, and each one's history shows the unlink and the restore.
 * When the item cannot be archived (EBUSY: a stage runs), the removal is
 * refused as a whole: that entry and everything the remover tries after
 * in the item fail with EBUSY, and nothing is deleted; an opendir of the
 * item after a pause of STEP_GAP_NS starts a new removal.
 * A remover is one process (its pid, as FUSE gives it: the thread that
 * opened the directory) and one item; it is forgotten REMOVER_TTL_NS
 * after it last opened the directory, when the item is archived, or when
 * the engine closes. A process that only lists an item is never a
 * remover in effect: only its removal of an engine's entry acts, and only
 * within STEP_GAP_NS of its opendir of the item or of its last step (an
 * editor that listed the item long ago gets the ordinary refusal).
 *
 * Threads: any FUSE thread; remove_lock protects e->removers and is never
 * held while the store or the pipeline is called.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "packet_int.h"

/* How long after its last opendir of the item a process counts as its
 * remover, in nanoseconds. */
#define REMOVER_TTL_NS (600LL * 1000000000LL)
/* Documents and directories one removal remembers for a restore. */
#define UNDO_MAX 4096
/* The longest pause between two steps of one removal, in nanoseconds: what
 * a remover took before a longer pause was an ordinary unlink of its own
 * (an editor's delete), not part of the removal of the item. */
#define STEP_GAP_NS (10LL * 1000000000LL)
/* Processes followed at once; the one that opened its item longest ago
 * makes room for a new one. */
#define REMOVERS_MAX 64

/* A document or document directory a remover took away. */
struct undo {
	char *rel;
	int is_dir;
	int rev;
	mode_t type;     /* documents: S_IFREG, S_IFLNK, ... (struct doc_meta) */
	uint64_t rdev;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int restored;    /* restore() made it again */
};

struct remover {
	int64_t item_id;
	pid_t pid;
	int64_t at_ns;   /* its last opendir of the item */
	int64_t step_ns; /* when it last took a document (undo) */
	int refused;     /* the item could not be archived: the removal is refused */
	struct undo *undo;
	size_t nundo;
	struct remover *next;
};

/* Forgets what r took (it is no part of a removal any more). */
static void undo_clear(struct remover *r)
{
	size_t i;

	for (i = 0; i < r->nundo; i++)
		free(r->undo[i].rel);
	r->nundo = 0;
}

static void remover_free(struct remover *r)
{
	if (!r)
		return;
	undo_clear(r);
	free(r->undo);
	free(r);
}

/* The live remover (pid, item) in e->removers, dropping the expired ones
 * it passes; remove_lock held. */
static struct remover **find_locked(struct engine *e, int64_t item, pid_t pid, int64_t now)
{
	struct remover **rp = &e->removers, *r;

	assert(util_mutex_held(&e->remove_lock));
	while ((r = *rp) != NULL) {
		if (now - r->at_ns > REMOVER_TTL_NS) {
			*rp = r->next;
			remover_free(r);
			continue;
		}
		if (r->item_id == item && r->pid == pid)
			return rp;
		rp = &r->next;
	}
	return NULL;
}

/* Takes the remover of n's item for who off the list (NULL: none). */
static struct remover *take(struct engine *e, const struct node *n, const struct pfs_caller *who)
{
	struct remover **rp, *r = NULL;

	if (!n->has_item || n->archived || n->learnings || !who || who->pid <= 0)
		return NULL;
	pthread_mutex_lock(&e->remove_lock);
	rp = find_locked(e, n->item.id, who->pid, util_now_ns());
	if (rp) {
		r = *rp;
		*rp = r->next;
		r->next = NULL;
	}
	pthread_mutex_unlock(&e->remove_lock);
	return r;
}

static void put(struct engine *e, struct remover *r)
{
	pthread_mutex_lock(&e->remove_lock);
	r->next = e->removers;
	e->removers = r;
	pthread_mutex_unlock(&e->remove_lock);
}

/* Makes room for one more remover: drops the one that opened its item
 * longest ago when REMOVERS_MAX are followed. remove_lock held. */
static void room_locked(struct engine *e)
{
	struct remover **rp, **oldest = NULL, *r;
	size_t n = 0;

	assert(util_mutex_held(&e->remove_lock));
	for (rp = &e->removers; (r = *rp) != NULL; rp = &r->next, n++)
		if (!oldest || r->at_ns < (*oldest)->at_ns)
			oldest = rp;
	if (n >= REMOVERS_MAX) {
		r = *oldest;
		*oldest = r->next;
		remover_free(r);
	}
}

void engine_dir_opened(struct engine *e, const char *path, const struct pfs_caller *who)
{
	struct remover **rp, *r;
	struct node n;
	int64_t now;

	/* Only an item's own directory: "/NAME". */
	if (!who || who->pid <= 0 || path[0] != '/' || !path[1] || strchr(path + 1, '/'))
		return;
	if (packet__resolve(e, path, &n))
		return;
	if (n.kind == N_ITEM && !n.archived && !n.learnings) {
		now = util_now_ns();
		pthread_mutex_lock(&e->remove_lock);
		rp = find_locked(e, n.item.id, who->pid, now);
		if (rp) {
			(*rp)->at_ns = now;
			/* A refused removal ends at a pause: this is a new one. */
			if ((*rp)->refused && now - (*rp)->step_ns > STEP_GAP_NS)
				(*rp)->refused = 0;
		} else if (room_locked(e), (r = calloc(1, sizeof(*r))) != NULL) {
			r->item_id = n.item.id;
			r->pid = who->pid;
			r->at_ns = now;
			r->next = e->removers;
			e->removers = r;
		}
		pthread_mutex_unlock(&e->remove_lock);
	}
	packet__node_clear(&n);
}

int packet__remove_blocked(struct engine *e, const struct node *n, const struct pfs_caller *who)
{
	struct remover *r = take(e, n, who);
	int refused;

	if (!r)
		return 0;
	refused = r->refused;
	if (refused)
		r->step_ns = util_now_ns();
	put(e, r);
	return refused ? -EBUSY : 0;
}

void packet__remove_taken(struct engine *e, const struct node *n, const struct pfs_caller *who)
{
	struct remover *r = take(e, n, who);
	struct undo *u;
	int64_t now;

	if (!r)
		return;
	now = util_now_ns();
	if (now - r->step_ns > STEP_GAP_NS)
		undo_clear(r);
	r->step_ns = now;
	if (r->nundo < UNDO_MAX &&
	    (u = realloc(r->undo, (r->nundo + 1) * sizeof(*u))) != NULL) {
		r->undo = u;
		u += r->nundo;
		u->rel = strdup(n->rel);
		u->is_dir = n->kind == N_DOCDIR;
		u->rev = n->doc.rev;
		u->type = n->doc.type;
		u->rdev = n->doc.rdev;
		u->mode = n->doc.mode;
		u->uid = n->doc.uid;
		u->gid = n->doc.gid;
		if (u->rel)
			r->nundo++;
	}
	put(e, r);
}

/* Whether r took rel again after its entry i (that later one is the one
 * to restore). */
static int taken_later(const struct remover *r, size_t i, const char *rel)
{
	for (size_t j = i + 1; j < r->nundo; j++)
		if (strcmp(r->undo[j].rel, rel) == 0)
			return 1;
	return 0;
}

/* Restores what r took away from item, the last taken first (a directory
 * before its documents), each document from its last revision, marking
 * what it made again (undo.restored). */
static void restore(struct engine *e, int64_t item, struct remover *r, const struct pfs_caller *who)
{
	struct who_buf wb;
	struct undo *u;
	size_t len;
	char *data;
	int rc;

	packet__who_fill(e, who, &wb);
	for (size_t i = r->nundo; i-- > 0;) {
		u = &r->undo[i];
		if (taken_later(r, i, u->rel))
			continue;
		if (u->is_dir) {
			rc = store_doc_mkdir_owned(e->store, item, u->rel, u->mode, u->uid, u->gid);
			if (rc == -EEXIST)
				rc = 0;
		} else if (u->type == S_IFREG || u->type == S_IFLNK) {
			rc = store_rev_read(e->store, item, u->rel, u->rev, &data, &len);
			if (rc == 0) {
				if (u->type == S_IFREG)
					rc = store_doc_write_owned(e->store, item, u->rel, data, len,
								   u->mode, -1, "create", &wb.w,
								   u->uid, u->gid, NULL);
				else
					rc = store_doc_make_node(e->store, item, u->rel, S_IFLNK, 0, data,
								 len, u->mode, u->uid, u->gid, &wb.w);
				free(data);
			}
		} else { /* FIFOs, sockets, devices: no content */
			rc = store_doc_make_node(e->store, item, u->rel, u->type, u->rdev, NULL, 0,
						 u->mode, u->uid, u->gid, &wb.w);
		}
		u->restored = rc == 0;
		if (rc)
			util_log(LOG_ERR, "recursive removal: restoring %s (revision %d): %s "
				 "(its history keeps it)", u->rel, u->rev, strerror(-rc));
	}
}

/* The names restore() made again, in the item that stays (its archive was
 * refused), reported to the watcher: the kernel saw them removed, and
 * keeps the listings and the misses of the directories that held them
 * (fs/fs_cache.c), which it drops on the report. Then forgets them. */
static void report_restored(struct engine *e, const char *item, struct remover *r)
{
	for (size_t i = r->nundo; i-- > 0;)
		if (r->undo[i].restored)
			engine_changed(e, item, r->undo[i].rel, ENGINE_CREATED);
	undo_clear(r);
}

int packet__remove_item(struct engine *e, const struct node *n, const struct pfs_caller *who,
			int rc)
{
	struct remover *r = take(e, n, who);
	int64_t now;
	int arc;

	if (!r)
		return rc;
	now = util_now_ns();
	/* Only as a step of a removal under way: right after its opendir of
	 * the item or its last step. A file manager that listed the item a
	 * while ago and now deletes status gets the ordinary refusal. */
	if (now - r->at_ns > STEP_GAP_NS && now - r->step_ns > STEP_GAP_NS) {
		put(e, r);
		return rc;
	}
	if (r->refused) {
		r->step_ns = now;
		put(e, r);
		return -EBUSY;
	}
	if (now - r->step_ns > STEP_GAP_NS)
		undo_clear(r);
	restore(e, n->item.id, r, who);
	arc = packet__ctl_apply(e, n->item.name, "archive", NULL, 0);
	if (arc == 0) {
		util_log(LOG_NOTICE, "%s: archived: a recursive removal by pid %d", n->item.name,
			 (int)who->pid);
		remover_free(r);
		return 0;
	}
	report_restored(e, n->item.name, r);
	r->refused = 1;
	r->step_ns = util_now_ns();
	put(e, r);
	return arc;
}

void packet__removers_free(struct engine *e)
{
	struct remover *r;

	while ((r = e->removers) != NULL) {
		e->removers = r->next;
		remover_free(r);
	}
}
