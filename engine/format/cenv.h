/*
 * cenv.h - compute-env.md (SPEC §6, "The compute environment"): what the
 * machines recipes run on offer, and each probe of pipeline.json's
 * "probes" with its answer.
 *
 * A struct cenv holds what was found so far; cenv_render writes it as
 * Markdown, saying what is still pending, so that a read before the
 * probes end shows what is known. The probing itself (processes) is
 * exec's (cenv_probe.h); keeping it and refreshing it is the pipeline's.
 *
 * Pure: any thread, on a struct cenv that thread reads safely.
 */
#ifndef PACKETFS_CENV_H
#define PACKETFS_CENV_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* A probe's answer. */
enum cenv_answer {
	CENV_PENDING,   /* not run yet */
	CENV_PRESENT,   /* it exited 0 */
	CENV_ABSENT,    /* not on PATH, or it exited non-zero or by a signal */
	CENV_TIMED_OUT, /* past its deadline: counts as absent */
};

struct cenv_probe {
	char *name;              /* the probe's name in pipeline.json */
	char *command;           /* its argv joined by spaces, for the reader */
	enum cenv_answer answer;
	char *text;              /* PRESENT: its answer, the first line of its output that
				  * is not blank, trimmed ("" when it printed nothing);
				  * ABSENT: why ("not on PATH", "exit 1: No module named
				  * torch"); otherwise NULL */
};

struct cenv {
	int64_t started_ns;      /* when this probing started (ns since the epoch) */
	int64_t finished_ns;     /* when it ended; 0 while it runs */
	char *host;              /* this host as runenv_parse's JSON object, or NULL:
				  * not probed yet */
	int slurm;               /* the executor is Slurm: its section is shown */
	char *sinfo;             /* slurm: sinfo's rows (CENV_SINFO_FORMAT), or NULL */
	char *sinfo_error;       /* slurm: why sinfo gave no rows, or NULL (pending when
				  * sinfo is NULL too) */
	struct cenv_probe *probes; /* in pipeline.json's order */
	size_t nprobes;
};

/* The rows sinfo is asked for: `sinfo --noheader --format=CENV_SINFO_FORMAT`,
 * partition (the default one ends in '*'), availability, node count,
 * state, node list, GRES. */
#define CENV_SINFO_FORMAT "%P|%a|%D|%T|%N|%G"

/* The word a reader and a blocked run see for answer a: "present",
 * "absent", "absent (timed out)" or "pending". */
const char *cenv_answer_word(enum cenv_answer a);

/* Appends compute-env.md for c to out. 0 or -ENOMEM. */
int cenv_render(const struct cenv *c, struct buf *out);

/* Frees what c holds and zeroes it; NULL is fine. */
void cenv_clear(struct cenv *c);

#endif
