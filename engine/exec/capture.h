/*
 * capture.h - a short helper program run to its end under a deadline, its
 * standard output captured: nvidia-smi (gpu.c), and scontrol at crash
 * recovery (slurm_parse.c). The blocking way the engine runs a child; a
 * stage or recipe runs on the loop through runner.h, a Slurm command of the
 * executor through slurm_cmd.c.
 */
#ifndef PACKETFS_CAPTURE_H
#define PACKETFS_CAPTURE_H

#include <stddef.h>

/*
 * Runs argv[0] (found on PATH, no shell) with argv (NULL-terminated), the
 * process's environment, stdin and stderr on /dev/null, in a process group
 * of its own, with an empty signal mask and default dispositions, and reads
 * its standard output until it closes, keeping at most max bytes (the rest
 * is read and dropped). Past timeout_ms milliseconds from the start the
 * whole process group is killed (SIGKILL) and the child reaped. The child
 * is reaped by its pid only, so a libuv loop of the caller, which reaps its
 * own children by pid, is not disturbed.
 *
 * Returns 0 when the program exited 0; -EIO when it exited non-zero or by a
 * signal; in both cases *out holds what it wrote, NUL-terminated, and *len
 * its size (the caller frees *out). Otherwise *out is NULL: -ENOENT when
 * argv[0] is not on PATH, -ETIMEDOUT past the deadline, -ENOMEM, or another
 * negative errno of pipe or spawn. Blocks the caller for at most about
 * timeout_ms; any thread, but not one whose signal handling needs SIGCHLD
 * for the child.
 */
int capture_run(char *const *argv, int timeout_ms, size_t max, char **out, size_t *len);

#endif
