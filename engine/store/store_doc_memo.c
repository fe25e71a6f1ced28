/*
 * store_doc_memo.c - documents rows remembered between two changes of the
 * store (store_int.h: store__doc_memo_get, store__doc_memo_put).
 *
 * An open of a document reads its row (the path's lookup), then reads it
 * again to see that no commit slipped in before the open document was
 * listed (packet__od_get), and the commit at its close reads it a third
 * time as the first statement of its transaction. Between the three
 * nothing changed; each read was a statement, and outside a transaction
 * a WAL read lock taken and released (two fcntl(2) calls).
 *
 * A row read outside any transaction is kept with two counts: the
 * connection's commits (store_commits: SQLite's commit hook, which also
 * counts a commit that then fails) and its rows changed
 * (sqlite3_total_changes64: every INSERT, UPDATE and DELETE this
 * connection ran, triggers included, committed or not, rolled back or
 * not). While both are the same no statement of this connection changed a
 * row, so the row read is still the row; inside a transaction too, until
 * its first change. Only a writable store keeps rows: it is the only writer
 * of its database (store.h, store_commits), so nothing else can change
 * one. A read-only store (the CLI beside a mount) reads every time.
 *
 * Rows are not kept from inside a transaction (they may be rolled back);
 * a path longer than DOC_MEMO_PATH is not kept. DOC_MEMO entries, replaced
 * in turn.
 *
 * A commit of a document leaves the row it wrote (store__doc_memo_stage,
 * then store__doc_memo_settle): read inside the transaction, after its
 * last change, it is the row as committed; kept once the COMMIT succeeded,
 * with the counts after it, it is what a read just after the commit would
 * have found. A `>>` a line then reads the row once, in the commit's
 * transaction, where it read it there and again at the next line's open,
 * in a read transaction of its own (a WAL read lock, taken and released).
 * Up to DOC_STAGED rows a commit (store_doc.c says which: a create's
 * directory, whose attributes the kernel asks next; a rename's directory
 * and old name; the row chmod, chown or utimensat changed).
 */
#include <errno.h>
#include <string.h>

#include "store_int.h"

/* Both counts now; lock held. */
static void memo_now(struct store *s, uint64_t *commits, int64_t *changes)
{
	*commits = store_commits(s);
	*changes = sqlite3_total_changes64(s->db);
}

int store__doc_memo_get(struct store *s, int64_t item, const char *path, struct doc_meta *m,
			int *rc)
{
	uint64_t commits;
	int64_t changes;
	int i;

	assert(util_mutex_held(&s->lock));
	if (!s->writable)
		return 0;
	memo_now(s, &commits, &changes);
	for (i = 0; i < DOC_MEMO; i++) {
		const struct doc_memo *e = &s->doc_memo[i];

		if (e->item == item && e->item && e->commits == commits &&
		    e->changes == changes && strcmp(e->path, path) == 0) {
			*rc = e->rc;
			if (e->rc == 0)
				*m = e->m;
			return 1;
		}
	}
	return 0;
}

void store__doc_memo_put(struct store *s, int64_t item, const char *path, int rc,
			 const struct doc_meta *m)
{
	struct doc_memo *e;
	size_t len = strlen(path);

	assert(util_mutex_held(&s->lock));
	if (!s->writable || !sqlite3_get_autocommit(s->db) || len >= DOC_MEMO_PATH ||
	    (rc != 0 && rc != -ENOENT))
		return;
	e = &s->doc_memo[s->doc_memo_next];
	s->doc_memo_next = (s->doc_memo_next + 1) % DOC_MEMO;
	memo_now(s, &e->commits, &e->changes);
	e->item = item;
	memcpy(e->path, path, len + 1);
	e->rc = rc;
	if (rc == 0)
		e->m = *m;
}

void store__doc_memo_stage(struct store *s, int64_t item, const char *path, int rc,
			   const struct doc_meta *m)
{
	size_t len = strlen(path);
	struct doc_memo *e = NULL;
	int i;

	assert(util_mutex_held(&s->lock));
	assert(!sqlite3_get_autocommit(s->db));
	assert(rc == 0 || rc == -ENOENT);
	if (!s->writable || len >= DOC_MEMO_PATH)
		return;
	for (i = 0; i < DOC_STAGED && !e; i++)
		if (!s->doc_staged[i].item ||
		    (s->doc_staged[i].item == item && strcmp(s->doc_staged[i].path, path) == 0))
			e = &s->doc_staged[i];
	if (!e)
		e = &s->doc_staged[DOC_STAGED - 1];
	e->item = item;
	memcpy(e->path, path, len + 1);
	e->rc = rc;
	if (rc == 0)
		e->m = *m;
}

void store__doc_memo_settle(struct store *s, int committed)
{
	int i;

	assert(util_mutex_held(&s->lock));
	for (i = 0; i < DOC_STAGED; i++) {
		struct doc_memo *e = &s->doc_staged[i];

		if (committed && e->item)
			store__doc_memo_put(s, e->item, e->path, e->rc, &e->m);
		e->item = 0;
	}
}
