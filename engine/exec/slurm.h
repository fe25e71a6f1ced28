/*
 * slurm.h - recipe runs as Slurm batch jobs (the "slurm" executor of
 * pipeline.json): submission with sbatch, following the jobs with squeue
 * and scontrol, their output files copied as they grow, cancel with
 * scancel, and attaching again to a job that an earlier daemon submitted.
 *
 * Design: every Slurm command is an ordinary child process on the libuv
 * loop (slurm_cmd.c: proc_start, in this process's session, reaped by its
 * pid: see runner.h on reaping); nothing blocks the loop. A job is submitted as a
 * small shell script, written into the shared directory, that execs the
 * recipe (`sbatch --parsable --export=ALL --open-mode=append --job-name
 * --output --chdir [--time] [--gres=gpu:N] [--nodelist] [--partition] [--account]
 * [extra_args] SCRIPT`: append, so that a requeued job's attempts follow
 * one another in its output file), so
 * the recipe runs from its own path, in the item's worktree, with the
 * environment sbatch was given; Slurm adds CUDA_VISIBLE_DEVICES for the
 * GPUs it grants. The jobs of a loop are followed by one poller (struct
 * slurm_poller): every poll_ms (the shortest of its jobs') it copies what
 * each output file gained and reads the states of all its jobs with one
 * `squeue --noheader --all --states=all --jobs=ID,ID,... --Format=...`,
 * whatever their number (no accounting daemon is needed). `scontrol -o -d
 * show job ID` reads one job, only at an event: when squeue first shows
 * it running (the GPU indices it got), when squeue shows it ended (its exit
 * code and RunTime), and when squeue does not show it (whether Slurm still
 * knows it). A job ends when its state is one of Slurm's final states
 * (COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED,
 * OUT_OF_MEMORY, BOOT_FAIL, DEADLINE), after the output file is read to
 * its end. The recipe's timeout counts from the first poll that sees the
 * job RUNNING (time in the queue does not count); when it passes, and on
 * cancel, the job is ended with `scancel` (Slurm sends SIGTERM, then
 * SIGKILL after its KillWait), tried again at every poll while the
 * controller does not answer; the result says cancelled or timed out only
 * when Slurm did cancel the job. `--time` is the timeout rounded up to
 * minutes plus two, a backstop that Slurm enforces itself.
 *
 * Sources: sbatch(1), squeue(1) --Format and "JOB STATE CODES", scontrol(1)
 * "show job" output, scancel(1), all of Slurm 22.05. squeue asked for one
 * job id that the controller does not know fails ("Invalid job id
 * specified"); asked for several, it leaves the unknown ones out.
 *
 * Threads: every function must be called on the loop's thread; callbacks
 * run there too.
 */
#ifndef PACKETFS_SLURM_H
#define PACKETFS_SLURM_H

#include <stdint.h>
#include <uv.h>

#include "format.h"
#include "runner.h"

struct slurm_spec {
	const struct pfs_executor *ex; /* partition, account, extra_args, poll_ms */
	const char *dir;       /* the shared directory (must exist) for the script and output */
	const char *stem;      /* file name stem, unique in dir: DIR/STEM.sh, DIR/STEM.out */
	const char *name;      /* the job name */
	char *const *argv;     /* the command the job runs (argv[0] a path or a name on the
				* job's PATH), NULL-terminated */
	char *const *env;      /* sbatch's environment (exported to the job), NULL-terminated */
	const char *cwd;       /* the job's working directory */
	unsigned timeout_s;    /* 0 = none */
	int gpus;              /* --gres=gpu:N when > 0 */
	const char *nodelist;  /* --nodelist=NODELIST when not NULL: the job runs there
				* (a measured batch keeps its runs on one node) */
};

struct slurm_result {
	struct runner_result r; /* exit_code and term_signal from the job's ExitCode,
				 * timed_out / cancelled when this daemon ended it,
				 * duration_s from its RunTime */
	int ran;               /* the job was seen running, or wrote output */
	int refused;           /* sbatch refused the job (reason says why) */
	int lost;              /* Slurm does not know the job (any more); r is not valid */
	int cancel_missed;     /* slurm_cancel() or the timeout asked for scancel, but the
				* job ended by itself first (r is how it ended) */
	char state[32];        /* the final JobState, "" when none was read */
	char reason[256];      /* sbatch's error, or Slurm's Reason, or "" */
};

/* Callbacks may submit, attach, cancel and detach jobs. */
struct slurm_callbacks {
	/* sbatch accepted the job: its id and output file (both NUL-
	 * terminated, valid during the call). */
	void (*submitted)(void *arg, const char *job_id, const char *output);
	/* The job was first seen running, on node, with the GPU indices
	 * Slurm granted (ngpus may be 0). */
	void (*started)(void *arg, const char *node, const int *gpus, int ngpus);
	/* More output: len bytes; offset is how many bytes of the output file
	 * have been delivered with this call included. */
	void (*output)(void *arg, const char *data, size_t len, int64_t offset);
	/* Something the log should say about the job, as one line (ending in
	 * '\n'; offset as for output): Slurm requeued it (the output of the
	 * next attempt follows in the same file), or its state cannot be read
	 * for a while. */
	void (*note)(void *arg, const char *line, int64_t offset);
	/* Called exactly once unless slurm_detach() came first; the job is
	 * freed right after it returns. */
	void (*exit)(void *arg, const struct slurm_result *res);
};

struct slurm_job;
struct slurm_poller;

/*
 * A poller on loop, for the jobs of slurm_submit and slurm_attach: one
 * timer, one squeue per poll for all of them. 0 and *out, or -ENOMEM. It
 * must be closed with slurm_poller_close before the loop is closed.
 */
int slurm_poller_new(uv_loop_t *loop, struct slurm_poller **out);

/*
 * Detaches the jobs it still follows (slurm_detach), ends its squeue in
 * flight (SIGTERM), and closes it: it is freed once its handles are
 * closed, as the loop runs. NULL is fine. For shutdown.
 */
void slurm_poller_close(struct slurm_poller *sp);

/*
 * Submits spec; sp follows the job (its poll_ms is spec->ex->poll_ms).
 * Returns 0 and *out; every end, a refused submission included, comes
 * through the exit callback later. Returns a negative errno only when
 * nothing was started: -ENOMEM, -ESHUTDOWN (sp is closing), or the script
 * could not be written (-errno of open/write).
 */
int slurm_submit(struct slurm_poller *sp, const struct slurm_spec *spec,
		 const struct slurm_callbacks *cb, void *arg, struct slurm_job **out);

/*
 * Follows job_id with sp, submitted earlier (by an earlier daemon), whose
 * output file is output and of which offset bytes were delivered already.
 * poll_ms from ex; timeout_s as in slurm_spec, counted from the first poll
 * that sees the job running. 0 and *out, -ENOMEM or -ESHUTDOWN.
 */
int slurm_attach(struct slurm_poller *sp, const struct pfs_executor *ex, const char *job_id,
		 const char *output, int64_t offset, unsigned timeout_s,
		 const struct slurm_callbacks *cb, void *arg, struct slurm_job **out);

/* Ends the job with scancel (at once, or as soon as sbatch gave its id);
 * the result then has cancelled = 1. Idempotent. */
void slurm_cancel(struct slurm_job *j);

/* Stops following the job, which goes on in Slurm: no callback comes any
 * more, its Slurm commands in flight are ended (SIGTERM; the poller's
 * squeue goes on for the other jobs), and the job is freed once its
 * handles are closed. For shutdown. */
void slurm_detach(struct slurm_job *j);

/* A job as Slurm shows it (slurm_parse_job, slurm_parse_queue). */
/* The longest run time a parser gives (68 years): longer than any timeout,
 * and in nanoseconds still an int64_t. */
#define SLURM_RUN_S_MAX 2147483647L

struct slurm_info {
	char state[32];        /* JobState, e.g. "RUNNING", "" when unknown */
	char reason[256];      /* Reason, "" for None */
	char node[256];        /* BatchHost, "" when none */
	int exit_code;         /* ExitCode=E:S: the exit status E ... */
	int signal;            /* ... and the signal S that ended the job */
	long run_s;            /* RunTime in seconds, -1 unknown; a longer one reads as
				* SLURM_RUN_S_MAX */
	int restarts;          /* Restarts: how often Slurm requeued the job (a count
				* past INT_MAX, and exit_code and signal, saturate) */
	int gpus[16];          /* the GPU indices of GRES=...(IDX:...), at most 16 */
	int ngpus;
};

/*
 * Parses one line of `scontrol -o -d show job` output (exposed for tests)
 * into *info (all of it: what the line lacks is 0, "" or, for run_s, -1).
 * Returns 0, or -EINVAL when the line has no JobState.
 */
int slurm_parse_job(const char *line, struct slurm_info *info);

/*
 * Parses one line of `squeue --noheader --Format=SLURM_QUEUE_FORMAT`
 * output (exposed for tests), "ID|STATE|RESTARTS|TIMEUSED|BATCHHOST|REASON|",
 * into id (the job id) and *info: state, restarts, run_s (TimeUsed), node
 * ("" for n/a) and reason ("" for None); squeue shows no exit code and no
 * GPU indices, so those are 0. Returns 0, or -EINVAL when the line is not
 * such a line (an error message, a line cut short).
 */
#define SLURM_QUEUE_FORMAT "JobID:|,State:|,RestartCnt:|,TimeUsed:|,BatchHost:|,Reason:|"
int slurm_parse_queue(const char *line, char id[32], struct slurm_info *info);

/*
 * The id of the job whose output file (StdOut) is output, from
 * `scontrol -o show job` (every job the controller knows), into id: for
 * crash recovery, when a daemon died after sbatch was started and before
 * its answer was recorded. scontrol runs through capture_run (capture.h):
 * past timeout_ms its process group is killed. 0, -ENOENT (no such job),
 * -ETIMEDOUT (scontrol did not answer in time), -EIO (scontrol failed or
 * is not on PATH), or -ENOMEM. Blocks the caller for at most about
 * timeout_ms; any thread, but not the loop's while it runs.
 */
#define SLURM_RECOVER_TIMEOUT_MS 10000
int slurm_find_job_by_output(const char *output, int timeout_ms, char id[32]);

/*
 * Ends Slurm job job_id with `scancel` (capture_run: past timeout_ms its
 * process group is killed), without following it: for crash recovery, a
 * job whose run cannot be followed again. 0 when scancel exited 0 (the
 * controller took the request; a job that had ended already is fine),
 * -EINVAL for an id that is not digits and underscores, -ETIMEDOUT, -EIO
 * (scancel failed or is not on PATH) or -ENOMEM. Blocks the caller for at
 * most about timeout_ms; any thread, but not the loop's while it runs.
 */
int slurm_cancel_job(const char *job_id, int timeout_ms);

/* Whether state is one of Slurm's final job states. */
int slurm_state_final(const char *state);

#endif
