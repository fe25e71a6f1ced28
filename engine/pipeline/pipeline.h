/*
 * pipeline.h - the pipeline layer's contract (SPEC §5, §6): the
 * configuration in force and its recipe catalog, the loop thread that runs
 * stages and recipes (pipe*.c), what runs now, the item events it records,
 * recorded runs, and crash recovery.
 *
 * Layers (docs/design.md): the store (store.h), the formats (format.h),
 * the processes (exec.h) and git (git.h) are below; the namespace (namespace.h) and engine.c are
 * above and call in. The pipeline never calls up: what the layers above
 * must learn (a path the pipeline changed, a document it wrote to the
 * store) reaches them through the hooks given to pipeline_open.
 *
 * Threads: one libuv loop thread owns every stage, recipe and batch
 * (pipe_int.h). Any other thread asks it through pipeline_call, which
 * queues a struct pipe_cmd and waits; the loop never waits on another
 * thread, so no cycle can form. The rest of this header may be called
 * from any thread unless its comment says otherwise.
 *
 * Locks, in the order they may be taken (after the namespace's own, and
 * before the store's, which comes last of all):
 *   cfg_lock    - the configuration in force, its JSON and the catalog
 *                 (pipeline_recipes_hold)
 *   active_lock - what runs now (written by the loop thread)
 *   unstored_lock - item states a full disk kept out of the store (written
 *                 by the loop thread; takes no other lock)
 *   q_lock      - the command queue to the loop thread
 *   notify_lock - notices for the "notify" programs (pipe_notify.c; takes
 *                 no other lock)
 *   cenv_lock   - compute-env.md's answers (pipe_cenv.c; takes no other
 *                 lock)
 */
#ifndef PACKETFS_PIPELINE_H
#define PACKETFS_PIPELINE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "plan.h"
#include "plan_scope.h"
#include "exec.h"
#include "format.h"
#include "git.h"
#include "store.h"

/* The longest item name: [a-z0-9][a-z0-9._-]{0,63}. */
#define ITEM_NAME_MAX 64

struct pipeline;

/* What a change the pipeline made did to a path (struct pipeline_hooks). */
enum pipeline_change {
	PIPELINE_MODIFIED, /* the content changed */
	PIPELINE_CREATED,  /* a new file (a log, a document written by the engine) */
	PIPELINE_ARCHIVED, /* an item left the root for .archive/ */
	PIPELINE_TIMES,    /* only its times changed */
};

/* How the pipeline tells the layers above what it did on its own. Both are
 * called from any thread the pipeline runs on (mostly the loop thread) and
 * must not call pipeline_call. doc_written is called with no pipeline lock
 * held: it takes the namespace's files_lock and an open document's lock,
 * which a writer holds while it reads the configuration (cfg_lock).
 * changed is called with no pipeline lock held but cfg_lock, which the
 * loop thread holds around a recipe queue or a state change while it uses
 * the catalog (pipeline_recipes_hold): so changed takes no pipeline lock,
 * nor waits for a thread that may. Both asserted (pipeline.c). */
struct pipeline_hooks {
	/* item (NULL: a root path) and its relative path rel changed. */
	void (*changed)(void *arg, const char *item, const char *rel, enum pipeline_change what);
	/* The pipeline wrote document rel of item item_id straight to the store:
	 * an open copy of it must take the new content (called before changed). */
	void (*doc_written)(void *arg, int64_t item_id, const char *rel);
	void *arg;
};

struct pipeline_options {
	struct store *store;    /* open; borrowed, outlives the pipeline */
	const char *store_dir;  /* its directory, absolute; borrowed likewise */
	const char *mountpoint; /* NULL offline; borrowed likewise */
	int readonly;           /* no writes, no loop, no events */
	struct pipeline_hooks hooks; /* fixed for the pipeline's life; changed may be NULL */
};

/*
 * Opens the pipeline over an open store: reads and parses the
 * configuration the store holds (meta "pipeline") and loads its recipe
 * catalog. The loop does not run yet (pipeline_start). 0 and *out, or
 * -EINVAL (no or a bad configuration; err says why), -ENOMEM. The thread
 * that opens it closes it.
 */
int pipeline_open(const struct pipeline_options *opt, struct pipeline **out, char *err,
		  size_t errlen);
/*
 * Crash recovery before the loop starts (SPEC §5): runs left running by a
 * dead daemon become interrupted, their items failed; Slurm jobs still
 * running in the cluster are left to be followed again by the loop
 * (pipe_reattach). 0 or a negative errno of the store. Not readonly.
 */
int pipeline_recover(struct pipeline *pl);
/*
 * Starts the loop thread: it follows the Slurm jobs of a dead daemon
 * again, resumes queued items and then serves pipeline_call. 0, -EINVAL
 * (readonly, or started already), or a negative errno (libuv, pthread).
 */
int pipeline_start(struct pipeline *pl);
/*
 * Stops the loop (running processes are cancelled and their runs become
 * interrupted, Slurm jobs go on in the cluster) and frees everything. NULL
 * is fine. The thread that opened it; no pipeline_call may be pending.
 */
void pipeline_close(struct pipeline *pl);

/* ---- the configuration ---- */

/* The configuration in force. Configurations are swapped, never changed,
 * and every one stays valid until pipeline_close: no release needed. */
struct pfs_config *pipeline_config_get(struct pipeline *pl);
/*
 * The configuration item it runs under (SPEC §5 "Routes and templates"):
 * the path of the template in effect (it->template), or the configuration
 * in force when the item has none or its template is no longer in it. The
 * pointer stays valid as long as the pipeline is open. Any thread.
 */
struct pfs_config *pipeline_config_item(struct pipeline *pl, const struct item *it);
/* Appends the configuration's JSON, as it was written, to out (with a
 * final newline). 0 or -ENOMEM. */
int pipeline_config_json(struct pipeline *pl, struct buf *out);
/*
 * Replaces the configuration with json (len bytes): parsed, then checked
 * against the world (pipeline_config_check), stored, and put in force; a
 * "config_changed" or "config_rejected" event says which. 0, -EINVAL
 * (err says why; the old one stays), -EROFS, -ENOMEM, -ENOSPC/-EIO.
 */
int pipeline_config_set(struct pipeline *pl, const char *json, size_t len, char *err,
			size_t errlen);
/* What config_parse cannot see: the run_as user exists and this process
 * may run programs as it (it is root, or that user), the repository and
 * base exist, the recipes directory exists, every stage program and
 * notifier can be run. 0 or -EINVAL with why in err. */
int pipeline_config_check(const struct pfs_config *cfg, char *err, size_t errlen);
/*
 * The recipe catalog of the configuration in force, read again first when
 * recipes_dir changed (recipe_catalog_fresh), so that it follows the
 * directory without a remount (on a failed load it is empty; on -ENOMEM the
 * old one stays). Takes cfg_lock: the catalog and the pointers into it are
 * valid until pipeline_recipes_release, which must follow on the same
 * thread. Blocks while it reads the directory.
 */
const struct recipe_catalog *pipeline_recipes_hold(struct pipeline *pl);
void pipeline_recipes_release(struct pipeline *pl);

/* ---- compute-env.md (pipe_cenv.c) ---- */

/* Appends compute-env.md as things are now: the last refresh's answers,
 * or the one that runs with "pending" where its answers are not in, or,
 * before any, the probes of the configuration, all pending. Never waits
 * for a probe. 0 or -ENOMEM. */
int pipeline_cenv_render(struct pipeline *pl, struct buf *out);
/* Asks the loop for a refresh of compute-env.md (it runs on a worker
 * thread; one at a time, a request while one runs makes another follow).
 * Before pipeline_start the request waits for it. */
void pipeline_cenv_refresh(struct pipeline *pl);

/* ---- events ---- */

/* Appends an event {"ts":..., "item":..., "type":type, ...extra} to the
 * store's events (SPEC §7), where extra_json is NULL, "" or ,"key":value
 * pairs, and tells the hooks which files show it. item NULL: a root event.
 * Nothing when readonly or when the store refuses. */
void pipeline_event(struct pipeline *pl, int64_t item_id, const char *item, const char *type,
		    const char *extra_json);
/* Stores line (checked, normalised, no newline) as an external line of the
 * item's registry together with its registry_external event, in one
 * transaction (store_registry_append_event), then tells the hooks as
 * pipeline_event does. 0 or the store's negative errno (nothing stored).
 * Any thread. */
int pipeline_registry_external(struct pipeline *pl, int64_t item_id, const char *item,
			       const char *line);

/* ---- what runs now ---- */

/* The name of the active run (a stage or a recipe, of any item) whose
 * leader process is pid or an ancestor of pid, the nearest one (pipe_who.c's
 * ancestry walk), else whose process group holds pid, into out (or "" for
 * none). Any thread; reads /proc. */
void pipeline_active_stage_of(struct pipeline *pl, pid_t pid, char *out, size_t size);
/*
 * The stage run of item item_id that asked for a recorded run (SPEC §6 "The
 * recorder"), into stage (size bytes; "" for none) and how that was
 * established into via ("credential": credential names an active stage run
 * of the item; "ancestry": pid descends from an active stage run's leader
 * of the item; "both": the credential names the run the ancestry finds;
 * "none"). A credential (NULL or "": none given) names the stage whatever
 * the ancestry says; without one, the ancestry does. 0; -EACCES when a
 * credential is given but is no active stage run's of the item (stage ""
 * then, nothing to record); -ENOMEM. Any thread; reads /proc.
 */
int pipeline_record_stage(struct pipeline *pl, int64_t item_id, pid_t pid, const char *credential,
			  char *stage, size_t size, char *via, size_t vsize);
/* GPUs held by the item's active runs as "0,1" into out (or ""). */
void pipeline_active_gpus(struct pipeline *pl, int64_t item_id, char *out, size_t size);
/* What runs for the item now, with elapsed seconds: "validate (42 s),
 * 01-build (12 s)" into out, or "". */
void pipeline_active_running(struct pipeline *pl, int64_t item_id, char *out, size_t size);
/* The state of the item that the store did not take yet (a full disk: the
 * engine writes it again every second until it is stored): its state,
 * stage and last_error into *state and the buffers (each truncated to its
 * size), and 1; 0 when the store holds the item's state. Status shows this
 * state. Any thread. */
int pipeline_unstored_state(struct pipeline *pl, int64_t item_id, enum item_state *state,
			    char *stage, size_t stage_size, char *last_error, size_t error_size);
/* Whether the item state machine lets an item go from state from to state
 * to (pipe_state.c holds the table, with the events): 1 or 0 (0 too for a
 * value out of range). Any thread. */
int pipe_state_allowed(enum item_state from, enum item_state to);
/* The item's last ctl result that the store did not take (a full disk)
 * into buf (truncated to size), and 1; 0 when the store holds the last
 * result. Reading ctl shows this one. Any thread. */
int pipeline_unstored_result(struct pipeline *pl, int64_t item_id, char *buf, size_t size);
/* Whether the item has an active stage or recipe. */
int pipeline_active_item(struct pipeline *pl, int64_t item_id);

/* ---- the loop thread ---- */

/* A request to the loop thread (pipeline_call). */
struct pipe_cmd {
	char item[ITEM_NAME_MAX + 1];
	char verb[16];
	char arg[128];
	char line[80];         /* the ctl line as written, shortened; "" when none */
	int refused;           /* set by the sender: the line was refused before it came
				  here; the loop only records it as ctl's result (-EINVAL) */
	char refusal[256];     /* why it was refused (refused only) */
	int result;            /* 0 or negative errno, set by the loop */
	char msg[256];         /* why, for last_result / errors */
	const void *payload;   /* record: the struct record_req; NULL otherwise */
	int64_t run_id;        /* record: the run (set by the loop; record-cancel: given);
				  item-made: the item's id */
	int run_no;            /* record: its run number, set by the loop */
	char log[256];         /* record: its log's item-relative path, set by the loop */
	int done;              /* protected by q_lock */
	pthread_cond_t cond;
	struct pipe_cmd *next;
};

/*
 * Applies one ctl verb of cmd for cmd->item on the loop thread, or for a
 * refused line only records "LINE: error: WHY"; either way the outcome
 * becomes the item's last_result (ctl's result: this is its only writer).
 * Waits for it: 0 or negative errno, the reason in cmd->msg. -ENOTCONN
 * when the loop is not running (offline), -ESHUTDOWN while it stops. Any
 * thread except the loop thread.
 */
int pipeline_call(struct pipeline *pl, struct pipe_cmd *cmd);

/* A request for a recorded run (SPEC §6 "The recorder"). */
struct record_req {
	const char *recipe;   /* a catalog recipe name, e.g. "01-build" */
	char *const *argv;    /* the command and its arguments, NULL-terminated, argv[0] non-empty */
	int gpus;             /* GPUs to grant, or -1: the recipe's "# gpus" */
	int timeout_s;        /* seconds, or -1: the recipe's "# timeout" (0: none) */
	uid_t uid;            /* who asked (the FUSE request's caller) */
	pid_t pid;
	const char *credential; /* the asker's $PACKET_RUN_CREDENTIAL, or NULL: none given */
};
/*
 * Queues a recorded run of req->argv as a run of recipe req->recipe for item (SPEC §6): the
 * pipeline runs it like a recipe (worktree cwd, own process group, GPUs, timeout, executor,
 * live log). On success 0, *run_id (the runs table id, for pipeline_record_cancel and the
 * store), *run_no (the item's run number) and log (the log's item-relative path,
 * "validation/logs/...-N.log", NUL-terminated into logsize bytes); the run row and its log exist
 * when it returns (status "queued" until it starts). Errors with the reason in why: -ENOENT (no
 * such item), -EINVAL (unknown recipe, empty command, bad gpus/timeout, archived item), -EACCES
 * (req->credential names no active stage run of the item: pipeline_record_stage), -ENOTCONN (offline or stopping), -ENOMEM, -ENOSPC/-EIO (store). Any thread but the loop
 * thread.
 */
int pipeline_record(struct pipeline *pl, const char *item, const struct record_req *req,
		    int64_t *run_id, int *run_no, char *log, size_t logsize, char *why,
		    size_t whysize);
/* Cancels recorded run run_id of item while it is queued or running (SIGTERM to its process
 * group, SIGKILL after the grace period; a queued one ends cancelled without running). 0,
 * -ENOENT (no such run of the item), -EALREADY (it has ended), -ENOTCONN. Any thread but the
 * loop thread. */
int pipeline_record_cancel(struct pipeline *pl, const char *item, int64_t run_id, char *why,
			   size_t whysize);
/* Tells the loop that item item_id was just made with its branch at head (40 hex digits), so
 * that a move of that branch from then on is reported as a "head_moved" from head (SPEC §5),
 * even one made before the loop's watch saw the branch appear. Waits for the loop; does nothing
 * offline or while the pipeline stops. Any thread but the loop thread. */
void pipeline_item_made(struct pipeline *pl, int64_t item_id, const char *head);

#endif
