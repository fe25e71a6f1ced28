/*
 * packet_through.c - write-through appends: O_APPEND handles of a document
 * that commit each write when it comes, so that their close needs no
 * FLUSH request (the kernel's FOPEN_NOFLUSH, Linux 5.16); and O_APPEND
 * handles of registry.jsonl, whose lines are stored at the write anyway,
 * that check at each write what their close would.
 *
 * Why. A shell's `echo line >> doc` costs the writer five requests: OPEN,
 * FLUSH (bash's close of the descriptor it dup2()ed onto stdout), WRITE,
 * FLUSH (the close that restores stdout, which commits: SPEC §2) and
 * RELEASE, which the kernel sends without waiting. Every request the
 * writer waits for is a round trip between it and a daemon thread. A
 * handle whose write commits leaves two to wait for, OPEN and WRITE: one
 * fewer than bindfs's three (it gets a GETXATTR of security.capability
 * after each WRITE). tests/bench/HISTORY.md has the numbers.
 *
 * Which handles. One opened O_WRONLY | O_APPEND without O_TRUNC, of a
 * document that exists (a create is committed by a close, which needs
 * its FLUSH), by a process whose last THROUGH_AFTER such handles of the
 * same document each wrote at most once: a shell loop of `>>`, a program
 * that opens its log again for each line. Until then a process's handles
 * commit at their close, as every other handle does, so that a script's
 * `echo header >> log` followed by a loop whose output goes to `>> log`
 * (one handle, a write per line) keeps its one commit at the close. A
 * handle that writes a second time sets the count back to 0 (a
 * write-through one at that write: it goes on committing each of its
 * writes, the kernel sends it no FLUSH). The marks are hints: one lost,
 * or one of another path sharing its slot, changes only when bytes are
 * committed, never what is kept.
 *
 * What is kept. Each write of a write-through handle is committed before
 * write(2) returns; so close returning 0, and before it write returning
 * n, means committed (SPEC §2). The first makes a revision, as a close
 * would; the handle's later writes grow that revision in place while it
 * is still the document's current one (store_doc_grow), so a handle leaves
 * one revision however its writer split its bytes, as one that commits at
 * its close does. A commit that fails fails the write (-ENOSPC on a full
 * disk) and takes its bytes back out of the open document, unless a write
 * of another handle came after them: those then stay pending with it, for
 * its own close. A truncate or fallocate through the handle commits before
 * it returns too (packet__through_settle); one whose commit fails fails,
 * what it changed pending as after a close whose commit failed.
 *
 * registry.jsonl. packet_append.c stores each line a write completes at
 * that write; a flush only refuses (EINVAL) a whole object left without
 * its newline, and a shell does not report a close's error. A
 * write-through handle of registry.jsonl (the same count, by the same
 * marks) refuses at the write one that would leave such an object: the
 * writer hears of it. A writer that splits a line over two writes (the
 * object, then its newline) writes twice through each handle, so its
 * process's handles never become write-through.
 *
 * Threads: any request thread; the marks are under e->files_lock, a
 * handle's counts under its own lock (packet_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "packet_int.h"

/* How many O_APPEND handles of a document in a row, by one process, that
 * wrote at most once make its next one write through. */
#define THROUGH_AFTER 3
/* registry.jsonl's path in its item (SPEC §3), for its marks. */
#define REGISTRY_REL "validation/registry.jsonl"

/* FNV-1a, 64 bits (http://www.isthe.com/chongo/tech/comp/fnv/), of rel. */
static uint64_t rel_hash(const char *rel)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *rel; rel++)
		h = (h ^ (unsigned char)*rel) * 1099511628211ULL;
	return h;
}

static struct through_mark *mark_slot(struct engine *e, int64_t item, uint64_t hash)
{
	return &e->through[(hash ^ (uint64_t)item) % THROUGH_SLOTS];
}

/* Whether flags open a document for appends only, the handles marks are
 * about. */
static int append_only(int flags)
{
	return (flags & O_ACCMODE) == O_WRONLY && (flags & O_APPEND) && !(flags & O_TRUNC);
}

/* The item-relative path f's marks are by; files_lock held (a document's
 * name moves with a rename). */
static const char *mark_rel(const struct pfs_file *f)
{
	return f->kind == N_REGISTRY ? REGISTRY_REL : f->od->rel;
}

int packet__through_wanted(struct engine *e, const struct pfs_file *f, int creating,
			   const struct pfs_caller *who)
{
	struct through_mark *m;
	uint64_t hash;
	int yes;

	if ((f->kind != N_DOC && f->kind != N_REGISTRY) || creating || !append_only(f->flags) ||
	    !who || who->pid <= 0)
		return 0;
	pthread_mutex_lock(&e->files_lock);
	hash = rel_hash(mark_rel(f));
	m = mark_slot(e, f->item_id, hash);
	yes = m->item_id == f->item_id && m->rel_hash == hash && m->pid == who->pid &&
	      m->runs >= THROUGH_AFTER;
	pthread_mutex_unlock(&e->files_lock);
	return yes;
}

void packet__through_count(struct pfs_file *f, uint64_t off, size_t size)
{
	assert(util_mutex_held(&f->lock));
	/* The kernel splits a write(2) at page boundaries (4 KiB, or a
	 * multiple): a WRITE that goes on from one where the handle's last
	 * one ended is the same call's. */
	if (!f->writes || off != f->write_end || off % 4096)
		f->writes++;
	f->write_end = off + size;
}

void packet__through_note(struct engine *e, struct pfs_file *f)
{
	struct through_mark *m;
	uint64_t hash;

	assert(util_mutex_held(&f->lock));
	if ((f->kind != N_DOC && f->kind != N_REGISTRY) || !append_only(f->flags) ||
	    f->opener.pid <= 0 || (f->counted && f->writes <= 1))
		return;
	pthread_mutex_lock(&e->files_lock);
	hash = rel_hash(mark_rel(f));
	m = mark_slot(e, f->item_id, hash);
	if (m->item_id != f->item_id || m->rel_hash != hash || m->pid != f->opener.pid) {
		m->item_id = f->item_id;
		m->rel_hash = hash;
		m->pid = f->opener.pid;
		m->runs = 0;
	}
	if (f->writes > 1)
		m->runs = 0;
	else if (m->runs < THROUGH_AFTER)
		m->runs++;
	f->counted = 1;
	pthread_mutex_unlock(&e->files_lock);
}

ssize_t packet__through_commit(struct pfs_file *f, const struct pfs_caller *who, uint64_t end,
			       size_t size, int was_dirty)
{
	struct open_doc *d = f->od;
	int rc;

	assert(util_mutex_held(&f->lock));
	if (f->writes == 2)
		packet__through_note(f->e, f);
	rc = packet__od_commit_grow(f->e, d, who, &f->grown);
	if (rc == 0)
		return (ssize_t)size;
	pthread_mutex_lock(&d->lock);
	/* Its bytes are still the last ones, and the content holds them
	 * (partial, only those after the stored ones): taken back. */
	if (packet__od_size(d) == end + size && d->content.len >= size) {
		d->content.len -= size;
		d->content.data[d->content.len] = '\0';
		if (!was_dirty) {
			d->dirty = 0;
			d->commit_failed = 0;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int packet__through_settle(struct pfs_file *f, const struct pfs_caller *who)
{
	assert(util_mutex_held(&f->lock));
	if (!f->through)
		return 0;
	return packet__od_commit_grow(f->e, f->od, who ? who : &f->opener, &f->grown);
}
