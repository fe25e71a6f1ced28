/*
 * namespace.h - the namespace layer (SPEC §3, §4): the mount's paths,
 * documents and their revisions, the generated views, the trigger file and
 * the recorder's file. It implements engine.h for fs/ (packet*.c, ctl.c,
 * record.c, view*.c); this header is what those files and engine.c, which
 * opens the engine, share: the struct engine and the namespace's own
 * tables. Not for fs/.
 *
 * Below it: the contract it implements (engine.h, declarations only: the
 * types and prototypes fs/, top/ and cli/ see); the pipeline (pipeline.h),
 * which it asks through pipeline_call and whose hooks engine.c points at
 * engine_changed and engine_doc_refresh; the formats, processes, git and
 * the store.
 *
 * Locks, in the order they may be taken (the pipeline's come after them,
 * the store's own lock last of all, and it never calls out):
 *   a handle's lock - the state of one open file (struct pfs_file,
 *                 packet_file.c), before all the others
 *   ns_lock     - rwlock: renames and unlinks of documents (exclusive)
 *                 against commits of open documents (shared)
 *   files_lock  - the open-document table (packet_doc.c), then an open
 *                 document's own lock
 *   digest_lock - the kept registry digests (view_digest.c)
 *   size_lock   - the remembered sizes of views (view_size.c); takes no
 *                 other lock
 *   refs_lock   - the watch of the configured repository's refs
 *                 (view_size.c); takes no other lock
 *   record_lock - the last record answer of each item (record.c); takes
 *                 no other lock
 *   owed_lock   - the ctl handles whose advance waits for their release
 *                 (ctl.c); takes no other lock
 */
#ifndef PACKETFS_NAMESPACE_H
#define PACKETFS_NAMESPACE_H

#include <pthread.h>

#include "engine.h"
#include "pipeline.h"

struct open_doc; /* packet_int.h */

struct registry_digest;

/* The answer of a request made through validation/record (record.c): the
 * run it queued, and the refusal of the last line refused. */
struct record_answer {
	int64_t run_id;   /* the run queued, 0 when none */
	int err;          /* errno (positive) of the last line refused, 0 when none */
	char why[256];    /* the reason of that refusal */
};

/* The answer of an item's latest record request, kept in memory only. */
#define RECORD_SLOTS 64
struct record_slot {
	int64_t item_id;          /* 0: the slot is free */
	uint64_t stamp;           /* when it was stored: the oldest slot is reused */
	struct record_answer a;
};

/* Command names of writers kept open (packet_who.c). */
#define WHO_COMM 8

/* The marks of write-through appends (packet_through.c): at most one a
 * slot, by the hash of item and path. */
#define THROUGH_SLOTS 64
struct through_mark {
	int64_t item_id;   /* 0: the slot is free */
	uint64_t rel_hash; /* of the document's item-relative path */
	pid_t pid;         /* whose O_APPEND handles of it are counted */
	int runs;          /* how many in a row wrote at most once */
};

/* A kept registry digest (view_digest.c). */
#define DIGEST_SLOTS 64
struct digest_slot {
	int64_t item_id;
	int64_t last_id;               /* of the last registry line it took */
	struct registry_digest *d;     /* NULL: the slot is free */
	size_t bytes;
};

struct engine {
	char *store_dir;
	char *mountpoint;       /* NULL offline */
	int readonly;
	int lock_fd;            /* flock on the database file; -1 readonly */
	struct store *store;
	/* The store owner (the mounting user: the daemon's uid) and the
	 * store's group (the group of the store directory): the owner and
	 * group of the generated entries, and who STORE_ID_DEFAULT stands for
	 * in the store (packet__uid, packet__gid). */
	uid_t uid;
	gid_t gid;
	int64_t start_ns;       /* mount time: the mtime of fixed entries */

	struct pipeline *pl;    /* the configuration, the loop, what runs */

	pthread_rwlock_t ns_lock;
	pthread_mutex_t files_lock;
	struct open_doc *docs;          /* protected by files_lock */
	struct through_mark through[THROUGH_SLOTS]; /* protected by files_lock */

	pthread_mutex_t digest_lock;
	struct digest_slot digests[DIGEST_SLOTS]; /* protected by digest_lock; by item id */
	size_t digest_bytes;                      /* protected by digest_lock */

	pthread_mutex_t size_lock;
	struct lru sizes;         /* protected by size_lock: view sizes (view_size.c) */
	struct view_stamp_index {
		uint64_t commits, refs;  /* view_stamp's; refs 0: nothing kept */
		const struct pfs_config *cfg;
		uint64_t size;
	} index_size;             /* protected by size_lock: index.html's (view_size.c) */
	pthread_mutex_t refs_lock;
	struct refs_watch *refs;  /* protected by refs_lock: NULL until a stamp needs it */
	uint64_t refs_base;       /* protected by refs_lock: added to the watch's counts */
	uint64_t refs_last;       /* protected by refs_lock: the highest count given */

	engine_change_fn watch_fn; /* constant once started; NULL: nobody watches */
	void *watch_arg;

	pthread_mutex_t record_lock;
	struct record_slot records[RECORD_SLOTS]; /* protected by record_lock; by item id */
	uint64_t record_stamp;                    /* protected by record_lock */

	pthread_mutex_t refusal_lock;
	struct refusal *refusals; /* protected by refusal_lock: the last refused writes (refusal.c) */

	pthread_mutex_t tmp_lock;
	struct pfs_tmp *tmps;     /* protected by tmp_lock: temp files of .packetfs/ (packet_tmp.c) */

	pthread_mutex_t remove_lock;
	struct remover *removers; /* protected by remove_lock: recursive removals (packet_remove.c) */

	pthread_mutex_t who_lock;
	struct who_comm {
		pid_t pid;
		int fd;           /* /proc/PID/comm, O_CLOEXEC; -1: the slot is free */
	} who_comm[WHO_COMM];     /* protected by who_lock: the last writers' (packet_who.c) */
	int who_next;             /* protected by who_lock: the slot replaced next */

	pthread_mutex_t owed_lock;
	pthread_cond_t owed_cond;  /* broadcast when a handle leaves owed */
	uint64_t owed_paid;        /* protected by owed_lock: handles that left owed */
	struct pfs_file *owed;     /* protected by owed_lock: ctl handles whose empty-write
				    * advance is applied at their release (ctl.c) */
};

/* Sets up and closes the command names packet_who.c keeps open
 * (engine_open, engine_close). */
void packet__who_init(struct engine *e);
void packet__who_free(struct engine *e);
/* Frees the refusals refusal.c keeps (engine_close). */
void packet__refusals_free(struct engine *e);
/* Frees the temp files of .packetfs/ (engine_close). */
void packet__tmps_free(struct engine *e);
/* Forgets the recursive removals packet_remove.c follows (engine_close). */
void packet__removers_free(struct engine *e);

/* After the engine wrote a document straight to the store: an open,
 * unchanged copy of it (shared by its readers) takes the new content; a
 * copy with pending writes keeps them. Any thread. */
void engine_doc_refresh(struct engine *e, int64_t item_id, const char *path);

/* Tells the watcher (engine_watch) that the engine changed rel (an
 * item-relative path, or a root path when item is NULL) on its own. Any
 * thread. */
void engine_changed(struct engine *e, const char *item, const char *rel, enum engine_change what);

/* Item name rules: [a-z0-9][a-z0-9._-]{0,63}. */
int engine_valid_item_name(const char *name);

/* view.c: generated views. Append the content to out. */
int view_status(struct engine *e, const struct item *it, int json, struct buf *out);
int view_evidence(struct engine *e, const struct item *it, struct buf *out);
int view_change_diff(struct engine *e, const struct item *it, struct buf *out);
/*
 * The change.diff cache (view_diff.c), one entry per item, least recently
 * used dropped first. view_diff_cached appends to out the diff of item in
 * repository repo kept as made from commits base..head (40 hex digits
 * each): 1 when there was one (its length may be 0), 0 when not, -ENOMEM.
 * view_diff_keep keeps diff[len] (copied) as that diff, replacing the
 * item's entry; allocation failure or a diff larger than the whole cache
 * only drops the entry. Any thread.
 */
int view_diff_cached(const char *repo, int64_t item, const char *base, const char *head,
		     struct buf *out);
void view_diff_keep(const char *repo, int64_t item, const char *base, const char *head,
		    const char *diff, size_t len);
/* The commit the item's branch points to (40 hex digits) into head, read
 * through the calling thread's kept repository (repo_branch_head). 0,
 * -ENOENT, or -EIO (libgit2 failed). */
int view_head(struct engine *e, const struct item *it, char head[41]);

/*
 * What the views of an item that view_size.c remembers are made of,
 * besides the item's row and the time: the store as it is after a number
 * of commits, the pipeline's configuration, and the commits that the
 * item's branch and its base resolve to ("" when they do not). Looking
 * those two up costs more than the rest, so a stamp also carries the
 * change count of the configured repository's refs (refs_watch.h): while
 * it has not moved since the commits were last looked up for the item,
 * they are the same.
 */
struct view_stamp {
	uint64_t commits;              /* store_commits */
	const struct pfs_config *cfg;  /* pipeline_config_get: never reused while open */
	uint64_t refs;                 /* refs_watch_count; 0: the refs cannot be watched */
	int exact;                     /* head and base are looked up */
	int by_refs;                   /* exact, and the base is a ref (repo_rev_is_ref) */
	char head[41], base[41];
};
/* The stamp of the views as things are now, into st, without head and
 * base (st->exact 0). Any thread; takes refs_lock. */
void view_stamp(struct engine *e, struct view_stamp *st);
/* Looks up the commits of item it's branch and base into st (st->exact
 * 1), and whether the base is a ref the count follows (st->by_refs), after
 * view_stamp filled the rest. Any thread. */
void view_stamp_exact(struct engine *e, const struct item *it, struct view_stamp *st);
/* Whether two stamps with head and base are the same in every part. */
int view_stamp_equal(const struct view_stamp *a, const struct view_stamp *b);

/*
 * view_size.c: sizes of rendered views remembered per item under the stamp
 * they were rendered at, so that a stat of an unchanged view renders
 * nothing (least recently used items dropped first). kind is one of the
 * VIEW_SIZE_* slots. view_size_get: 1 and *size when a size of that kind
 * was kept under a stamp equal to st: in the store's commits and the
 * configuration, and then in the refs' change count (not 0) when st has no
 * head and base, else in head and base, in which case the item's
 * remembered change count becomes st's (the commits were looked up after
 * it was read; 0 unless st->by_refs); else 0. view_size_keep: keeps size under st, which has
 * head and base (another stamp's sizes of the item go). view_sizes_init:
 * an empty table (engine_open); view_sizes_free: drops all (engine_close).
 * Any thread.
 */
enum { VIEW_SIZE_STATUS, VIEW_SIZE_STATUS_JSON, VIEW_SIZE_EVIDENCE, VIEW_SIZE_JUNIT,
       VIEW_SIZE_REPORT, VIEW_SIZE_DIFF, VIEW_SIZE_SCOPE, VIEW_SIZE_MEASUREMENTS,
       VIEW_SIZE_KINDS };
int view_size_get(struct engine *e, int64_t item, int kind, const struct view_stamp *st,
		  uint64_t *size);
void view_size_keep(struct engine *e, int64_t item, int kind, const struct view_stamp *st,
		    uint64_t size);
void view_sizes_init(struct engine *e);
void view_sizes_free(struct engine *e);
/* index.html's size, remembered under a stamp without head and base: it
 * is made of every live item's row (view_index), which the store's
 * commits, the configuration and the refs (not 0: watched) fix, unless
 * the rendering was clocked. view_index_size_get: 1 and *size when kept
 * under a stamp equal to st in those three, else 0. view_index_size_keep:
 * keeps size under st (nothing when st->refs is 0). Any thread. */
int view_index_size_get(struct engine *e, const struct view_stamp *st, uint64_t *size);
void view_index_size_keep(struct engine *e, const struct view_stamp *st, uint64_t size);
/* Whether the item's views depend now on what the store does not hold:
 * the seconds of a running stage or recipe, or a state not stored yet
 * (pipeline_active_item, pipeline_unstored_state). Any thread. */
int view_unstampable(struct engine *e, int64_t item);
/* The recipes the item's plan names (plan_names), into *names (a NULL-
 * terminated vector the caller frees with strv_free; empty when the item
 * has no plan.md or it names none). 0, -ENOMEM or another negative errno
 * from the store. Any thread. */
int view_plan_names(struct engine *e, int64_t item, char ***names);

/* view_junit.c: validation/junit.xml, appended to out. 0 or a negative
 * errno (-ENOMEM, the store's). Any thread. */
int view_junit(struct engine *e, const struct item *it, struct buf *out);

/*
 * view_scope.c: view_scope appends validation/scope.md of it at the branch
 * head to out (0 or a negative errno). view_scope_get puts into out[size]
 * the scope at head (40 hex digits, "" or NULL: none) as status shows it
 * and appends the touched kept paths ("a, b") to kept when not NULL: 0
 * without a scope block (out ""), 1 when no kept path is touched, 2 when
 * one is, -1 for a malformed block (out "invalid: WHY"). view_scope_evidence
 * inserts the line "Scope: ..." into the evidence.md text that starts at
 * out->data[start], before its footer; nothing without a block. 0 or
 * -ENOMEM.
 */
int view_scope(struct engine *e, const struct item *it, struct buf *out);

/* view_measure.c: validation/measurements.md of it at the branch head,
 * appended to out: each measured recipe's section from the log of its
 * latest verdict line there. 0 or a negative errno. Any thread. */
int view_measurements(struct engine *e, const struct item *it, struct buf *out);
/* view_measure.c: report.html's measurements section (a heading and an
 * inline SVG a metric of each measured recipe's latest batch at the head:
 * its counted runs and medians), appended to out; nothing when no measured
 * recipe finished there. 0 or a negative errno. Any thread. */
int view_measure_chart(struct engine *e, const struct item *it, struct buf *out);
int view_scope_get(struct engine *e, const struct item *it, const char *head, char *out,
		   size_t size, struct buf *kept);
int view_scope_evidence(struct engine *e, const struct item *it, const char *head,
			struct buf *out, size_t start);

/* view_report.c: MOUNT/ITEM/report.html of it, with *clocked set to 1
 * when the page depends on the time it was made (a run not ended has a
 * bar that ends now, a running stage's seconds), else 0; view_index.c:
 * MOUNT/index.html, a row per live item, with *clocked set to 1 when the
 * page depends on more than the store's rows, the configuration and the
 * repository's refs (an item with a run going or a state the store did not
 * take, whose row shows the time; an item whose base is no ref, which may
 * resolve otherwise with no ref changed), else 0. Self-contained HTML pages
 * (view_html.h). Append to out; 0 or a negative errno of the store. Any
 * thread. */
int view_report_clocked(struct engine *e, const struct item *it, struct buf *out, int *clocked);
int view_index(struct engine *e, struct buf *out, int *clocked);
/* view_html.c: tells the watcher of the pages that follow the change of
 * rel in item (engine_changed's arguments): report.html when status,
 * evidence.md or change.diff changed, index.html when status changed or
 * an item was archived. Any thread. */
void view_html_changed(struct engine *e, const char *item, const char *rel,
		       enum engine_change what);

/* view_digest.c: calls fn(arg, d) with the digest (registry.h) of every
 * registry line of the item, oldest first, as the store holds them now,
 * kept between calls so that only the lines appended since are read. fn
 * runs under the cache's lock and must not keep d. Returns fn's result, or
 * a negative errno of the store (-ENOMEM, -EIO) without calling fn. Any
 * thread. */
int view_digest(struct engine *e, int64_t item_id,
		int (*fn)(void *arg, const struct registry_digest *d), void *arg);
/* Frees the kept digests (engine_close). */
void view_digests_free(struct engine *e);

/* A named recipe and its latest engine run at a commit, copied out of the
 * item's registry digest (view_cases_read). */
struct view_case {
	char *name;
	int ran; /* 0: no engine run at the commit (then only name is set) */
	int run;
	char *status, *command, *evidence, *note, *started_at, *log_sha256;
	double duration_s;
	int has_exit_code, exit_code, signal; /* registry_latest's */
};
struct view_cases {
	char *const *names;  /* in: the recipes, in order */
	const char *head;    /* in: the commit a run counts at; NULL: none counts */
	struct view_case *v; /* out: v[i] for names[i] */
	size_t n;
};
/* view_digest.c: fills c->v and c->n (c->n = strv_len(c->names)) from the
 * registry of item_id through view_digest. 0, -ENOMEM or view_digest's
 * error; the caller frees what it filled with view_cases_free, on failure
 * too. Any thread. */
int view_cases_read(struct engine *e, int64_t item_id, struct view_cases *c);
/* Frees c->v and what its cases hold; c->v NULL and c->n 0 after. */
void view_cases_free(struct view_cases *c);

#endif
