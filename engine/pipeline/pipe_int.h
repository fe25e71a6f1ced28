/*
 * pipe_int.h - what the pipeline's files share: pipeline.c (the layer's
 * handle: open, the loop thread and its command queue, events, the table
 * of what runs now), pipe_config.c (the configuration in force and the
 * catalog), pipe_state.c (the item state machine), pipe.c (jobs, the
 * start of a stage, lifecycle), pipe_stage.c (the end of a stage and what it means),
 * pipe_command.c (the ctl commands), pipe_gate.c (gates, verdict and
 * assessment heads), pipe_push.c (git push), pipe_round.c (rounds after
 * publish), pipe_recipe.c (one recipe run), pipe_queue.c (the recipe queue
 * and needs), pipe_batch.c (batches, the end of a validation),
 * pipe_record.c (recorded runs), pipe_recover.c (crash recovery),
 * pipe_full.c (states a full disk kept out of the store),
 * pipe_heads.c (branch heads moved outside the engine), pipe_env.c (the
 * environment of a run), pipe_notify.c (the "notify" programs),
 * pipe_slurm.c (the Slurm executor), pipe_cenv.c (compute-env.md), pipe_end.c (a recipe
 * run's start and end, one transaction each). Not for the layers above: pipeline.h
 * is the contract.
 *
 * Everything about struct pipe runs on the loop thread only; struct
 * pipeline's fields say their locks (order in pipeline.h). The functions
 * for the loop thread assert it (ASSERT_LOOP_THREAD): while the loop
 * thread runs, no other thread may call them; before it starts (crash
 * recovery, a pipeline never started) and after it ends (pipeline_close)
 * the thread that holds the pipeline may.
 */
#ifndef PACKETFS_PIPE_INT_H
#define PACKETFS_PIPE_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pipeline.h"

/* assert()s that the caller may touch the loop's state (util_owner_here),
 * or that it is not the loop thread (a call that waits for the loop). */
#define ASSERT_LOOP_THREAD(pl) assert(util_owner_here(&(pl)->loop_owner))
#define ASSERT_NOT_LOOP_THREAD(pl) assert(!util_owner_is_self(&(pl)->loop_owner))

#define ACTIVE_MAX 256
/* The random bytes of a stage run's credential ($PACKET_RUN_CREDENTIAL,
 * twice as many hex digits). */
#define CREDENTIAL_BYTES 16

/* One process running for an item (a stage program or a recipe). */
struct active_run {
	int64_t item_id;
	int64_t run_id;
	pid_t pid;        /* its leader, the process the runner started (its process group's
			   * id too); 0 until it runs */
	unsigned long long start_ticks; /* the leader's start time (/proc/PID/stat field 22),
					 * 0 when unknown */
	char kind;        /* 's' stage, 'r' recipe */
	char name[64];    /* stage or recipe name */
	char credential[2 * CREDENTIAL_BYTES + 1]; /* stages: $PACKET_RUN_CREDENTIAL, hex */
	int gpus[16];
	int ngpus;
	int64_t start_ns; /* when it started, ns since the Unix epoch */
};

struct pipe;
struct notice;

/* Where the notifiers stand (pipe_notify.c). */
enum notify_phase {
	NOTIFY_WAITING, /* the loop has not started: notices wait for it */
	NOTIFY_RUNNING, /* notices wake the loop */
	NOTIFY_STOPPED, /* the loop stops: events run nothing */
};

/* The layer's handle (pipeline.h). */
struct pipeline {
	struct store *store;    /* borrowed (struct pipeline_options) */
	const char *store_dir;
	const char *mountpoint; /* NULL offline */
	int readonly;
	struct pipeline_hooks hooks; /* constant */

	pthread_mutex_t cfg_lock;
	struct pfs_config *cfg;         /* protected by cfg_lock */
	struct pfs_config **old_cfgs;   /* replaced ones, kept until close; cfg_lock */
	size_t nold_cfgs;               /* protected by cfg_lock */
	char *cfg_json;                 /* protected by cfg_lock */
	struct recipe_catalog recipes;  /* protected by cfg_lock */

	pthread_mutex_t active_lock;
	struct active_run active[ACTIVE_MAX]; /* protected by active_lock */
	int nactive;                          /* protected by active_lock */

	pthread_mutex_t unstored_lock;
	struct unstored *unstored; /* protected by unstored_lock: states the store did not
				    * take (pipe_full.c), written by the loop thread */
	struct kept_result *results; /* protected by unstored_lock: ctl results the store did
				      * not take (pipe_full.c), written by the loop thread */

	pthread_mutex_t q_lock;
	struct pipe_cmd *q_head, *q_tail;    /* protected by q_lock */
	int stopping;                        /* protected by q_lock */

	pthread_mutex_t notify_lock;
	struct notice *notify_head;   /* protected by notify_lock: notices to start, FIFO */
	struct notice **notify_tail;  /* protected by notify_lock */
	size_t notify_queued;         /* protected by notify_lock: on notify_head */
	enum notify_phase notify_phase; /* protected by notify_lock */
	struct notice *notify_live;   /* loop thread only: notifiers running */
	int notify_running;           /* loop thread only: how many */
	int notify_stopping;          /* loop thread only: pipe__notify_stop ran */

	pthread_mutex_t cenv_lock;      /* compute-env.md (pipe_cenv.c); takes no other lock */
	struct cenv cenv_cur;           /* cenv_lock: the refresh that runs, filled by its worker */
	struct cenv cenv_last;          /* cenv_lock: the last refresh that ended */
	const struct pfs_config *cenv_last_cfg; /* cenv_lock: the configuration cenv_last
						 * probed (its probes), or NULL */
	const struct pfs_config *cenv_run_cfg;  /* cenv_lock: the one cenv_cur probes */
	int cenv_wanted;                /* cenv_lock: a refresh was asked for */
	int cenv_running;               /* cenv_lock: cenv_work is queued or runs */
	int cenv_news;                  /* cenv_lock: the worker has answers the loop did not
					 * act on yet */
	int cenv_stop;                  /* set under cenv_lock, read atomically too: the loop
					 * stops; no further probe, no wake */
	uv_work_t cenv_work;            /* loop thread */

	uv_loop_t loop;        /* loop thread only */
	uv_async_t wake;
	pthread_t thread;
	struct util_owner loop_owner; /* the loop thread, while it runs (loop_main) */
	int started;           /* set before the thread starts, cleared after it ends */
	struct pipe *pipe;     /* loop thread only */
};

/* ---- pipeline.c ---- */

/* Tells the hooks that item's rel (item NULL: a root path) changed. */
void pipe__changed(struct pipeline *pl, const char *item, const char *rel,
		   enum pipeline_change what);
/* Appends to b the text of an event line (pipeline_event's format). */
void pipe__event_text(struct buf *b, const char *item, const char *type, const char *extra_json);
/* Tells the hooks what an event of type added for item (NULL: none)
 * changed: events, the item's events and status. */
void pipe__event_added(struct pipeline *pl, const char *item, const char *type);
/* What pipeline_event does after the store took its event, for an event
 * line (pipe__event_text's) stored with other rows in one transaction
 * (pipe_end.c): the daemon's log, the hooks (pipe__event_added), the
 * notify programs. Loop thread. */
void pipe__event_stored(struct pipeline *pl, int64_t item_id, const char *item, const char *type,
			const char *extra_json, const char *line);
/* Tells the hooks that document rel of item item_id was written to the
 * store by the pipeline (created: it is new), then that it changed. */
void pipe__doc_written(struct pipeline *pl, int64_t item_id, const char *item, const char *rel,
		       int created);
/* Adds r to / removes run run_id from the table of what runs now (loop thread). */
void pipe__active_add(struct pipeline *pl, const struct active_run *r);
/* The leader of active run run_id started: pid and start_ticks into its
 * entry. Any thread. */
void pipe__active_set_leader(struct pipeline *pl, int64_t run_id, pid_t pid,
			     unsigned long long start_ticks);
void pipe__active_remove(struct pipeline *pl, int64_t run_id);

/* ---- pipe_cenv.c: compute-env.md ---- */

/* Starts a refresh of compute-env.md when one was asked for and none runs
 * (loop thread; on_wake and the start of the loop). */
void pipe__cenv_wake(struct pipeline *pl);
/* The loop stops: a refresh that runs starts no further probe. */
void pipe__cenv_stop(struct pipeline *pl);
/*
 * The "# requires:" check of a recipe of configuration cfg about to start
 * (req: its probes, NULL-terminated). 0 when every probe answered; 1 when
 * an answer of cfg's probes is not in yet (the recipe waits: the end of
 * the refresh pumps the queue); -1 when it must be blocked, with note
 * "requires NAME: absent", "requires NAME: absent (timed out)" or
 * "requires NAME: not a probe of pipeline.json". Loop thread.
 */
int pipe__cenv_requires(struct pipeline *pl, const struct pfs_config *cfg, char *const *req,
			char *note, size_t size);

/* ---- pipe_who.c: which run a process belongs to ---- */

/* A fresh credential for a stage run: CREDENTIAL_BYTES random bytes as
 * lowercase hex, NUL-terminated, into out (size at least
 * 2 * CREDENTIAL_BYTES + 1). 0 or -errno (getrandom). Loop thread. */
int pipe__credential_new(char *out, size_t size);
/* The start time of process pid (/proc/PID/stat field 22, clock ticks
 * since boot) into *start. 0 or -errno (-ENOENT: no such process). Any
 * thread. */

/* ---- pipe_notify.c: the "notify" programs ---- */

/* Matches the item event line (a JSON object) just stored for item_id
 * against the "notify" entries of the configuration in force and queues
 * a notice for each match, waking the loop. Any thread, with any pipeline
 * lock or none held but the store's; reads the item row on a match. */
void pipe__notify(struct pipeline *pl, int64_t item_id, const char *line);
/* Starts queued notices while fewer than the limit run (loop thread). */
void pipe__notify_pump(struct pipeline *pl);
/* Drops queued notices, cancels running notifiers, and makes later events
 * run nothing (the loop stops; loop thread). */
void pipe__notify_stop(struct pipeline *pl);
/* Frees notices still queued (pipeline_close, after the loop ended). */
void pipe__notify_free(struct pipeline *pl);

/* ---- pipe.c: the loop's state ---- */

int pipe_new(struct pipeline *pl, struct pipe **out);
void pipe_free(struct pipe *p);
/* Resumes queued items; called once when the loop starts. */
void pipe_resume(struct pipe *p);
/* Applies one ctl command (pipeline_call); result as in struct pipe_cmd. */
int pipe_command(struct pipe *p, struct pipe_cmd *cmd);
/* pipe_record.c: applies a "record" or "record-cancel" command
 * (pipeline_record, pipeline_record_cancel); result as in struct pipe_cmd. */
int pipe_record_command(struct pipe *p, struct pipe_cmd *cmd);
/* Cancels everything (daemon shutdown): runs become interrupted, except
 * Slurm jobs, which go on in the cluster and are followed again by the
 * next daemon (pipe_reattach). */
void pipe_shutdown(struct pipe *p);

/* ---- pipe_heads.c ---- */

/* Starts watching the item branches' refs in the configured repository:
 * from now on a head moved outside the engine (a hand commit, a push) is
 * reported like the engine's own moves, with a "head_moved" event. Best
 * effort: without inotify or a readable git directory nothing is watched
 * and status still shows the head on disk. Once, when the loop starts. */
void pipe__heads_start(struct pipe *p);
/* Stops watching (daemon shutdown); the handles close on the loop. */
void pipe__heads_stop(struct pipe *p);
/* Item id was made with its branch at head (pipeline_item_made): that is the
 * head seen last of it, whatever a scan saw before the item was stored.
 * 0, or -ENOMEM. */
int pipe__heads_made(struct pipe *p, int64_t id, const char *head);

/* ---- pipe_recover.c, pipe_slurm.c: across daemon restarts ---- */

/* pipeline_recover: runs for which pipe_run_reattaches() holds, and the
 * running stage runs and state of their items, are left for pipe_reattach. */
int pipe_recover(struct pipeline *pl);
/* The longest name of a ref pipe__rewind keeps a run's head under, NUL included. */
#define REWIND_REF_MAX 160
/*
 * The end of stage run r of item it, cut off by a daemon that died or
 * stopped: when the item's branch is no longer at r->head (where the run
 * started), the head it left is kept under the ref
 * refs/packetfs/interrupted/<item>/<run_no>, whose name goes into ref
 * (size bytes, REWIND_REF_MAX is enough), and the branch and the item's
 * worktree go back to r->head (repo_rewind: uncommitted changes to tracked
 * files are dropped, untracked and ignored files stay; with run_as, what
 * git rewrote is given back to that user). r's log gets a
 * note naming both (before it is sealed: the caller seals it) and the item
 * a "rewound" event (stage, run, from, to, ref). Returns 1 when it moved
 * the branch (a worktree it could not reset is said in the log, with a
 * negative errno returned and ref set), 0 when there was nothing to do (a
 * recipe run, no recorded head, a branch that did not move; ref ""), or a
 * negative errno with ref "" and the reason in the log and the daemon's
 * log. Blocks on git; recovery, or the loop thread while the daemon stops.
 */
int pipe__rewind(struct pipeline *pl, const struct item *it, const struct run *r, char *ref,
		 size_t size);
/* The last_error of an item whose interrupted stage run was rewound, its
 * commits kept under ref: malloc'd (NULL when out of memory). */
char *pipe__rewound_why(const char *ref);
/* Whether run r is a Slurm job still running (by the store) with a job id
 * and an output file, and no run of a measured batch (its log's header,
 * read from s, names no side): one that a restarted daemon follows again
 * instead of recording it interrupted. Any thread. */
int pipe_run_reattaches(struct store *s, const struct run *r);
/* The side of measured run run_id, as its log's header names it ("# side:
 * base" or "# side: head", pipe_recipe.c): "base", "head", or NULL for a
 * run of no measured batch. Any thread. */
const char *pipe__log_side(struct store *s, int64_t run_id);
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

struct batch;

struct job {
	struct pipe *p;
	int64_t item_id;
	char item[ITEM_NAME_MAX + 1];
	struct run run;         /* the run row */
	struct runner_proc *proc;
	struct slurm_job *sjob; /* recipes of the slurm executor: the job it follows */
	char *exec_note;        /* slurm: a line for the log's end (pipe_slurm.c) */
	int out_midline;        /* slurm: the job's output so far ends mid-line */
	int is_stage;
	int stage_index;        /* in cfg */
	struct pfs_config *cfg; /* stages: the configuration it started under */
	struct recipe recipe;   /* recipes: a copy (strings and lists owned) */
	int gpus[16];
	int ngpus;
	struct batch *batch;    /* recipes of a validate stage or a rerun */
	char *junit_path;       /* recipes: $PACKET_JUNIT (pipe__junit_open); NULL: none */
	char *why;              /* stages: the reason a failure gives in last_error instead
				 * of the exit status (owned; NULL: none) */
	char **argv;            /* recorded runs: the command (owned); NULL: the recipe's file */
	uid_t by_uid;           /* recorded runs: who asked (recorded_by) */
	pid_t by_pid;
	char by_stage[64];      /* ... the stage run that asked, or "" (pipe_who.c) */
	char by_via[16];        /* ... and how it was established: "ancestry", "credential",
				 * "both" or "none" */
	char credential[2 * CREDENTIAL_BYTES + 1]; /* stages: $PACKET_RUN_CREDENTIAL, hex */
	int round_exit;         /* a round going on after its program (pipe_round.c): its
				 * exit status, 0 settled or 75 not settled */
	double round_prog_s;    /* ... the seconds its program ran */
	uint64_t round_exit_ms; /* ... and uv_now when it exited */
	int start_later;        /* recipes: pipe__job_spawn leaves the process group for
				 * pipe__recipe_started to write (pipe_end.c) */
	struct buf start_head;  /* ... and the log's header it writes with it */
	uint64_t log_lost;      /* bytes of output its log could not store (a full disk) */
	int log_errno;          /* ... and why (the last such error, positive) */
	struct measure_state *ms; /* a measured recipe's batch of runs (pipe_measure.c):
				   * its job holds the GPUs and records the verdict */
	struct job *measure_parent; /* one run of that batch: the job that holds it */
	int side;               /* ... 0 at the base, 1 at the head */
	int warm;               /* ... 1 for a warmup run (discarded) */
	char *metrics_json;     /* ... the metrics it reported (registry "metrics") */
	struct job *next;
};

/* The recipes of one validate stage (or one rerun) of an item. */
struct batch {
	int64_t item_id;
	char item[ITEM_NAME_MAX + 1];
	int pending;            /* queued or running recipes */
	int measure_git;        /* measured batches whose checkouts are being made or
				 * removed on the thread pool (pipe_measure.c) */
	int cancelled;
	int rerun;              /* a `rerun RECIPE`: no stage run */
	int record;             /* a recorded run (pipe_record.c): no stage run, no state */
	int round;              /* the recipes at a round's new head: stage_job is the
				 * round's job (pipe_round.c) */
	char **names;           /* the recipes queued in it (their default needs) */
	enum item_state prev_state; /* rerun: state to return to */
	char *prev_error;       /* rerun: last_error to return to */
	struct job *stage_job;  /* validate: the stage's own run (log), not running */
	struct batch *next;
};

struct pipe {
	struct pipeline *pl;
	struct gpu_pool *gpus;
	struct job *jobs;       /* running processes */
	struct job *queue;      /* recipes waiting to start, FIFO */
	struct batch *batches;
	int running_recipes;
	int junit_spares;          /* empty JUnit directories kept for reuse (pipe_junit.c) */
	int shutting_down;
	struct slurm_poller *slurm; /* follows the Slurm jobs (pipe_slurm.c); NULL until the
				     * first, and after shutdown */
	struct job *measure_waiting; /* measured batches waiting for their leaking GPUs to
				      * be clean (pipe_measure.c), linked by next */
	uv_timer_t gpu_timer;   /* rechecks held-back GPUs (pipe_recipe.c) */
	int gpu_timer_init;     /* gpu_timer is initialised and not closed */
	struct round_timer *round_timers; /* items waiting between rounds (pipe_round.c) */
	struct unsealed *unsealed; /* run ends and registry lines the store did not take
				    * (pipe_full.c) */
	uv_timer_t unstored_timer; /* writes them and the kept states again (pipe_full.c) */
	int unstored_timer_init;   /* unstored_timer is initialised and not closed */
	struct pipe_heads *heads;  /* watches the item branches' refs (pipe_heads.c); NULL
				    * before the loop starts and after shutdown */
};

/* ---- pipe_state.c ---- */

/* The one way the pipeline changes an item's state: it->state becomes to
 * when the state machine (pipe_state.c) allows the move from it->state,
 * and 0 is returned; otherwise the move is logged, it stays as it was and
 * -EINVAL is returned (an assertion fails first in a build with them).
 * Changes it only, not the store. Loop thread. */
int pipe__state_move(struct item *it, enum item_state to);

/* ---- pipe.c ---- */

/* Replaces *field with a copy of value (kept as it was on ENOMEM). */
void pipe__item_set(char **field, const char *value);
/* Records an event of type for item it; fmt (may be NULL) formats the
 * extra JSON members, each starting with a comma. */
void pipe__event(struct pipe *p, const struct item *it, const char *type, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Sets state and last_error (NULL keeps it, and so does "" a warning),
 * writes the item and records an event. */
void pipe__set_state(struct pipe *p, struct item *it, enum item_state state, const char *error);
/* The same, but a state the store does not take is not kept: returns 0,
 * -EINVAL (the state machine refuses the move: pipe__state_move) or the
 * store's negative errno (the row and its events as they were). */
int pipe__state_write(struct pipe *p, struct item *it, enum item_state state, const char *error);
/* Writes the item row (store_item_update) and tells watchers that its
 * status changed. 0 or a negative errno (-ENOSPC: the disk is full; the
 * row is as it was). */
int pipe__item_write(struct pipe *p, struct item *it);
/* Tells the hooks that the item row of it was written (status, the dated
 * directories). */
void pipe__item_written(struct pipe *p, const struct item *it);
/* A JSON string literal for s (malloc'd; NULL when out of memory). */
char *pipe__json_string(const char *s);
/* Appends len bytes to the log of job j's run and tells watchers. */
void pipe__log_append(struct pipe *p, struct job *j, const void *data, size_t len);
/* "the disk was full: N bytes of its output were not stored (why)" into
 * out when j's log lost output (pipe__log_append); 0 when it lost none. */
int pipe__log_lost(const struct job *j, char *out, size_t size);
/* The size of a log line's buffer: pipe__log_line writes at most
 * PIPE_LINE_SIZE - 1 bytes of a line. */
#define PIPE_LINE_SIZE 2048
/* Formats fmt with ap into line (PIPE_LINE_SIZE bytes) as pipe__log_line
 * writes it, cut at PIPE_LINE_SIZE - 1 bytes: its length, 0 when
 * vsnprintf fails. */
size_t pipe__line_vformat(char *line, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Appends a formatted line (at most 2 KiB) to the log of job j's run. */
void pipe__log_line(struct pipe *p, struct job *j, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* pipe_env.c: the environment of a stage or (recipe != NULL) recipe process (SPEC
 * §5): the daemon's, the stage's own "env" over it (stages only), then
 * the PACKET_* variables (PACKET_ROUND for a rounds stage: it->round),
 * and for a recipe RECIPE_NAME and the GPUs. A new strv (strv_free it;
 * NULL when out of memory). */
char **pipe__make_env(struct pipe *p, const struct item *it, const char *stage, const char *recipe,
		      const char *cuda);
/* Adds id to the set set[0..*n) of at most max ids unless it is there: 1
 * when it is there now, 0 when the set was full. */
int pipe__id_add(int64_t *set, int *n, int max, int64_t id);
/* Whether id is in the set set[0..n). */
int pipe__id_has(const int64_t *set, int n, int64_t id);
/* Frees a job that is on no list (NULL is fine). */
void pipe__job_free(struct job *j);
/* Starts t (data p) repeating every ms milliseconds with cb unless it runs
 * already, initialising it on p's loop first unless *init says it was (then
 * sets *init; a failed init leaves it stopped). Loop thread only. */
void pipe__timer_repeat(struct pipe *p, uv_timer_t *t, int *init, uv_timer_cb cb, uint64_t ms);
/* Creates the run row of a new job j (run number, log path, status; kind
 * "stage" or "recipe", name) in one transaction with, when write is not
 * NULL, the item written as it is now and a stage_started event (a stage's
 * start: pipe__start_stage). 0 or a negative errno. Loop thread. */
int pipe__job_begin(struct pipe *p, struct job *j, const struct item *it, struct item *write,
		    const char *kind, const char *name, enum run_status status);
/* Creates the run row of a new job with the given kind ("stage",
 * "recipe"), name and status. 0 or a negative errno. */
int pipe__job_open_run(struct pipe *p, struct job *j, const struct item *it, const char *kind,
		       const char *name, enum run_status status);
/* Spawns argv for job j (its run row exists), registers it as active and
 * puts it on p->jobs. The runner calls out_cb and exit_cb with arg; with
 * exit_cb NULL, the stage's or recipe's own (log, record, free j). An
 * exit_cb of the caller's must do what that one does first: take j off
 * p->jobs, pipe__active_remove its run, clear j->proc. 0 or a negative
 * errno (then j is on no list). */
int pipe__job_spawn(struct pipe *p, struct job *j, char *const *argv, char **env, const char *cwd,
		    unsigned timeout_s, runner_output_cb out_cb, runner_exit_cb exit_cb, void *arg);
/* Takes j off list (p->jobs, p->queue). */
void pipe__job_unlink(struct job **list, struct job *j);
/* Something of an item ended, so a slot may have opened for a queued item
 * (max_parallel_items): resumes queued items. */
void pipe__slot_freed(struct pipe *p);
/* Seals a run: finish time, duration (s), log sha256; writes the row. */
void pipe__run_seal(struct pipe *p, struct run *r, double duration_s);
/* Runs the stage program st for job j; on failure ends the stage and frees j. */
void pipe__spawn_stage(struct pipe *p, struct job *j, const struct pfs_stage *st,
		       const struct item *it);
/* A stage ended (res may be NULL): records it and moves the item on.
 * Does not free j. */
void pipe__stage_done(struct pipe *p, struct job *j, const struct runner_result *res);

/* Whether the item has a process (a push too), a queued recipe or a batch. */
int pipe__item_busy(struct pipe *p, int64_t id);
/*
 * Starts stage i of the configuration in force for item it (checking
 * gates when check_gates). Returns 0 when the stage started (or the item
 * now waits or is blocked at a gate: the outcome is in the item), -EBUSY
 * when the parallel-items limit queues it, or another negative errno
 * (-ENOSPC: the store's disk is full), with which nothing of the start is
 * stored and *it is as it was: the run, the item running the stage and
 * its events are written in one transaction (store_run_begin).
 */
int pipe__start_stage(struct pipe *p, struct item *it, size_t i, int check_gates);
/* pipe__start_stage(p, it, i, 1) where no ctl write waits for the outcome
 * (an advance after a stage, a loop back, a round, a resume): a stage that
 * cannot start (a full disk: its start was not stored) leaves the item
 * failed, saying why, instead of as it was. */
void pipe__start_stage_auto(struct pipe *p, struct item *it, size_t i);

/* ---- pipe_stage.c ---- */
/* Whether st changes code: "print", or any stage a review loops back to. */
int pipe__is_print_stage(const struct pfs_config *cfg, const struct pfs_stage *st);
/*
 * pipe_route.c. After the item's first stage (plan, called stage) ended
 * well: reads plan.md's header lines (none when there is no plan.md) into
 * it->route, it->engine and it->review_request, and the template they
 * choose (config_choose) into it->template, recording a "template" event;
 * it is not written. Returns 0, or a negative errno with "STAGE: why" in
 * why: -EINVAL for a malformed header line or a Template that names no
 * template (it->template is left as it was).
 */
int pipe__route(struct pipe *p, struct item *it, const char *stage, char *why, size_t size);
/* Withdraws an approve the item holds (the caller writes the item): a
 * print started or ended (stage is its name), or the gated stage it let
 * through succeeded. Recorded as an "approve_dropped" event. */
void pipe__drop_approve(struct pipe *p, struct item *it, const char *stage);

/* After stage `name` succeeded: goes on unless held; marks the item done
 * after the last stage. Positions come from the configuration in force. */
void pipe__stage_advance(struct pipe *p, struct item *it, const char *name);

/* ---- pipe_round.c ---- */
/* A rounds stage st starts for it: continues its series (the item stands
 * at st unsettled) or begins a new one; it->round counts this round. The
 * caller writes the item. Drops the item's round timer. */
void pipe__round_begin(struct pipe *p, struct item *it, const struct pfs_stage *st);
/* Re-arms the round timer of an item waiting between rounds (startup). */
void pipe__round_resume(struct pipe *p, const struct item *it);
/* The program of round job j exited with exit_code after duration_s
 * seconds (no signal, no timeout, not cancelled): returns 1 when the
 * round goes on here (exit 0 or 75: j's run moves to a job of
 * pipe_round.c; the caller still frees j), 0 when pipe__stage_done ends
 * it as any stage. it is the item, read after the exit. */
int pipe__round_exit(struct pipe *p, struct job *j, struct item *it, int exit_code,
		     double duration_s);
/* The recipes of a round's new head ended (batch b, b->round): pushes the
 * head when every named recipe validated, and ends the round. Frees b. */
void pipe__round_validated(struct pipe *p, struct batch *b);
/* Drops the round timer of an item, if any. */
void pipe__round_unschedule(struct pipe *p, int64_t item_id);
/* Closes every round timer (shutdown). */
void pipe__round_shutdown(struct pipe *p);

/* ---- pipe_push.c ---- */

/* Pushes the item branch of publish job j (its run row exists, its head
 * the one the gates judged) to st's remote with `git push` as a process of
 * the stage (on p->jobs while it runs), then runs st's program or ends the
 * stage; a branch that moved since is not pushed. A failed push ends the
 * stage failed, with push_reason's line in last_error. When it cannot
 * start, ends the stage at once and frees j. */
void pipe__start_push(struct pipe *p, struct job *j, const struct item *it,
		      const struct pfs_stage *st);
/* The end of a pipe__push_head: rc 0 when the remote took the commit,
 * else a negative errno and why, the reason (push_reason's line when git
 * ran). j is the caller's again. */
typedef void (*pipe_push_done_cb)(struct pipe *p, struct job *j, int rc, const char *why);
/* Pushes commit sha (40 hex digits) to refs/heads/branch on remote with
 * `git push` as a process of job j (its run row open: git's output goes to
 * its log; on p->jobs while it runs, so cancel and shutdown end it), under
 * the timeout of j's stage, then calls done - at once when git cannot
 * start. Not forced: a remote branch with other commits refuses it. */
void pipe__push_head(struct pipe *p, struct job *j, const char *remote, const char *branch,
		     const char *sha, pipe_push_done_cb done);

/* ---- pipe_command.c ---- */

/* The stage index `advance` starts for it into *i, or -EINVAL with why. */
int pipe__next_stage(struct pipe *p, const struct item *it, size_t *i, char *why, size_t size);

/* ---- pipe_gate.c ---- */

/* 0 when stage index i of the configuration in force may start now for
 * item it; otherwise -EAGAIN with the reason in why and *approve_wait set
 * when only the approve gate is missing. */
int pipe__gate_check(struct pipe *p, struct item *it, size_t i, char *why, size_t size,
		     int *approve_wait);
/* The scope gate (SPEC §6 "Scope"): 0 when the change at head (40 hex
 * digits) touches no path the plan's scope block keeps (or there is no
 * block); -EAGAIN with the reason (naming the paths) in why otherwise, or
 * when the block or the change cannot be read. */
int pipe__scope_refused(struct pipe *p, const struct item *it, const char *head, char *why,
			size_t size);
/* Sets the item's verdict (NUL-terminated word, "" for none) as made at
 * commit head (40 hex digits; NULL or "" when unknown: it is then stale at
 * once). The caller writes the item. */
void pipe__set_verdict(struct item *it, const char *verdict, const char *head);
/* The same for the assessment. */
void pipe__set_assessment(struct item *it, const char *assessment, const char *head);
/* The value of the last "## KEY: value" heading of document doc of the
 * item outside fenced code blocks (its first word, recipe_doc_marker), or
 * "" into out. */
void pipe__doc_marker(struct pipe *p, const struct item *it, const char *doc, const char *key,
		      char *out, size_t size);

/* ---- pipe_full.c ---- */

/* Keeps it's state, stage, stage_ok and last_error, which the store did
 * not take (a full disk), and writes them again every second until it
 * takes them; replaces what was kept for the item before. */
void pipe__unstored_keep(struct pipe *p, const struct item *it);
/* Forgets what was kept for the item (a later state was stored). */
void pipe__unstored_drop(struct pipe *p, int64_t item_id);
/* Writes what was kept for the item now. 0 (also when nothing was kept)
 * or the store's negative errno (it stays kept). */
int pipe__unstored_flush(struct pipe *p, int64_t item_id);
/* Keeps the end of run r (status, finish time, duration, exit, note),
 * which the store did not take, and writes it again every second, with
 * the log's sha256 as the store has it then, until the store takes it. */
void pipe__unsealed_keep(struct pipe *p, const struct run *r);
/* Keeps the engine's registry line of run run_id (a copy of line), which
 * the store did not take, and appends it once the run's end is stored and
 * the store takes it. */
void pipe__unsealed_line(struct pipe *p, int64_t item_id, const char *item, int64_t run_id,
			 const char *line);
/* Keeps result as the item's ctl result when the store did not take it
 * (a full disk), so that reading ctl still says why a command failed;
 * NULL forgets it (a later result was stored). Loop thread. */
void pipe__result_keep(struct pipe *p, int64_t item_id, const char *result);
/* Forgets everything kept and closes the timer (shutdown). */
void pipe__unstored_stop(struct pipe *p);

/* ---- pipe_end.c ---- */

/* The start of recipe job j, whose header (head: the log's first bytes) is
 * not in its log yet: when spawned, its process group (j->run, set by
 * pipe__job_spawn with j->start_later), the header and the recipe_started
 * event in one transaction (store_run_start), else one by one; when not
 * spawned, the header and the event, for the failure's footer to follow.
 * Loop thread. */
void pipe__recipe_started(struct pipe *p, struct job *j, const struct buf *head, int spawned);
/* The end of recipe job j, whose status, note, exit and signal are set in
 * j->run and in rr (its registry line; rr->duration_s the run's seconds,
 * rr->finished_at and rr->log_sha256 pointing into j->run): the log's
 * footer (the text footer), the sealed run row, the registry line, the
 * item's updated time, the recipe_finished event and, when j has a batch
 * with a stage run, the line told for that run's log, in one transaction
 * (store_run_end), else one by one, each with its own way back
 * (pipe_full.c). Loop thread. */
void pipe__recipe_seal(struct pipe *p, struct job *j, const char *footer, const char *told,
		       struct registry_run *rr);

/* ---- pipe_recipe.c ---- */

/* Queues a copy of recipe r for item it in batch b (b->pending counts it,
 * b->names gains its name) at the end of the queue; *out (may be NULL) is
 * the job. 0 or -ENOMEM. */
int pipe__queue_recipe(struct pipe *p, const struct item *it, const struct recipe *r,
		       struct batch *b, struct job **out);
/* Records a finished (or never started) recipe run: log footer, run row,
 * registry line, event, batch. Does not free j. */
void pipe__recipe_done(struct pipe *p, struct job *j, enum run_status status, const char *note,
		       const struct runner_result *res);
/* A recipe process exited: releases its GPUs and records it. Does not
 * free j. */
void pipe__recipe_exit(struct pipe *p, struct job *j, const struct runner_result *res);
/* Whether job j's run, which exited 0, is failing after all: its JUnit
 * file says that no test ran or that a test failed, or cannot be read, or
 * (no file) the last test summary in the tail of its log says that no test
 * ran. What the counts say goes into note (after what it holds), also when
 * it returns 0 ("7 tests ran (JUnit XML)"). */
int pipe__no_tests_ran(struct pipe *p, const struct job *j, char *note, size_t size);
/* Starts queued recipe j, off the queue, its GPUs granted: its run, or
 * its record as blocked when the worktree is not its head. */
void pipe__recipe_start(struct pipe *p, struct job *j);

/* ---- pipe_junit.c ---- */

/* Sets j->junit_path, the $PACKET_JUNIT of recipe job j (its run row
 * exists), from its run; with create, first makes its directory afresh
 * (mode 0700, empty; a spare renamed into place when there is one). 0 or
 * a negative errno (then j->junit_path is as it was). */
int pipe__junit_open(struct pipe *p, struct job *j, int create);
/* Removes the directory of j->junit_path with what it holds (a local
 * run's, found empty, is kept as a spare under another name), and clears
 * it (no JUnit file: nothing). Called once the run is recorded. */
void pipe__junit_close(struct job *j);

/* ---- pipe_measure.c ---- */

/* Starts measured recipe j (# measure: base), off the queue, its GPUs
 * granted: the checkouts of its base and head, then its runs one after
 * another; j is recorded and freed when the last ends. */
void pipe__measure_start(struct pipe *p, struct job *j);
/* For run j of a measured batch, after its run row exists: sets its head
 * to its side's commit and cwd (size bytes) to its side's checkout. */
void pipe__measure_place(struct job *j, char *cwd, size_t size);
/* Run j of a measured batch exited with *status: reads the metrics it
 * reported (its log's METRIC lines, then $PACKET_METRICS) into
 * j->metrics_json; a malformed report or none makes a validated run
 * failing, saying why in note. */
void pipe__measure_collect(struct pipe *p, struct job *j, enum run_status *status, char *note,
			   size_t size);
/* Run j of a measured batch is recorded with status (or could not start):
 * keeps its metrics and starts the next run, or ends the batch. */
void pipe__measure_ran(struct pipe *p, struct job *j, enum run_status status);
/* The $PACKET_METRICS of run j, metrics.json in its $PACKET_JUNIT's
 * directory, into out; 0, or -ENOENT when j has no such directory. */
int pipe__measure_metrics_path(const struct job *j, char *out, size_t size);
/* Slurm run j of a measured batch started on node: the first one pins
 * the batch there. */
void pipe__measure_node(struct job *j, const char *node);
/* The node Slurm run j of a measured batch must run on (its --nodelist),
 * or NULL before the batch's first job started. */
const char *pipe__measure_nodelist(const struct job *j);
/* Slurm run j of a measured batch was detached at shutdown: its holder is
 * freed unrecorded (its checkouts stay for the job until the next mount
 * cancels it and records the run interrupted); j no longer has one. */
void pipe__measure_detached(struct job *j);
/* At each recheck of held-back GPUs, and with all at shutdown (all = 1):
 * the measured batches waiting for their GPUs to be clean go on when they
 * are, when their validation was cancelled, or when the daemon stops (all
 * are then ended). Returns how many went on. */
int pipe__measure_gpu_recheck(struct pipe *p, int all);
/* Frees what a job's measure state holds (pipe__job_free). */
void pipe__measure_free(struct measure_state *ms);

/* ---- pipe_queue.c ---- */

/* Starts what the queue allows: recipes whose needs are met start in
 * FIFO order; the first of them waits for its GPUs and nothing overtakes
 * it (see pipe_recipe.c). */
void pipe__pump(struct pipe *p);
/* Closes the timer that rechecks held-back GPUs (pipe_shutdown, loop
 * thread), so that the loop can end. */
void pipe__gpu_stop(struct pipe *p);
/* Orders the recipe names of a batch (a strv, in place) so that each comes
 * after the recipes of the batch it needs: numbered order, except that a
 * recipe whose "# needs:" names a higher-numbered one of the batch comes
 * after it; the recipes of a needs cycle stay in numbered order (one of
 * them is then blocked: its need has not run). cat is held (pipeline_recipes_hold). */
void pipe__order_names(const struct recipe_catalog *cat, char **names);
/* ---- pipe_batch.c ---- */

/* Starts the validate stage of it, whose run is sj: queues the plan's
 * recipes in a new batch, which owns sj from here. */
void pipe__start_validation(struct pipe *p, struct item *it, struct job *sj);
/* Puts batch b (item and stage_job set: the job whose log names what is
 * queued or skipped) on p->batches, queues the plan's script recipes in
 * it in needs order and steps it: an empty batch ends at once. */
void pipe__batch_run_plan(struct pipe *p, struct item *it, struct batch *b);
/* Recomputes the item's verdict from the registry at the branch head (and
 * change-validation.md when the validate stage has no program), as after
 * a rerun. The caller writes the item. */
void pipe__verdict_update(struct pipe *p, struct item *it);
/* Records job j (a recipe or recorded run that never started: its run row
 * may exist) as ended with status and note, with a log saying so; frees
 * nothing. */
void pipe__recipe_not_run(struct pipe *p, struct job *j, enum run_status status,
			  const char *note);
/* Takes b off p->batches and frees it (not its stage job). */
void pipe__batch_free(struct pipe *p, struct batch *b);
/* Called whenever a batch's pending count drops: pumps, and finishes the
 * validation at zero. */
void pipe__batch_step(struct pipe *p, struct batch *b);
/* Ends batch b (freed): a rerun returns the item to its state; a
 * validation hands its stage job to the validator program, or ends the
 * stage and frees the job. */
void pipe__validation_finish(struct pipe *p, struct batch *b);

/* ---- pipe_slurm.c ---- */

/* Submits recipe job j (its run row and log header exist, it counts in
 * running_recipes) as a Slurm batch job running argv with environment env;
 * on failure records it and frees j. */
void pipe__slurm_start(struct pipe *p, struct job *j, const struct item *it,
		       char *const *argv, char **env, const char *cwd);
/* The Slurm shared directory (job scripts, output, JUnit files) of the
 * current configuration, not created. 0 (the path may be cut at size). */
int pipe__slurm_dir(struct pipe *p, char *out, size_t size);

#endif
