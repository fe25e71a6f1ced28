/*
 * engine_int.h - what the engine's own modules (engine.c, packet.c,
 * view.c, pipe.c) share: the struct engine, the table of active runs, and
 * the loop-thread command queue. Not for fs/.
 *
 * Locks, in the order they may be taken (the store's own lock, inside
 * store.c, comes last of all and never calls out):
 *   ns_lock     - rwlock: renames and unlinks of documents (exclusive)
 *                 against commits of open documents (shared)
 *   cfg_lock    - cfg, cfg_json, recipes (swapped whole on a config write, and
 *                 when recipes_dir changed: engine_recipes_refresh)
 *   files_lock  - the open-document table (packet_doc.c), then an open
 *                 document's own lock
 *   active_lock - the active-run table (written by the loop thread, read by
 *                 FUSE threads for status "gpus" and revision "stage")
 *   q_lock      - the command queue to the loop thread
 *   record_lock - the last record answer of each item (record.c); takes
 *                 no other lock
 * The store has its own lock inside store.c.
 */
#ifndef PACKETFS_ENGINE_INT_H
#define PACKETFS_ENGINE_INT_H

#include <pthread.h>
#include <uv.h>

#include "config.h"
#include "engine.h"
#include "recipe.h"
#include "store.h"

#define ACTIVE_MAX 256
#define ITEM_NAME_MAX 64

/* One process running for an item (a stage program or a recipe). */
struct active_run {
	int64_t item_id;
	int64_t run_id;
	pid_t pgid;
	char kind;        /* 's' stage, 'r' recipe */
	char name[64];    /* stage or recipe name */
	int gpus[16];
	int ngpus;
	int64_t start_ns; /* when it started, ns since the Unix epoch */
};

struct open_doc; /* packet_int.h */
struct pipe;      /* pipe.c */

/* A request from a FUSE thread to the loop thread (engine_call). */
struct engine_cmd {
	char item[ITEM_NAME_MAX + 1];
	char verb[16];
	char arg[128];
	char line[80];         /* the ctl line as written, shortened (ctl.c); "" when none */
	int refused;           /* set by the sender: the line was refused before it came
				  here; the loop only records it as ctl's result (-EINVAL) */
	char refusal[256];     /* why it was refused (refused only) */
	int result;            /* 0 or negative errno, set by the loop */
	char msg[256];         /* why, for last_result / errors */
	const void *payload;   /* record: the struct record_req; NULL otherwise */
	int64_t run_id;        /* record: the run (set by the loop; record-cancel: given) */
	int run_no;            /* record: its run number, set by the loop */
	char log[256];         /* record: its log's item-relative path, set by the loop */
	int done;              /* protected by q_lock */
	pthread_cond_t cond;
	struct engine_cmd *next;
};

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
	uid_t uid;              /* owner of everything on the mount */
	gid_t gid;
	int64_t start_ns;       /* mount time: the mtime of fixed entries */

	pthread_mutex_t cfg_lock;
	struct pfs_config *cfg;         /* protected by cfg_lock */
	struct pfs_config **old_cfgs;   /* replaced ones; protected by cfg_lock */
	size_t nold_cfgs;
	char *cfg_json;                 /* protected by cfg_lock */
	struct recipe_catalog recipes;  /* protected by cfg_lock */

	pthread_rwlock_t ns_lock;
	pthread_mutex_t files_lock;
	struct open_doc *docs;          /* protected by files_lock */

	pthread_mutex_t active_lock;
	struct active_run active[ACTIVE_MAX]; /* protected by active_lock */
	int nactive;                          /* protected by active_lock */

	pthread_mutex_t q_lock;
	struct engine_cmd *q_head, *q_tail;  /* protected by q_lock */
	int stopping;                        /* protected by q_lock */

	uv_loop_t loop;        /* loop thread only */
	uv_async_t wake;
	pthread_t thread;
	int started;
	struct pipe *pipe;     /* loop thread only */

	pthread_mutex_t digest_lock;
	struct digest_slot digests[DIGEST_SLOTS]; /* protected by digest_lock; by item id */
	size_t digest_bytes;                      /* protected by digest_lock */

	engine_change_fn watch_fn; /* constant once started; NULL: nobody watches */
	void *watch_arg;

	pthread_mutex_t record_lock;
	struct record_slot records[RECORD_SLOTS]; /* protected by record_lock; by item id */
	uint64_t record_stamp;                    /* protected by record_lock */
};

/*
 * Runs cmd on the loop thread and waits for its result (0 or negative
 * errno, message in cmd->msg). -ENOTCONN when the loop is not running
 * (offline engines). Any thread except the loop thread.
 */
int engine_call(struct engine *e, struct engine_cmd *cmd);

/* A request for a recorded run (SPEC §6 "The recorder"). */
struct record_req {
	const char *recipe;   /* a catalog recipe name, e.g. "01-build" */
	char *const *argv;    /* the command and its arguments, NULL-terminated, argv[0] non-empty */
	int gpus;             /* GPUs to grant, or -1: the recipe's "# gpus" */
	int timeout_s;        /* seconds, or -1: the recipe's "# timeout" (0: none) */
	uid_t uid;            /* who asked (the FUSE request's caller) */
	pid_t pid;
};
/*
 * Queues a recorded run of req->argv as a run of recipe req->recipe for item (SPEC §6): the
 * engine runs it like a recipe (worktree cwd, own process group, GPUs, timeout, executor,
 * live log). On success 0, *run_id (the runs table id, for engine_record_cancel and the store),
 * *run_no (the item's run number) and log (the log's item-relative path,
 * "validation/logs/...-N.log", NUL-terminated into logsize bytes); the run row and its log exist
 * when it returns (status "queued" until it starts). Errors with the reason in why: -ENOENT (no
 * such item), -EINVAL (unknown recipe, empty command, bad gpus/timeout, archived item),
 * -ENOTCONN (offline engine), -ENOMEM, -ENOSPC/-EIO (store). Any thread but the loop thread.
 */
int engine_record(struct engine *e, const char *item, const struct record_req *req,
		  int64_t *run_id, int *run_no, char *log, size_t logsize, char *why, size_t whysize);
/* Cancels recorded run run_id of item while it is queued or running (SIGTERM to its process
 * group, SIGKILL after the grace period; a queued one ends cancelled without running). 0,
 * -ENOENT (no such run of the item), -EALREADY (it has ended), -ENOTCONN. Any thread but the
 * loop thread. */
int engine_record_cancel(struct engine *e, const char *item, int64_t run_id, char *why,
			 size_t whysize);

/* The configuration in force. Configurations are swapped, never changed,
 * and every one stays valid until engine_close: no release needed. */
struct pfs_config *engine_config_get(struct engine *e);

/* Reloads e->recipes from the configuration's recipes_dir when it is no
 * longer fresh (recipe_catalog_fresh), so that the catalog follows the
 * directory without a remount. Call it after taking cfg_lock and before
 * reading e->recipes; pointers into the old catalog die with it. On a
 * failed load other than -ENOMEM the catalog becomes empty (the directory
 * cannot be read); on -ENOMEM the old one is kept. Either way the next call
 * tries again. The caller holds cfg_lock. Any thread; blocks while it
 * reads the directory. */
void engine_recipes_refresh(struct engine *e);

/* Replaces the configuration with json (validated first). 0, -EINVAL (err
 * says why, old one kept), -ENOSPC/-EIO. Any thread. */
int engine_config_set(struct engine *e, const char *json, size_t len, char *err, size_t errlen);

/* Appends an event {"ts":..., "item":..., "type":type, ...extra} where
 * extra_json is "" or a string of ,"key":value pairs. Any thread. */
void engine_event(struct engine *e, int64_t item_id, const char *item, const char *type,
		  const char *extra_json);

/* Active-run table (loop thread adds and removes; any thread reads). */
void engine_active_add(struct engine *e, const struct active_run *r);
void engine_active_remove(struct engine *e, int64_t run_id);
/* The stage name whose process group holds pid, into out (or ""). */
void engine_active_stage_of(struct engine *e, pid_t pid, char *out, size_t size);
/* GPUs held by the item's active runs as "0,1" into out (or ""). */
void engine_active_gpus(struct engine *e, int64_t item_id, char *out, size_t size);
/* What runs for the item now, with elapsed seconds: "validate (42 s),
 * 01-build (12 s)" into out, or "". */
void engine_active_running(struct engine *e, int64_t item_id, char *out, size_t size);
/* Whether the item has an active stage or recipe. */
int engine_active_item(struct engine *e, int64_t item_id);

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

/* pipe*.c: the pipeline state machine; loop thread only. */
int pipe_new(struct engine *e, struct pipe **out);
void pipe_free(struct pipe *p);
/* Resumes queued items; called once when the loop starts. */
void pipe_resume(struct pipe *p);
/* Applies one ctl verb for an item, or for a refused command only records
 * "LINE: error: WHY"; either way the outcome becomes the item's last_result
 * (ctl's result: this is its only writer). Result as in struct engine_cmd. */
int pipe_command(struct pipe *p, struct engine_cmd *cmd);
/* pipe_record.c: applies a "record" or "record-cancel" command (engine_record,
 * engine_record_cancel); result as in struct engine_cmd. */
int pipe_record_command(struct pipe *p, struct engine_cmd *cmd);
/* Cancels everything (daemon shutdown): runs become interrupted, except
 * Slurm jobs, which go on in the cluster and are followed again by the
 * next daemon (pipe_reattach). */
void pipe_shutdown(struct pipe *p);
/* Crash recovery before the loop starts: called from engine_open. Runs
 * for which pipe_run_reattaches() holds, and the running stage runs and
 * state of their items, are left for pipe_reattach. */
int pipe_recover(struct engine *e);

/* pipe_slurm.c: Slurm jobs across daemon restarts. */
/* Whether run r is a Slurm job still running (by the store) with a job id
 * and an output file: one that a restarted daemon follows again instead
 * of recording it interrupted. Any thread. */
int pipe_run_reattaches(const struct run *r);
/* Finds, by their output files, the job ids of Slurm runs still running
 * whose daemon died before sbatch's answer was recorded, and records them
 * (so that those runs reattach). Runs scontrol: blocks; crash recovery. */
void pipe_resolve_jobs(struct store *s);
/* The ids of the items (at most max, into ids) that have such runs; the
 * count. Any thread. */
int pipe_reattach_items(struct store *s, int64_t *ids, int max);
/* Follows every such run again, rebuilding each item's validation (or
 * rerun): called once when the loop starts, before pipe_resume. */
void pipe_reattach(struct pipe *p);

#endif
