/*
 * capture.h - a program run to its end under a deadline, its standard
 * output captured: nvidia-smi (gpu.c), scontrol at crash recovery
 * (slurm_parse.c), git bundle (the git layer), fusermount3 (the CLI,
 * through engine.h). The blocking way the engine runs a child; a stage or
 * recipe runs on the loop through runner.h, a Slurm command of the
 * executor through slurm_cmd.c. All of them start it with proc_start
 * (proc.h).
 */
#ifndef PACKETFS_CAPTURE_H
#define PACKETFS_CAPTURE_H

#include <stddef.h>

#include "proc.h"

/* A run of capture_exec: the caller fills the first part (zero what it
 * leaves out), capture_exec the second. */
struct capture {
	char *const *argv;    /* NULL-terminated; argv[0] found on PATH, no shell */
	char *const *env;     /* NULL: this process's environment */
	const char *cwd;      /* NULL: this process's working directory */
	const char *in_data;  /* NULL: stdin is /dev/null; else in_len bytes */
	size_t in_len;
	/* stderr: PROC_OUT_NULL (0, /dev/null), PROC_OUT_STDOUT (merged into
	 * the captured output) or PROC_OUT_INHERIT (this process's). */
	enum proc_out err;
	int timeout_ms;       /* the deadline, from the start */
	size_t max;           /* the most bytes of output kept */

	char *out;            /* what it wrote, NUL-terminated, or NULL; the
			       * caller frees it, whatever capture_exec returned */
	size_t len;           /* the size of out, the NUL not counted */
	int status;           /* its wait status (WIFEXITED ...), when it ended */
};

/*
 * Runs c->argv (proc_start: PATH of c->env, no shell) with stdin from
 * c->in_data or /dev/null, its stdout into a pipe, stderr as c->err, in
 * c->cwd, in a process group of its own, with an empty signal mask and
 * default dispositions, and reads its output until it closes, keeping at
 * most c->max bytes (the rest is read and dropped). Past c->timeout_ms
 * milliseconds from the start the whole process group is killed (SIGKILL)
 * and the child reaped; so is a child that closed its output and went on
 * running. The child is reaped by its pid only, so a libuv loop of the
 * caller, which reaps its own children by pid, is not disturbed.
 *
 * Returns 0 when the program ran to its end, whatever its exit: c->status
 * is its wait status, c->out and c->len what it wrote. -ETIMEDOUT past the
 * deadline (c->out holds what it wrote until then); otherwise c->out is
 * NULL: -ENOENT when argv[0] is not on PATH, -ENOMEM, or another negative
 * errno of proc_start. Blocks the caller for at most about c->timeout_ms;
 * any thread, but not one whose signal handling needs SIGCHLD for the
 * child.
 */
int capture_exec(struct capture *c);

/*
 * capture_exec of argv with this process's environment and working
 * directory, stdin and stderr on /dev/null.
 *
 * Returns 0 when the program exited 0; -EIO when it exited non-zero or by a
 * signal; in both cases *out holds what it wrote, NUL-terminated, and *len
 * its size (the caller frees *out). Otherwise *out is NULL: -ENOENT when
 * argv[0] is not on PATH, -ETIMEDOUT past the deadline, -ENOMEM, or another
 * negative errno of pipe or spawn. Threads as capture_exec.
 */
int capture_run(char *const *argv, int timeout_ms, size_t max, char **out, size_t *len);

#endif
