/*
 * store_later.c - revisions retired later (store_int.h: store__later_add,
 * store__later_now, store__later_settle; store.h: store_later_run;
 * schema/0020_retire_later.sql).
 *
 * A rename over a document and an unlink end its current revision, which
 * was retired (encoded against its base, store_retire.c) inside that
 * transaction: a third of a save's rename. Now the revision keeps its
 * content whole in its row of whole, where every read finds it as it
 * found the current one's, and its id waits in retire_later; a thread of
 * the writable store (later_main) retires the waiting ones, oldest first,
 * LATER_BATCH to a transaction of its own: once LATER_BATCH wait, and all
 * of them once no commit came for LATER_QUIET_MS. Retiring changes how a
 * revision is stored, never its bytes. A revision of more than
 * LATER_LARGEST bytes, one past LATER_BYTES waiting (a writer the thread
 * does not keep up with), and any without the thread are retired at once,
 * as before; store_close retires what waits, so that a store left alone is
 * as compact as before.
 *
 * Order: a delta's depth counts its base's, so a revision is never
 * encoded against one still waiting: store_retire.c retires such a base
 * first (store__later_now). A row of revisions deleted (gc, a probe or a
 * backup forgotten) takes its row of retire_later with it (the schema's
 * trigger), so a waiting id never names a revision that took the id over.
 */
#include <errno.h>
#include <signal.h>

#include "store_int.h"

/* Waiting revisions that wake the thread, and retire in one transaction
 * (16 of a few KiB hold the lock about a millisecond); the bytes that may
 * wait, whole, beyond what the store holds for good (SPEC §2: its files
 * stay proportional to that: this is the constant), and the largest
 * revision that waits; and the quiet, in milliseconds, after which the
 * thread retires every waiting one. */
#define LATER_BATCH 16
#define LATER_BYTES (1 << 20)
#define LATER_LARGEST (LATER_BYTES / 16)
#define LATER_QUIET_MS 50

int store__later_add(struct store *s, int64_t rev_id, uint64_t size)
{
	assert(util_mutex_held(&s->lock));
	if (!s->later_running || size > LATER_LARGEST ||
	    s->later_bytes + s->later_txn_bytes + size > LATER_BYTES)
		return store__rev_retire(s, rev_id);
	s->later_txn++;
	s->later_txn_bytes += size;
	return store__exec(s, "INSERT OR IGNORE INTO retire_later(rev_id) VALUES (?)", "I",
			   rev_id);
}

int store__later_now(struct store *s, int64_t rev_id)
{
	int rc = store__exec(s, "DELETE FROM retire_later WHERE rev_id = ?", "I", rev_id);

	return rc ? rc : store__rev_retire(s, rev_id);
}

void store__later_settle(struct store *s, int committed)
{
	int n, txn = s->later_txn;

	assert(util_mutex_held(&s->lock));
	if (committed)
		s->later_bytes += s->later_txn_bytes;
	s->later_txn = 0;
	s->later_txn_bytes = 0;
	if (!committed || !txn)
		return;
	n = __atomic_add_fetch(&s->later_n, txn, __ATOMIC_RELEASE);
	/* The first to wait (the thread waits for no timeout), or a batch. */
	if (n == txn || n >= LATER_BATCH) {
		pthread_mutex_lock(&s->later_lock);
		if (n >= LATER_BATCH)
			s->later_wanted = 1;
		pthread_cond_signal(&s->later_cond);
		pthread_mutex_unlock(&s->later_lock);
	}
}

/* Whether revision id still waits to be retired: still whole in a row of
 * whole and not its path's current one. 1, 0, or a negative errno. */
static int still_waits(struct store *s, int64_t id)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT NOT EXISTS (SELECT 1 FROM documents d WHERE "
			      "d.item_id = r.item_id AND d.path = r.path AND d.rev_id = r.id) "
			      "FROM revisions r WHERE r.id = ? AND r.enc = 0 AND "
			      "r.content IS NOT NULL AND r.slot IS NOT NULL", "I", id);
	int waits = rc == 0 && sqlite3_column_int(st, 0);

	store__done(st);
	return rc == -ENOENT ? 0 : rc ? rc : waits;
}

/* Counts what waits into later_n and later_bytes, and the number into
 * *n; lock held. 0 or a negative errno. */
static int later_count(struct store *s, int *n)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT count(*), COALESCE(SUM(r.size), 0) FROM "
			      "retire_later l JOIN revisions r ON r.id = l.rev_id", "");

	*n = rc == 0 ? sqlite3_column_int(st, 0) : 0;
	if (rc == 0) {
		s->later_bytes = (uint64_t)sqlite3_column_int64(st, 1);
		__atomic_store_n(&s->later_n, *n, __ATOMIC_RELEASE);
	}
	store__done(st);
	return rc;
}

int store_later_run(struct store *s, int max)
{
	int64_t ids[LATER_BATCH];
	sqlite3_stmt *st;
	int rc, n = 0, i, left = 0;

	if (max > LATER_BATCH)
		max = LATER_BATCH;
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = store__prepare(s, &st, "SELECT rev_id FROM retire_later ORDER BY rev_id LIMIT ?", "i",
			    max);
	while (rc == 0 && n < max && (rc = store__step(s, st)) > 0) {
		ids[n++] = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	store__done(st);
	if (rc > 0)
		rc = 0;
	for (i = 0; rc == 0 && i < n; i++) {
		int waits = still_waits(s, ids[i]);

		/* A base retired before it (store_retire.c) left its row. */
		if (waits > 0)
			rc = store__later_now(s, ids[i]);
		else if (waits == 0)
			rc = store__exec(s, "DELETE FROM retire_later WHERE rev_id = ?", "I",
					 ids[i]);
		else
			rc = waits;
	}
	if (rc == 0)
		rc = later_count(s, &left);
	rc = store__txn_unlock(s, rc);
	return rc ? rc : left;
}

/* The thread: one batch each time it is woken (LATER_BATCH wait), every
 * waiting revision after LATER_QUIET_MS without a commit, until
 * later_stop. A failure (a full disk) leaves the revisions waiting, for
 * the next quiet or store_close. */
static void *later_main(void *arg)
{
	struct store *s = arg;
	int quiet, left;
	uint64_t seen;

	pthread_mutex_lock(&s->later_lock);
	for (;;) {
		quiet = 0;
		while (!s->later_wanted && !s->later_stop) {
			/* Read under later_lock: a commit that makes the first
			 * one wait signals under it, so not before this wait. */
			if (__atomic_load_n(&s->later_n, __ATOMIC_ACQUIRE) == 0) {
				pthread_cond_wait(&s->later_cond, &s->later_lock);
				continue;
			}
			seen = store_commits(s);
			if (util_cond_wait_ms(&s->later_cond, &s->later_lock, LATER_QUIET_MS) &&
			    store_commits(s) == seen) {
				quiet = 1;
				break;
			}
		}
		if (s->later_stop)
			break;
		s->later_wanted = 0;
		if (s->later_held) {
			pthread_cond_wait(&s->later_cond, &s->later_lock);
			continue;
		}
		pthread_mutex_unlock(&s->later_lock);
		do {
			seen = store_commits(s);
			left = store_later_run(s, LATER_BATCH);
			/* Quiet: on while no other commit comes in between. */
		} while (quiet && left > 0 && store_commits(s) == seen + 1);
		pthread_mutex_lock(&s->later_lock);
	}
	pthread_mutex_unlock(&s->later_lock);
	return NULL;
}

void store__later_hold(struct store *s, int hold)
{
	pthread_mutex_lock(&s->later_lock);
	s->later_held = hold;
	s->later_wanted = !hold;
	pthread_cond_signal(&s->later_cond);
	pthread_mutex_unlock(&s->later_lock);
}

void store__later_start(struct store *s)
{
	sigset_t all, old;
	int rc, n;

	pthread_mutex_lock(&s->lock);
	rc = later_count(s, &n);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return; /* revisions are retired at once */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&s->later_thread, NULL, later_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0) {
		pthread_mutex_lock(&s->lock);
		s->later_running = 1;
		pthread_mutex_unlock(&s->lock);
	}
}

void store__later_stop(struct store *s)
{
	int left = 1;

	if (!s->later_running)
		return;
	pthread_mutex_lock(&s->later_lock);
	s->later_stop = 1;
	pthread_cond_signal(&s->later_cond);
	pthread_mutex_unlock(&s->later_lock);
	pthread_join(s->later_thread, NULL);
	pthread_mutex_lock(&s->lock);
	s->later_running = 0;
	pthread_mutex_unlock(&s->lock);
	while (left > 0)
		left = store_later_run(s, LATER_BATCH);
}
