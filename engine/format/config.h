/*
 * config.h - the pipeline configuration, .packetfs/pipeline.json (SPEC §5).
 *
 * config_parse() turns the JSON text (parsed with cJSON) into a struct
 * pfs_config and validates every field against the contract published as
 * schema/pipeline.schema.json: a bad file is refused with -EINVAL and a
 * message naming the field, so that the old configuration stays in force.
 *
 * A struct pfs_config is immutable once parsed; the engine swaps whole
 * configurations. All functions are thread-safe (no shared state).
 */
#ifndef PACKETFS_CONFIG_H
#define PACKETFS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum gpu_mode {
	GPU_AUTO,  /* "auto": nvidia-smi finds the devices */
	GPU_SLOTS, /* a number N: N declared slots, indices 0..N-1 */
	GPU_LIST,  /* a list of device indices */
};

enum executor_kind {
	EXECUTOR_LOCAL, /* recipes run on this machine (runner.h) */
	EXECUTOR_SLURM, /* each recipe run is one Slurm batch job (slurm.h) */
};

/* "executor": where recipes run. Stage programs always run locally. */
struct pfs_executor {
	enum executor_kind kind;  /* default EXECUTOR_LOCAL */
	char *partition;          /* slurm: sbatch --partition, or NULL: the cluster's default */
	char *account;            /* slurm: sbatch --account, or NULL */
	char **extra_args;        /* slurm: more sbatch arguments; NULL-terminated, never NULL */
	char *shared_dir;         /* slurm: absolute directory shared by the daemon and the
				   * compute nodes for job scripts and output, or NULL:
				   * STORE/slurm */
	int poll_ms;              /* slurm: how often job states are read, default 1000 */
};

/* A stage's timeout when its config names none (SPEC §5: no stage runs
 * forever unless its config says so, with "timeout_s": 0). */
#define STAGE_TIMEOUT_DEFAULT_S 3600

struct pfs_stage {
	char *name;             /* [a-z][a-z0-9_-]*, unique in the pipeline */
	char **run;             /* argv (NULL-terminated) or NULL: no program */
	char **produces;        /* item-relative paths that must exist, non-empty; NULL-terminated, never NULL */
	int timeout_s;          /* seconds; default STAGE_TIMEOUT_DEFAULT_S, 0 = none */
	int gate_approve;       /* "gate": "approve" */
	int recipes_from_plan;  /* "recipes": "plan" (the validate stage) */
	char *on_needs_changes; /* stage to loop back to, or NULL */
	int max_iterations;     /* default 3 */
	char *push_remote;      /* "push": {"remote": R} or NULL */
	char **env;             /* "env": "NAME=value" strings for the stage program, in
				 * the file's order; NULL-terminated, never NULL */
	int rounds_every_s;     /* "rounds": {"every_s": N, "max": M}: seconds between */
	int rounds_max;         /* rounds, and their most; 0 = not a rounds stage */
};

/* A notifier's timeout when its entry names none (SIGTERM, then SIGKILL
 * after cancel_grace_s). */
#define NOTIFY_TIMEOUT_DEFAULT_S 30

/* One "notify" entry (SPEC §5): run runs for each item event that on
 * names. A name in on is an item state (queued, running, waiting, blocked,
 * failed, done), matching the "state" events that enter it, or any other
 * item event type (config_notify_known), matching events of that type. */
struct pfs_notify {
	char **on;     /* the names, as written; NULL-terminated, never empty */
	char **run;    /* argv; run[0] is an absolute path */
	int timeout_s; /* seconds, >= 1; default NOTIFY_TIMEOUT_DEFAULT_S */
};

/* A "templates" entry (SPEC §5 "Routes and templates"): a named stage list
 * that replaces the stages after the first (plan) for the items whose plan
 * chooses it. */
struct pfs_template {
	char *name;               /* [a-z][a-z0-9_-]{0,31}, unique */
	struct pfs_config *path;  /* the configuration an item on this template
				   * runs under: the top-level stages[0] (plan),
				   * then the template's stages; every other field
				   * is its parent's (shared, never freed through
				   * it; path->parent is the parent) */
};

/* A "routes" entry: plan.md's "Route: ROUTE" chooses template NAME. */
struct pfs_route {
	char *route;              /* non-empty, as written */
	const char *template;     /* the name of one of the parent's templates */
};

/* A probe's deadline when its entry names none, and the longest one. */
#define CONFIG_PROBE_TIMEOUT_DEFAULT_S 10
#define CONFIG_PROBE_TIMEOUT_MAX_S 600
/* The most probes, and the longest probe name. */
#define CONFIG_PROBES_MAX 64
#define CONFIG_PROBE_NAME_MAX 64

/* One "probes" entry (SPEC §6, "The compute environment"): a question
 * compute-env.md asks of this machine, which a recipe's "# requires:"
 * names. */
struct pfs_probe {
	char *name;    /* [a-z0-9][a-z0-9._-]{0,63}, unique */
	char **run;    /* argv, NULL-terminated; run[0] found on PATH, no shell */
	int timeout_s; /* its deadline: 1..CONFIG_PROBE_TIMEOUT_MAX_S, default
			* CONFIG_PROBE_TIMEOUT_DEFAULT_S */
};

struct pfs_config {
	char *repo;                 /* absolute path of the git repository */
	char *base;                 /* base branch, default "main" */
	char *recipes_dir;          /* absolute path, or NULL: no recipes */
	enum gpu_mode gpu_mode;
	int gpu_count;              /* GPU_SLOTS: N; GPU_LIST: length of gpu_ids */
	int *gpu_ids;               /* GPU_LIST only */
	int max_parallel_recipes;   /* default 2, >= 1 */
	int max_parallel_items;     /* default 0 = unlimited */
	int on_interrupt_fail;      /* "on_interrupt": "fail" (default "requeue") */
	int cancel_grace_s;         /* SIGTERM -> SIGKILL grace, default 5 */
	int64_t max_doc_size;       /* bytes, default PACKETFS_DEFAULT_MAX_DOC */
	char *run_as;               /* "run_as": the user stage programs, recipes and
				     * pushes run as (SPEC §5), or NULL: the daemon's */
	struct pfs_executor executor;
	struct pfs_stage *stages;   /* in pipeline order */
	size_t nstages;             /* >= 1 */
	struct pfs_notify *notify;  /* "notify" entries in the file's order, or NULL */
	size_t nnotify;
	struct pfs_template *templates; /* "templates" in the file's order, or NULL */
	size_t ntemplates;
	const char *default_template;   /* "default_template": a template's name, or NULL */
	struct pfs_route *routes;       /* "routes" in the file's order, or NULL */
	size_t nroutes;
	/* For a template's path (struct pfs_template): the configuration it
	 * belongs to; NULL for a configuration config_parse returned. */
	const struct pfs_config *parent;
	struct pfs_probe *probes;   /* "probes" in the file's order, or NULL */
	size_t nprobes;
};

/*
 * Parses and validates pipeline.json. json need not be NUL-terminated.
 * On success returns 0 and *out (free with config_free). On a malformed or
 * invalid document returns -EINVAL and writes "field: why" into err (when
 * err is not NULL); -ENOMEM on allocation failure. Relative paths in repo
 * and recipes_dir are refused (-EINVAL) since the daemon's cwd is "/".
 */
int config_parse(const char *json, size_t len, struct pfs_config **out, char *err, size_t errlen);

/* Frees a configuration; NULL is allowed. */
void config_free(struct pfs_config *cfg);

/* The stage called name and its index in *index (may be NULL), or NULL. */
const struct pfs_stage *config_stage(const struct pfs_config *cfg, const char *name, size_t *index);

/*
 * The configuration an item on template name runs under: cfg itself when
 * name is NULL or "" (the top-level stages), the template's path when cfg
 * has a template called name, else NULL. The result lives as long as cfg.
 */
const struct pfs_config *config_path(const struct pfs_config *cfg, const char *name);

/*
 * Chooses the template of an item from its plan's header lines (SPEC §5):
 * tmpl ("Template:") when not empty, else the template that routes maps
 * route ("Route:") to, else default_template, else "" (the top-level
 * stages); a route the map lacks falls through to the default. tmpl and
 * route may be NULL. Returns 0 with the name (tmpl, or a string of cfg)
 * in *out, or -ENOENT when tmpl names no template of cfg; then err (when
 * not NULL) gets "Template: NAME: no such template (templates: a, b)".
 */
int config_choose(const struct pfs_config *cfg, const char *tmpl, const char *route,
		  const char **out, char *err, size_t errlen);

/* Whether stage st reviews the change: it produces review.md or loops
 * back on needs_changes. Its assessment (review.md's last "## Assessment:"
 * line) is what a publish gate needs. */
int config_stage_reviews(const struct pfs_stage *st);
/* Whether stage st publishes: it pushes, or it is called "publish".
 * config_parse refuses a pipeline where such a stage has no reviewing
 * stage before it. */
int config_stage_publishes(const struct pfs_stage *st);

/* Whether NAME is a variable the engine sets for every stage (PACKET_ITEM,
 * PACKET_DIR, ..., PACKET_ROUND; SPEC §5), which a stage's "env" may not
 * set. name ends at '=' or NUL. */
int config_env_reserved(const char *name);

/* The names a "notify" entry's "on" may hold: the item states first, then
 * the item event types; NULL-terminated. */
extern const char *const config_notify_known[];
/* Whether notify entry n wants the item event of type type (for a "state"
 * event, state is the state it entered; NULL otherwise). */
int config_notify_wants(const struct pfs_notify *n, const char *type, const char *state);

/* The probe called name, or NULL. */
const struct pfs_probe *config_probe(const struct pfs_config *cfg, const char *name);
/* Whether the len bytes at name are a probe name: [a-z0-9][a-z0-9._-]{0,63}. */
int config_probe_name_ok(const char *name, size_t len);

/*
 * The default pipeline.json text for a new store (caller frees), used by
 * `packetfs init` without --pipeline: the base branch, the given recipes
 * directory (NULL: none) and the five stages plan, print, validate, review
 * and publish without programs, publish gated on approve. NULL on ENOMEM.
 */
char *config_default_json(const char *repo, const char *base, const char *recipes_dir);

/*
 * The pipeline.json text json (a JSON object, as config_parse takes it;
 * NUL-terminated) with its top-level "repo" set to repo, every other byte
 * as the author wrote it: the value of the first top-level "repo" is
 * replaced, or, when there is none, "repo" becomes the first member, laid
 * out like the one after it. Caller frees; NULL on ENOMEM or when json is
 * not an object.
 */
char *config_set_repo(const char *json, const char *repo);

#endif
