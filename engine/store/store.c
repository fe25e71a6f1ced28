/*
 * store.c - the SQLite store (see store.h for the contract): the
 * connection, migrations, the checkpointer and meta (the statement layer
 * of store_int.h: store_stmt.c; the items table: store_item.c).
 *
 * Design: one connection, one mutex (s->lock) taken by every public
 * function; prepared statements are cached per SQL text for the life of the
 * connection and reset before the lock is released. Changes run inside
 * BEGIN IMMEDIATE ... COMMIT so a failure rolls back whole. The only place
 * that translates SQLite result codes is store__err() (store_stmt.c).
 *
 * Checkpoints: SQLite's automatic checkpoint (once the WAL holds 1000
 * pages) runs inside the commit that crosses the mark, and its fdatasync
 * of the WAL stalls that commit for as long as the disk takes (15-20 ms on
 * a VM disk): a commit of the engine's loop thread, which then starts no
 * process and ends no run meanwhile. So a writable store turns it off and
 * a thread of its own (ckpt_main), with a connection of its own, runs a
 * PASSIVE checkpoint (it never waits for nor blocks a writer) when a
 * commit leaves CKPT_PAGES or more in the WAL (the WAL hook wakes it), and
 * again each time the WAL grew by CKPT_STEP pages since: woken at every
 * commit past the mark, it chased a steady writer with a pass and an
 * fdatasync per commit or two (1,909 passes for 3,000 registry appends).
 * The WAL starts over from its beginning only when a write begins after a
 * checkpoint caught up with it whole, which a writer that never pauses
 * (a recipe printing a gigabyte) does not allow the thread: so from
 * CKPT_MAX_PAGES on, the committing thread checkpoints itself, as the
 * automatic checkpoint did (but once per CKPT_MAX_PAGES), and the thread is
 * not woken meanwhile. Under s->lock no other write of the process comes
 * in between, so once it gets the checkpoint lock (the thread's pass, if
 * one runs, ends first) it catches up whole, and the WAL stays bounded.
 * Where the thread cannot be had, the automatic checkpoint stays.
 *
 * The WAL file: SQLite never shrinks it by itself, so a burst left it at
 * its peak (CKPT_MAX_PAGES, 33 MB, for good after 500 appends to a 25 KB
 * document). Two bounds (SPEC §2: the WAL stays proportional to what the
 * store holds): journal_size_limit (WAL_LIMIT) makes the writer that starts
 * the WAL over cut the file down to that size; and a thread left behind by
 * its last pass (the writes it chased went on) passes again once no commit
 * woke it for CKPT_QUIET_MS, until it has caught up. Once caught up with a
 * WAL of CKPT_PAGES or more, it runs a RESTART checkpoint, after which the
 * next write starts the WAL over from its first frame (with SQLite's own
 * restart, the first write after a pass that caught up, a busy writer
 * rarely comes in that gap: the WAL went on to CKPT_MAX_PAGES). Frames are
 * then written over the old ones, and an fdatasync(2) syncs only them,
 * where one of a file that grew syncs its size and new blocks too (through
 * the journal of a journaled ext4): 1.8x the time here on ext4 without a
 * journal, 2.5-3x with one, which a TRUNCATE at every such pass (starting
 * the WAL over at 0 bytes) cost every save's fsync
 * (tests/bench/results/2026-12-07-vm-wal-kept.md). Before that first
 * restart the file grows with every commit, so the first store_sync of a
 * WAL writes its blocks up to WAL_LIMIT (wal_fill, store_vfs.c): every
 * fsync after it syncs bytes written over. A WAL of more
 * frames than WAL_LIMIT holds, with no commit for CKPT_QUIET_MS after the
 * pass (no writer is coming to cut it), gets a TRUNCATE checkpoint. The
 * connection has no busy handler: RESTART and TRUNCATE give up at once
 * while the writer is in a transaction or a reader holds the WAL (the
 * thread is still behind then, and tries again after the next quiet), and
 * since the pass before them copied every frame already, the writer lock
 * they take is held for a look at the readers (and an ftruncate), not a
 * copy. Durability is unchanged: the frames they drop (or the next write
 * writes over) were in the database file, synced by the pass that copied
 * them (store_sync relies on the same).
 *
 * Pages per commit: SQLite as distributions build it (Debian's: the
 * SECURE_DELETE option) writes every page a commit frees over with zeros:
 * each overflow page of the whole content that a write retires
 * (store_rev.c) went to the WAL twice, zeroed at the commit that freed it
 * and with new content at its reuse (48 KB of WAL an append to a 25 KB
 * document, 40 KB without). secure_delete=FAST zeroes only what the commit
 * writes anyway. Every revision's content is kept (retired, encoded, in
 * revisions.content): the pages freed held copies.
 *
 * Item rows (store_item.c): every request through the mount looks its
 * item up by name (store_item_get). A writable store, the only writer of
 * its items rows, keeps copies of the rows it read and drops them all at
 * any write of an items row (store__items_changed): writes are rare next
 * to lookups.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "schema.h"
#include "store_int.h"

/* WAL pages after a commit that wake the checkpointer (SQLite's own
 * default mark), the growth after which it is woken again, and the pages
 * from which the committing thread checkpoints itself (see the top), for
 * a store of 4 KiB pages; a store of other pages counts the frames of as
 * many WAL bytes (ckpt_pages, ckpt_step, ckpt_max: ckpt_frames()). */
#define CKPT_PAGES 1000
#define CKPT_STEP 256
#define CKPT_MAX_PAGES 8000
/* The WAL file's size once a writer starts it over (journal_size_limit:
 * that of a WAL of CKPT_PAGES frames of 4 KiB pages, 24-byte frame headers
 * and a 32-byte file header), and the quiet, in milliseconds, after which
 * a checkpointer left behind passes again (see the top). */
#define WAL_LIMIT (32 + CKPT_PAGES * (4096 + 24))
#define CKPT_QUIET_MS 100
/*
 * The page size of a new store's database, in bytes (PRAGMA page_size,
 * which only a database without a table yet takes; a store made before
 * keeps its own). A commit writes each page it changes to the WAL whole,
 * and the commits a mount makes most (an append, a create, a save of a
 * small document) change a row or two in each of four or five B-trees
 * (documents, revisions and its index, whole): with 1 KiB pages an append
 * writes 5.5 KB of WAL instead of 18 KB and a 4 KiB create 12 KB instead
 * of 32 KB, and the daemon spends less CPU on each; a large document
 * takes four times the pages (its copy, first read and saves are slower).
 * tests/bench/results/2026-12-04-vm-page-size.md has the numbers.
 */
#define STORE_PAGE_SIZE 1024

void store__now(char out[32])
{
	util_rfc3339(util_now_ns(), out);
}

/*
 * A read-only open (the CLI's readers) applies no migration, yet this
 * packetfs reads the columns of the current version. compat[i] stands in
 * for schema_migrations[i] on such a connection alone: it makes a version i
 * store look like version i + 1 through temporary views named as the
 * tables (unqualified names find the temp schema first), which supply the
 * values the migration would give the new columns. NULL: nothing needed.
 */
static const char *const compat[] = {
	NULL, /* 0001_init */
	NULL, /* 0002_times (compat_items, compat_documents) */
	/* 0003_jobs */
	"CREATE TEMP VIEW runs AS SELECT *, '' AS job_id, '' AS job_output, 0 AS job_offset "
	"FROM main.runs;",
	NULL, /* 0004_heads (compat_items) */
	NULL, /* 0005_rounds (compat_items; no learnings row: no learnings) */
	NULL, /* 0006_owners (compat_items, compat_documents) */
	/* 0007_xattrs: an older store has no attribute */
	"CREATE TEMP TABLE xattrs (item_id INTEGER, path TEXT, name TEXT, value BLOB);",
	/* 0008_compact: every revision of an older store is whole, in content
	 * (compat_revisions) */
	"CREATE TEMP VIEW whole AS SELECT 0 AS slot, X'' AS content WHERE 0;",
	NULL, /* 0009_nodes (compat_documents, compat_revisions) */
	NULL, /* 0010_links (compat_documents: every name its file's only one) */
	/* 0011_carry: no line of an older store was carried in */
	"CREATE TEMP VIEW registry AS SELECT *, '' AS why FROM main.registry;",
	NULL, /* 0012_dir_index: an index only; reads find the same rows */
	NULL, /* 0013_states: constraints only; reads find the same rows */
	NULL, /* 0014_item_template (compat_items) */
	/* 0015_whole_slots: a row of whole per current revision, keyed by it
	 * (compat_revisions: the slot of each) */
	"CREATE TEMP VIEW IF NOT EXISTS whole AS SELECT rev_id AS slot, content FROM main.whole;",
	NULL, /* 0016_append_revisions: no table changed */
	NULL, /* 0017_append_runs: grown_from is read by writes alone (store_retire.c) */
	NULL, /* 0018_check_lists: constraints only; reads find the same rows */
	/* 0019_whole_pieces: no content of an older store is in pieces */
	"CREATE TEMP TABLE whole_pieces (id INTEGER PRIMARY KEY, slot INTEGER, start INTEGER, "
	"content BLOB);",
	NULL, /* 0020_retire_later: read by writes alone (store_later.c) */
};

/* 0008_compact's step (store__rev_compact), for a store from before
 * version 15 alone: it ran after 0015_whole_slots until 0017_append_runs
 * added a column it reads, and a store of version 15 or 16 had it then;
 * it runs after 0019_whole_pieces, whose table it reads too. */
static int compact_step(struct store *s, int from)
{
	return from < 15 ? store__rev_compact(s) : 0;
}

/*
 * What a migration needs beyond its SQL: migrate_c[i], when not NULL, runs
 * after schema_migrations[i], in the same transaction, told the version
 * the store had before the upgrade (from); migrate_check[i]
 * before it, and refuses a store the migration would fail on with what is
 * wrong in err (errlen bytes) and a negative errno.
 */
static int (*const migrate_c[])(struct store *s, int from) = {
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL,
	/* 0008_compact's step, which encodes the revisions stored before, with
	 * the columns and tables of 0015_whole_slots, 0017_append_runs and
	 * 0019_whole_pieces that store_retire.c reads (compact_step) */
	compact_step,
	NULL,
};
static int (*const migrate_check[])(struct store *s, char *err, size_t errlen) = {
	[12] = store__states_check, /* 0013_states: only known states and statuses */
};

/* The number of rows whose foreign key finds no parent, into *n (SQLite's
 * foreign_key_check). 0 or a negative errno. */
static int fk_violations(struct store *s, int64_t *n)
{
	sqlite3_stmt *st;
	int rc = store__first(s, &st, "SELECT count(*) FROM pragma_foreign_key_check", "");

	if (rc == 0)
		*n = sqlite3_column_int64(st, 0);
	store__done(st);
	return rc;
}

/*
 * Applies the migrations from version on, in one transaction (s->lock
 * taken and released here). A migration that makes a table again
 * (0011_carry, 0013_states) drops a table that others' foreign keys name:
 * foreign keys are off while they run, and the rows that break one must
 * not be more after them than before (SQLite's documented way of a schema
 * change; an older store may keep a few from before foreign keys were
 * checked). 0, or a negative errno with what went wrong in err (when not
 * NULL) and *said set when err holds a message of its own.
 */
static int migrate(struct store *s, int version, char *err, size_t errlen, int *said)
{
	char v[16], why[512] = "";
	int64_t before = 0, after = 0;
	int rc, i;

	rc = store__script(s, "PRAGMA foreign_keys=OFF;");
	if (rc)
		return rc;
	rc = store__txn_lock(s);
	if (rc)
		return rc;
	rc = fk_violations(s, &before);
	for (i = version; rc == 0 && i < schema_version; i++) {
		if (i < (int)(sizeof(migrate_check) / sizeof(migrate_check[0])) && migrate_check[i])
			rc = migrate_check[i](s, why, sizeof(why));
		if (rc == 0)
			rc = store__script(s, schema_migrations[i]);
		if (rc == 0 && i < (int)(sizeof(migrate_c) / sizeof(migrate_c[0])) && migrate_c[i])
			rc = migrate_c[i](s, version);
	}
	if (rc && !why[0])
		snprintf(why, sizeof(why), "upgrade to version %d: %s", i, sqlite3_errmsg(s->db));
	if (rc == 0)
		rc = fk_violations(s, &after);
	if (rc == 0 && after > before) {
		snprintf(why, sizeof(why), "the upgrade to version %d would leave %lld rows "
			 "without the row their foreign key names", schema_version,
			 (long long)(after - before));
		rc = -EIO;
	}
	snprintf(v, sizeof(v), "%d", schema_version);
	if (rc == 0)
		rc = store__exec(s, "INSERT OR REPLACE INTO meta(key, value) VALUES "
				 "('schema_version', ?)", "s", v);
	rc = store__txn_unlock(s, rc);
	if (store__script(s, "PRAGMA foreign_keys=ON;") && rc == 0)
		rc = -EIO;
	if (rc && why[0] && err) {
		snprintf(err, errlen, "%s", why);
		*said = 1;
	}
	return rc;
}

/* The columns of items that migrations after version added, as one temp
 * view over main.items (several migrations add columns to it, and a view
 * cannot extend another of the same name). */
static int compat_items(sqlite3 *db, int version)
{
	char sql[1024];

	if (version >= 14)
		return 0;
	snprintf(sql, sizeof(sql), "CREATE TEMP VIEW items AS SELECT *%s%s%s%s%s FROM (SELECT *, "
		 "COALESCE(CAST(strftime('%%s', updated_at) AS INTEGER), 0) * 1000000000 AS t "
		 "FROM main.items);",
		 version < 2 ? ", t AS dir_mtime_ns, t AS dir_ctime_ns, t AS dir_atime_ns" : "",
		 version < 4 ? ", '' AS verdict_head, '' AS assessment_head" : "",
		 version < 5 ? ", 0 AS round, '' AS disposition" : "",
		 version < 6 ? ", -1 AS dir_uid, -1 AS dir_gid, CASE archived WHEN 2 THEN 1533 "
			       "ELSE 493 END AS dir_mode" : "",
		 ", '' AS route, '' AS template, '' AS engine, '' AS review_request");
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* The same for the columns of documents (0002_times, 0006_owners,
 * 0009_nodes, 0010_links). */
static int compat_documents(sqlite3 *db, int version)
{
	char sql[256];

	if (version >= 10)
		return 0;
	snprintf(sql, sizeof(sql), "CREATE TEMP VIEW documents AS SELECT *%s%s%s%s FROM "
		 "main.documents;", version < 2 ? ", mtime_ns AS atime_ns" : "",
		 version < 6 ? ", -1 AS uid, -1 AS gid" : "",
		 version < 9 ? ", 'file' AS kind, 0 AS rdev" : "", ", 0 AS link");
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* The same for the columns of revisions (0008_compact: every revision
 * whole, in content; 0009_nodes; 0015_whole_slots: a current revision's
 * row of whole has its id). */
static int compat_revisions(sqlite3 *db, int version)
{
	char sql[384];

	if (version >= 15)
		return 0;
	snprintf(sql, sizeof(sql), "CREATE TEMP VIEW revisions AS SELECT *%s%s%s FROM main.revisions;",
		 version < 8 ? ", 0 AS enc, NULL AS base, 0 AS depth, CASE WHEN content IS NULL "
			       "THEN 0 ELSE 1 END AS seq" : "",
		 version < 9 ? ", 'file' AS kind, 0 AS rdev" : "",
		 version < 8 ? ", NULL AS slot" : ", CASE WHEN enc = 0 THEN id END AS slot");
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Sets *flag (s->ckpt_wanted or s->ckpt_stop) and wakes the checkpointer. */
static void ckpt_signal(struct store *s, int *flag)
{
	pthread_mutex_lock(&s->ckpt_lock);
	*flag = 1;
	pthread_cond_signal(&s->ckpt_cond);
	pthread_mutex_unlock(&s->ckpt_lock);
}

/* The WAL hook of s->db, after each commit (under s->lock): wakes the
 * checkpointer once the WAL holds ckpt_pages pages, and again each time it
 * grew by ckpt_step since or came back to ckpt_pages after starting over;
 * from ckpt_max on checkpoints here first (see the top). */
static int on_wal_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct store *s = arg;

	if (pages >= s->ckpt_max) {
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		/* Its TRUNCATE, should no write follow to start the WAL over. */
		ckpt_signal(s, &s->ckpt_wanted);
		return SQLITE_OK;
	}
	pthread_mutex_lock(&s->ckpt_lock);
	if (pages < s->ckpt_pages) {
		s->ckpt_woken_at = 0; /* started over since */
	} else if (!s->ckpt_woken_at || pages < s->ckpt_woken_at ||
		   pages >= s->ckpt_woken_at + s->ckpt_step) {
		/* A WAL that a TRUNCATE started over (woken_at 0 again) may
		 * pass ckpt_pages in one commit, above the old mark. */
		s->ckpt_woken_at = pages;
		s->ckpt_wanted = 1;
		pthread_cond_signal(&s->ckpt_cond);
	}
	pthread_mutex_unlock(&s->ckpt_lock);
	return SQLITE_OK;
}

/* The checkpointer thread: a PASSIVE checkpoint each time it is woken,
 * and after CKPT_QUIET_MS without a wake while it is behind or the WAL
 * file is past WAL_LIMIT; once caught up with a WAL of ckpt_pages or more,
 * a RESTART checkpoint, or a TRUNCATE one when the WAL is past WAL_LIMIT
 * and no commit came for CKPT_QUIET_MS (see the top). Until ckpt_stop.
 * Its failures (SQLITE_BUSY while another checkpoint runs, a writer or a
 * reader) are left for the next pass. */
static void *ckpt_main(void *arg)
{
	struct store *s = arg;
	int behind = 0, oversize = 0, quiet, mode, log, done, rc;
	uint64_t seen;

	pthread_mutex_lock(&s->ckpt_lock);
	for (;;) {
		quiet = 0;
		while (!s->ckpt_wanted && !s->ckpt_stop) {
			if (!behind && !oversize) {
				pthread_cond_wait(&s->ckpt_cond, &s->ckpt_lock);
				continue;
			}
			seen = store_commits(s);
			(void)util_cond_wait_ms(&s->ckpt_cond, &s->ckpt_lock, CKPT_QUIET_MS);
			quiet = !s->ckpt_wanted && store_commits(s) == seen;
			if (quiet || (behind && !s->ckpt_wanted))
				break;
		}
		if (s->ckpt_stop)
			break;
		s->ckpt_wanted = 0;
		pthread_mutex_unlock(&s->ckpt_lock);
		log = done = -1;
		rc = sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log,
					       &done);
		behind = rc != SQLITE_OK || done < log;
		oversize = 0;
		pthread_mutex_lock(&s->ckpt_lock);
		/* Under ckpt_lock: a commit's hook sees the WAL before the
		 * RESTART or TRUNCATE with its mark, or after it with the mark
		 * at 0. */
		if (!behind && log >= s->ckpt_pages) {
			mode = quiet && log > s->ckpt_pages ? SQLITE_CHECKPOINT_TRUNCATE
							    : SQLITE_CHECKPOINT_RESTART;
			behind = sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, mode, NULL, NULL) !=
				 SQLITE_OK;
			if (!behind)
				s->ckpt_woken_at = 0;
			if (!behind && mode == SQLITE_CHECKPOINT_TRUNCATE)
				__atomic_store_n(&s->wal_filled, 0, __ATOMIC_RELEASE);
			oversize = !behind && mode == SQLITE_CHECKPOINT_RESTART &&
				   log > s->ckpt_pages;
		}
	}
	pthread_mutex_unlock(&s->ckpt_lock);
	return NULL;
}

/* How many frames of pages of page bytes hold as many WAL bytes as n
 * frames of 4 KiB pages (a frame: its page and a 24-byte header), so that
 * a WAL of ckpt_pages frames is never larger than WAL_LIMIT. */
static int ckpt_frames(int n, int page)
{
	return (int)((long long)n * (4096 + 24) / (page + 24));
}

/* Starts the checkpointer of the writable store at path (see the top) and
 * turns the automatic checkpoint off; on any failure leaves it on, at
 * ckpt_pages frames. The thread blocks every signal: they are for the
 * threads that wait for them. */
static void ckpt_start(struct store *s, const char *path)
{
	sigset_t all, old;
	sqlite3_stmt *st;
	int rc, page = 4096;

	pthread_mutex_lock(&s->lock);
	if (store__first(s, &st, "PRAGMA page_size", "") == 0 && sqlite3_column_int(st, 0) > 0)
		page = sqlite3_column_int(st, 0);
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	s->ckpt_pages = ckpt_frames(CKPT_PAGES, page);
	s->ckpt_step = ckpt_frames(CKPT_STEP, page);
	s->ckpt_max = ckpt_frames(CKPT_MAX_PAGES, page);
	/* Without the thread (a failure below), SQLite's automatic
	 * checkpoint stays: at the same WAL bytes. */
	sqlite3_wal_autocheckpoint(s->db, s->ckpt_pages);
	/* A connection that has read nothing yet does not know the WAL, and
	 * its checkpoints do nothing: one read first. */
	if (sqlite3_open_v2(path, &s->ckpt_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    store__vfs()) != SQLITE_OK ||
	    sqlite3_exec(s->ckpt_db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL) !=
		    SQLITE_OK) {
		sqlite3_close(s->ckpt_db);
		s->ckpt_db = NULL;
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&s->ckpt_thread, NULL, ckpt_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		sqlite3_close(s->ckpt_db);
		s->ckpt_db = NULL;
		return;
	}
	s->ckpt_running = 1;
	/* Replaces the hook of sqlite3_wal_autocheckpoint(). */
	sqlite3_wal_hook(s->db, on_wal_commit, s);
}

/* Stops the checkpointer, if any, and closes its connection. */
static void ckpt_stop(struct store *s)
{
	if (s->ckpt_running) {
		ckpt_signal(s, &s->ckpt_stop);
		pthread_join(s->ckpt_thread, NULL);
		s->ckpt_running = 0;
	}
	sqlite3_close(s->ckpt_db);
	s->ckpt_db = NULL;
}

/* sqlite3_commit_hook: counts the commit (store_commits); lets it go on. */
static int on_commit(void *arg)
{
	struct store *s = arg;

	__atomic_add_fetch(&s->commits, 1, __ATOMIC_RELEASE);
	return 0;
}

uint64_t store_commits(struct store *s)
{
	return __atomic_load_n(&s->commits, __ATOMIC_ACQUIRE);
}

int store_open(const char *dir, int create, int readonly, struct store **out, char *err,
	       size_t errlen)
{
	struct store *s;
	char path[4096];
	char *value = NULL;
	int flags, rc, version = 0, i;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_DB_NAME);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->ckpt_lock, NULL);
	pthread_cond_init(&s->ckpt_cond, NULL);
	pthread_mutex_init(&s->later_lock, NULL);
	pthread_cond_init(&s->later_cond, NULL);
	flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (create)
		flags |= SQLITE_OPEN_CREATE;
	flags |= SQLITE_OPEN_NOMUTEX;
	rc = sqlite3_open_v2(path, &s->db, flags, store__vfs());
	if (rc != SQLITE_OK) {
		int e = rc == SQLITE_CANTOPEN ? -ENOENT : -EIO;

		if (err)
			snprintf(err, errlen, "%s: %s", path,
				 rc == SQLITE_CANTOPEN ? "no packetfs store here" : sqlite3_errmsg(s->db));
		sqlite3_close(s->db);
		free(s);
		return e;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 1);
	s->writable = !readonly;
	s->item_gen = 1;
	store__items_init(s);
	store__sizes_init(s);
	sqlite3_commit_hook(s->db, on_commit, s);
	if (!readonly) {
		char sql[160];

		snprintf(sql, sizeof(sql), "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
			 "PRAGMA foreign_keys=ON; PRAGMA journal_size_limit=%d; "
			 "PRAGMA secure_delete=FAST;", WAL_LIMIT);
		rc = 0;
		if (create) {
			char size[40];

			snprintf(size, sizeof(size), "PRAGMA page_size=%d;", STORE_PAGE_SIZE);
			rc = store__script(s, size);
		}
		if (rc == 0)
			rc = store__script(s, sql);
		if (rc)
			goto fail;
	}
	if (sqlite3_exec(s->db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto fail;
	}
	if (sqlite3_exec(s->db, "SELECT 1 FROM meta LIMIT 0", NULL, NULL, NULL) == SQLITE_OK &&
	    store_meta_get(s, "schema_version", &value) == 0) {
		version = atoi(value);
		free(value);
	} else if (!create) {
		rc = -ENOENT;
		if (err)
			snprintf(err, errlen, "%s: not a packetfs store", path);
		goto fail_quiet;
	}
	if (version > schema_version) {
		rc = -EPROTO;
		if (err)
			snprintf(err, errlen, "%s: store version %d is newer than this packetfs (%d)",
				 path, version, schema_version);
		goto fail_quiet;
	}
	if (readonly && version < schema_version) {
		for (i = version; rc == 0 && i < schema_version; i++)
			if (i < (int)(sizeof(compat) / sizeof(compat[0])) && compat[i] &&
			    sqlite3_exec(s->db, compat[i], NULL, NULL, NULL) != SQLITE_OK)
				rc = -EIO;
		if (rc == 0)
			rc = compat_items(s->db, version);
		if (rc == 0)
			rc = compat_documents(s->db, version);
		if (rc == 0)
			rc = compat_revisions(s->db, version);
		if (rc)
			goto fail;
	}
	if (!readonly && version < schema_version) {
		char why[512];
		int said = 0;

		rc = migrate(s, version, why, sizeof(why), &said);
		if (rc && said) {
			if (err)
				snprintf(err, errlen, "%s: %s", path, why);
			goto fail_quiet;
		}
		if (rc)
			goto fail;
		/* Hands back the pages a conversion freed (0008: most of an old
		 * store), once; a failure leaves them to be reused. */
		if (version > 0 && version < 8)
			sqlite3_exec(s->db, "VACUUM", NULL, NULL, NULL);
	}
	if (!readonly) {
		ckpt_start(s, path);
		store__later_start(s);
	}
	*out = s;
	return 0;
fail:
	if (err)
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
fail_quiet:
	store_close(s);
	return rc ? rc : -EIO;
}

void store_close(struct store *s)
{
	int i;

	if (!s)
		return;
	/* First what waits to be retired; then the last connection to close
	 * checkpoints the WAL away. */
	store__later_stop(s);
	ckpt_stop(s);
	for (i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache[i].st);
	lru_clear(&s->items);
	lru_clear(&s->sizes);
	store__rev_forget(s);
	ZSTD_freeCCtx(s->zc);
	ZSTD_freeDCtx(s->zd);
	sqlite3_close(s->db);
	pthread_cond_destroy(&s->ckpt_cond);
	pthread_mutex_destroy(&s->ckpt_lock);
	pthread_cond_destroy(&s->later_cond);
	pthread_mutex_destroy(&s->later_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The first store_sync of a WAL file writes its blocks up to WAL_LIMIT
 * (store_vfs.c says why), inside a write transaction that writes no frame:
 * the WAL's write lock keeps every other connection's frames, and every
 * restart or truncation of the file, out meanwhile. Once per store; again
 * after a TRUNCATE checkpoint cut the file. Only speed is at stake: a
 * failure (a full disk) is logged and not tried again until then, and the
 * sync goes on. Lock held. */
static void wal_fill(struct store *s)
{
	sqlite3_file *wal = NULL;
	int rc;

	if (!s->writable || __atomic_load_n(&s->wal_filled, __ATOMIC_ACQUIRE) ||
	    store__exec(s, "BEGIN IMMEDIATE", ""))
		return;
	__atomic_store_n(&s->wal_filled, 1, __ATOMIC_RELEASE);
	rc = sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
	if (rc == SQLITE_OK && wal && wal->pMethods)
		rc = store__vfs_wal_fill(wal, WAL_LIMIT);
	if (rc != SQLITE_OK)
		util_log(LOG_WARNING, "store: writing the WAL file's blocks ahead failed (%s); "
			 "each fsync syncs its growth instead", sqlite3_errstr(rc));
	if (store__exec(s, "COMMIT", ""))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_sync(struct store *s)
{
	struct timespec pause = {0, 1000000};
	sqlite3_file *wal = NULL;
	int rc, tries, fd;

	pthread_mutex_lock(&s->lock);
	wal_fill(s);
	/* Every transaction this connection committed is in the WAL or, once
	 * checkpointed, in the database file, which the checkpoint synced
	 * before the WAL could be restarted over those frames: syncing the
	 * WAL file is enough. Its fdatasync(2) is made without the lock, on
	 * a descriptor of the same file (store__vfs_wal_fd): the frames of
	 * every commit that returned are in the file, which any descriptor
	 * of it syncs, and the commits of other threads go on meanwhile
	 * instead of waiting for the disk (two processes saving documents
	 * with fsync at once: 12-22% less time a save each). Frames other
	 * threads write meanwhile are synced too, or not; a restart or
	 * truncation of the WAL meanwhile only drops frames a checkpoint
	 * copied and synced. Where the VFS gives no descriptor, SQLite's own
	 * handle syncs, under the lock. */
	rc = sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
	if (rc == SQLITE_OK && wal && wal->pMethods && (fd = store__vfs_wal_fd(wal)) >= 0) {
		pthread_mutex_unlock(&s->lock);
		rc = fdatasync(fd) == 0 ? 0 : errno;
		close(fd);
		if (rc == 0)
			return 0;
		util_log(LOG_ERR, "store: fsync of the WAL failed: %s", strerror(rc));
		return -EIO;
	}
	if (rc == SQLITE_OK && wal && wal->pMethods) {
		rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
		pthread_mutex_unlock(&s->lock);
		if (rc == SQLITE_OK)
			return 0;
		util_log(LOG_ERR, "store: fsync of the WAL failed (SQLite code %d)", rc);
		return -EIO;
	}
	/* No WAL open (nothing written through this connection): a full
	 * checkpoint, one at a time: while the checkpointer's pass runs, this
	 * one is refused at once (SQLITE_BUSY, the busy handler is not asked),
	 * so it waits for that pass, up to the busy timeout. */
	for (tries = 0;; tries++) {
		rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_FULL, NULL, NULL);
		if ((rc & 0xff) != SQLITE_BUSY || tries >= 5000)
			break;
		nanosleep(&pause, NULL);
	}
	rc = store__err(s, rc);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_integrity(struct store *s, struct buf *out)
{
	sqlite3_stmt *st;
	int bad = 0, rc;

	pthread_mutex_lock(&s->lock);
	rc = store__prepare(s, &st, "PRAGMA integrity_check", "");
	while (rc == 0 && (rc = store__step(s, st)) > 0) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (t && strcmp(t, "ok") != 0) {
			buf_printf(out, "sqlite: %s\n", t);
			bad = 1;
		}
		rc = 0;
	}
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc < 0 ? rc : bad;
}

int store_snapshot_begin(struct store *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	/* A deferred transaction takes its snapshot at its first read. */
	rc = store__script(s, "BEGIN DEFERRED");
	if (rc == 0)
		rc = store__script(s, "SELECT count(*) FROM sqlite_schema");
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void store_snapshot_end(struct store *s)
{
	pthread_mutex_lock(&s->lock);
	if (!sqlite3_get_autocommit(s->db))
		(void)sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL); /* a read: nothing to lose */
	pthread_mutex_unlock(&s->lock);
}

int store_meta_get(struct store *s, const char *key, char **value)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__first(s, &st, "SELECT value FROM meta WHERE key = ?", "s", key);
	if (rc == 0) {
		*value = store__col_dup(st, 0);
		if (!*value)
			rc = -ENOMEM;
	}
	store__done(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_meta_set(struct store *s, const char *key, const char *value)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store__exec(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", "ss", key, value);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
