/*
 * cenv_probe.h - the questions compute-env.md asks of the machines
 * (cenv.h; SPEC §6, "The compute environment"): this host, the Slurm
 * cluster, and a probe of pipeline.json. Each runs its programs to their
 * end with capture_exec (capture.h) under a deadline, and blocks its
 * caller meanwhile: the pipeline calls them on a thread of its own, never
 * on the loop's or a file system request's.
 *
 * Threads: any, but not one whose signal handling needs SIGCHLD for the
 * child (capture_exec).
 */
#ifndef PACKETFS_CENV_PROBE_H
#define PACKETFS_CENV_PROBE_H

#include "format.h"

/* How long the host's nvidia-smi and sinfo may take, in milliseconds. */
#define CENV_HOST_TIMEOUT_MS 20000
#define CENV_SINFO_TIMEOUT_MS 10000

/*
 * This host as runenv_parse's JSON object into *json (caller frees): the
 * lines runenv_local reads here, then, when PATH finds nvidia-smi (or the
 * machine's answer needs a tool), what its script prints, run as
 * `sh -c SCRIPT packetfs-run` for at most CENV_HOST_TIMEOUT_MS. 0, or
 * -ENOMEM; a script that fails or times out only leaves its lines out.
 */
int cenv_probe_host(char **json);

/*
 * The Slurm cluster's partitions, nodes and GRES: `sinfo --noheader
 * --format=CENV_SINFO_FORMAT`, for at most CENV_SINFO_TIMEOUT_MS. 0 with
 * its output in *rows (caller frees), or 0 with *rows NULL and why in
 * *error (caller frees: "not on PATH", "timed out after 10 s", "exit 1:
 * FIRST LINE"), or -ENOMEM.
 */
int cenv_probe_sinfo(char **rows, char **error);

/*
 * Runs one probe: argv (argv[0] found on PATH, no shell; stdin /dev/null,
 * stderr merged into its output, this process's environment and working
 * directory) for at most timeout_s seconds. Returns CENV_PRESENT when it
 * exited 0 (*text: the first line of its output that is not blank,
 * trimmed, cut to 300 bytes; "" when none), CENV_ABSENT otherwise (*text
 * says why: "not on PATH", "exit N: FIRST LINE", "killed by signal N"),
 * CENV_TIMED_OUT past the deadline (its process group killed; *text
 * NULL). *text is the caller's; on -ENOMEM the answer is CENV_PENDING.
 */
enum cenv_answer cenv_probe_run(char *const *argv, int timeout_s, char **text);

#endif
