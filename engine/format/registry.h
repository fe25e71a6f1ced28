/*
 * registry.h - validation/registry.jsonl lines and what is derived from them
 * (SPEC §6): checking an external line, the verdict, the review gate's
 * evidence check (registry.c); the digest of a registry that evidence.md,
 * junit.xml, the status and attestations read, and the text of
 * validation/evidence.md (registry_digest.c).
 *
 * A registry line is one JSON object (schema/registry-line.schema.json):
 *   run (int), recipe (string), status (validated|failing|blocked|timed_out|
 *   cancelled|interrupted), command, evidence, note, exit_code (int|null),
 *   signal (int; engine lines carry it only when a signal ended the run),
 *   started_at, finished_at, duration_s (number), iteration (int),
 *   head (string), gpus (array of int), log_sha256, source (engine|external),
 *   executor (string), job_id (string: the batch system's job id, on
 *   lines of runs that executor "slurm" ran), recorded_by (object: stage,
 *   pid, uid; on lines of recorded runs), env (object: the environment the
 *   run ran in, runenv.h), side ("base" or "head") and metrics (object:
 *   NAME -> {value, unit, better}), on lines of measured runs (measure.h).
 * A line appended from outside may not carry side or metrics: only the
 * engine measures.
 * Only "recipe" and "status" are required of an external line; every field
 * present must have the right type. Pure functions over strings; thread-safe.
 */
#ifndef PACKETFS_REGISTRY_H
#define PACKETFS_REGISTRY_H

#include <stddef.h>
#include <sys/types.h>
#include "util.h"

/* The longest line appended from outside, newline excluded (64 KiB, as a
 * request to the recorder): a longer one is refused whole (-EFBIG), and
 * the mount never holds a longer fragment waiting for its newline. */
#define REGISTRY_LINE_MAX (64 * 1024)

/*
 * Checks one line appended from outside (without its '\n'). On success
 * returns 0 and *out, the line re-serialised compactly by cJSON with
 * "source" forced to "external" (caller frees). Returns -EINVAL with a
 * reason in err for anything that is not one valid JSON object line,
 * -EFBIG with a reason for a line longer than REGISTRY_LINE_MAX, -ENOMEM.
 */
int registry_check_external(const char *line, size_t len, char **out, char *err, size_t errlen);

/* The fields of an engine run, as recorded in the runs table. */
struct registry_run {
	int run;
	const char *recipe, *status, *command, *evidence, *note;
	int has_exit_code, exit_code;
	int signal;             /* that ended the run; 0: none (no "signal" member) */
	const char *started_at, *finished_at;
	double duration_s;
	int iteration;
	const char *head;
	const int *gpus;
	size_t ngpus;
	const char *log_sha256, *executor;
	const char *job_id;     /* NULL or "": none (no "job_id" member) */
	const char *recorded_by_stage; /* recorded runs (the recorder): the stage whose process
				        * asked, "" for none; NULL: not recorded (no
				        * "recorded_by" member) */
	pid_t recorded_by_pid;  /* ... the process that asked */
	uid_t recorded_by_uid;  /* ... and its user */
	const char *recorded_by_via; /* ... how the stage was found: "ancestry", "credential",
				      * "both", "none"; NULL: not told (no "via" member) */
	const char *env_json;   /* the run's environment as a JSON object text (runenv.h), or
				 * NULL / "": none (no "env" member) */
	const char *side;       /* a measured run's side, "base" or "head"; NULL: not measured
				 * (no "side" member) */
	const char *metrics_json; /* a measured run's metrics (measure_values_json), or NULL /
				   * "": none (no "metrics" member) */
};

/* The registry line (compact JSON, no newline, "source":"engine") for a
 * finished engine run; caller frees. NULL on ENOMEM. */
char *registry_engine_line(const struct registry_run *r);

/*
 * Stale evidence: a run recorded at a commit other than the item branch's
 * current head says nothing about that head. The functions below that take
 * head (the branch's current commit, 40 hex digits) treat a recipe whose
 * latest engine run is stale as if it had not run: it is not counted as
 * validated, and its failure does not fail the verdict either. head NULL
 * ignores heads (every run counts, whatever commit it ran at).
 */

/*
 * Verdict over the named recipes (NULL-terminated names) given the
 * registry lines (nlines strings, oldest first): "pass" when every named
 * recipe's latest engine run is validated (and not stale), "fail" when any
 * is failing or timed_out (and not stale), "blocked" otherwise (including
 * no names). Returns a static string. External lines never count.
 */
const char *registry_verdict(char *const *names, char *const *lines, size_t nlines,
			     const char *head);

/*
 * The review gate's evidence check: 0 when the latest engine run of every
 * named recipe is validated and ran at commit head; otherwise -EAGAIN and
 * a reason in reason: "03-unit-tests: no validated run at <head12>" (none
 * at head, or the latest is stale), or "03-unit-tests: latest run at
 * <head12> is failing" (a later run undid an earlier validated one),
 * with " (and N more)" when more recipes miss. head NULL always refuses.
 */
int registry_gate(char *const *names, char *const *lines, size_t nlines, const char *head,
		  char *reason, size_t reasonlen);

/*
 * Renders validation/evidence.md into out (appends): a heading with
 * "[n/m validated]" (m = number of names, n = those whose latest engine run
 * is validated and not stale), the table
 * "Recipe | Status | Command | Evidence | Note" with the latest engine run
 * of each named recipe ("missing" for one that never ran; a stale run's
 * Note starts with "stale: ran at <head12>"), then external claims in
 * their own table, then the line
 * "Generated from validation/registry.jsonl — do not edit by hand."
 * Returns 0 or -ENOMEM.
 */
int registry_evidence_md(const char *item, char *const *names, char *const *lines, size_t nlines,
			 const char *head, struct buf *out);
/* The same as a section of a document at the item's root (the
 * change-validation.md packetfs writes): "## Evidence for ..." and "###
 * External claims ...", each evidence link from the item directory
 * ("validation/logs/3-build.log"). Returns 0 or -ENOMEM. */
int registry_evidence_section(const char *item, char *const *names, char *const *lines,
			      size_t nlines, const char *head, struct buf *out);

/* "n/m validated" (n as in evidence.md) for the status file into out[64]. */
void registry_evidence_summary(char *const *names, char *const *lines, size_t nlines,
			       const char *head, char out[64]);

/*
 * A digest of a registry: what evidence.md and the status's "n/m
 * validated" need of it (the latest engine line of each recipe, the
 * external claims' rows), fed one line at a time, oldest first, so that a
 * registry that grows is read once. Rendering from the digest of lines
 * gives the same text as registry_evidence_md and registry_evidence_summary
 * over those lines. A digest is not locked: one thread at a time.
 */
struct registry_digest;

/* An empty digest (free with registry_digest_free), or NULL on ENOMEM. */
struct registry_digest *registry_digest_new(void);
/* NULL is allowed. */
void registry_digest_free(struct registry_digest *d);
/* Adds the next line (len bytes, no newline; it need not end with a NUL).
 * A line that is not a JSON object is skipped, as by the renderers above.
 * 0 or -ENOMEM (the digest is then incomplete: free it). */
int registry_digest_add(struct registry_digest *d, const char *line, size_t len);
/* The memory the digest holds, in bytes (an estimate). */
size_t registry_digest_bytes(const struct registry_digest *d);
/* registry_evidence_md over the lines added so far. 0 or -ENOMEM. */
int registry_digest_evidence_md(const struct registry_digest *d, const char *item,
				char *const *names, const char *head, struct buf *out);
/* The latest engine run of one recipe, as its registry line says. The
 * strings point into the digest (never NULL; "" for a member the line
 * lacks) and stay valid until the next registry_digest_add or
 * registry_digest_free. */
struct registry_latest {
	int run;
	const char *status, *command, *evidence, *note, *head;
	const char *started_at, *finished_at, *log_sha256;
	double duration_s;      /* seconds; 0 when absent */
	int has_exit_code, exit_code;
	int signal;             /* 0: none */
};
/* The latest engine line of recipe name into *out, unless it is stale (it
 * ran at another commit than head; head NULL: any counts). 1 when found, 0
 * when the recipe has no such line (*out untouched). */
int registry_digest_latest(const struct registry_digest *d, const char *name, const char *head,
			   struct registry_latest *out);
/* registry_evidence_summary over the lines added so far. */
void registry_digest_summary(const struct registry_digest *d, char *const *names,
			     const char *head, char out[64]);

#endif
