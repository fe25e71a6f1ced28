/*
 * runenv.h - the environment a recipe run ran in (SPEC §6: "Logs start
 * with a header ... and the environment: OS, kernel, CPU, memory, GPU
 * model/driver/CUDA where present, each `# version:` output ... The
 * registry line carries the same environment as `env`").
 *
 * The environment is read where the command runs, which for the Slurm
 * executor is a node the engine never sees: the run is started as
 *
 *	sh -c SCRIPT packetfs-run CMD ARG...
 *
 * where SCRIPT (runenv_script) prints the environment block on stdout, into
 * the run's log, and then execs CMD ARG... in its place (same pid, same
 * process group, same stdin, and the same environment: the probes run in a
 * subshell, so no variable or function of theirs reaches CMD). When no
 * CMD is given the script prints the block and exits 0. For a local run
 * the engine reads the machine's lines itself, with the same sources and
 * rules, and the script prints the rest (runenv_local). The block, a line
 * each, values on one line (control characters as spaces, blanks trimmed):
 *
 *	# env.os: PRETTY_NAME of /etc/os-release (or /usr/lib/os-release),
 *	          else `uname -s`
 *	# env.kernel: `uname -srm`, read from /proc/sys/kernel/ostype,
 *	              osrelease and arch where all three are (arch is the
 *	              kernel's machine, not changed by a personality such
 *	              as linux32's)
 *	# env.cpu: "model name" of /proc/cpuinfo, else lscpu's "Model name",
 *	           else `uname -p` (left out when "unknown")
 *	# env.cpus: the CPUs this process may use: the count of the
 *	            Cpus_allowed_list of /proc/self/status (the affinity mask
 *	            that `nproc` reads), else `nproc` (OMP_NUM_THREADS and
 *	            OMP_THREAD_LIMIT, which nproc obeys, unset for it), else
 *	            `getconf _NPROCESSORS_ONLN`
 *	# env.memory: MemTotal of /proc/meminfo, in bytes
 *	# env.gpu: INDEX, NAME, DRIVER, MEMORY_MIB   one line per GPU, only when
 *	           `nvidia-smi --query-gpu=index,name,driver_version,memory.total
 *	           --format=csv,noheader,nounits` answers (exit 0) within 10 s;
 *	           with `-i "$CUDA_VISIBLE_DEVICES"` when that is set and not
 *	           empty; only lines that start with a digit; at most 64
 *	# env.cuda: the "CUDA Version:" of nvidia-smi's banner, when found
 *	# env.version: COMMAND => OUTPUT   one per "# version:" command, in order
 *	# env.end
 *
 * A line is left out when its value is empty. Each value is cut to 300
 * bytes (a version line to 300 bytes of output and 200 of command). A
 * version command runs as `timeout 30 sh -c COMMAND </dev/null` with the
 * run's cwd and environment; OUTPUT is the first line of its stdout and
 * stderr that is not blank, or "(exit N, no output)" (N = 124 when it timed
 * out). COMMAND as printed is the command with control characters as
 * spaces and each "=>" written "= >", so that the first " => " of the line
 * always separates the two. The probes' own stderr is discarded and their
 * stdin is /dev/null. The script needs POSIX sh and awk, and tr, cut and sed
 * for version commands and nvidia-smi; uname, timeout, nproc, lscpu and
 * nvidia-smi are used when found on PATH.
 *
 * Everything here is pure (no shared state): any thread.
 */
#ifndef PACKETFS_RUNENV_H
#define PACKETFS_RUNENV_H

#include <stddef.h>

#include "util.h"

/* The $0 the script expects: `sh -c SCRIPT RUNENV_ARG0 CMD ARG...`. */
#define RUNENV_ARG0 "packetfs-run"

/*
 * Appends to out the text of the POSIX sh script described above.
 * versions: the recipe's "# version: COMMAND" commands, NULL-terminated; may
 * be NULL or empty (then no version lines); blank commands are skipped. The
 * commands are quoted into the script (runenv_sh_quote), never
 * interpreted by it. probes: nonzero for the probes of the machine (os,
 * kernel, cpu, cpus, memory); 0 when the caller wrote those lines before
 * the script's output (runenv_local). Returns 0, or -ENOMEM (out may then
 * hold part of the script; the caller frees it as always). out is the
 * caller's.
 */
int runenv_script(char *const *versions, int probes, struct buf *out);

/*
 * For a run started on this machine by the calling thread (runenv_local.c):
 * appends to block the lines the probes would print, read here with the
 * script's sources and rules (the thread's affinity mask is what its child
 * inherits; the machine's facts are read once per process and again when
 * the kernel's names, os-release's stat or the memory total change), and
 * to script the script that prints the rest: the version
 * commands and, when path finds nvidia-smi, the GPU lines, then
 * "# env.end"; with neither, block ends with "# env.end" itself and script
 * gets nothing. When this machine's answer would need a tool (no "model
 * name" in /proc/cpuinfo), block gets nothing and script is the whole
 * script. The caller appends block to the log before the run's output and
 * starts the run as `sh -c SCRIPT RUNENV_ARG0 CMD ARG...`, or as CMD ARG...
 * itself when there is no script. path: the run's PATH (NULL: sh's
 * default). Returns 0 (a script), 1 (no script), or -ENOMEM. block and
 * script are the caller's. Any thread.
 */
int runenv_local(char *const *versions, const char *path, struct buf *block, struct buf *script);

/*
 * Whether name is an executable regular file in a directory of path, a
 * colon-separated list as sh's PATH (an empty entry is "."; NULL: sh's
 * default path). Any thread.
 */
int runenv_path_finds(const char *path, const char *name);

/*
 * Parses the environment block the script printed, from the start of a
 * log's text (len bytes; need not be NUL-terminated; "\r\n" ends a line as
 * "\n" does). Before the block only the engine's own header may come: lines
 * that start with '#' and blank lines are skipped; the first line that
 * starts with "# env." opens the block; any other line first means there is
 * no block (the text is a command's output, which must not be taken for an
 * environment). Inside the block, lines that do not start with "# env." are
 * skipped (the engine's or the scheduler's notes); a second line of a key
 * that comes once (os, kernel, cpu, cpus, memory, cuda) starts the block
 * again from that line (a run started again, a requeued Slurm job, after it
 * was killed while printing it). "# env.end" closes the block and nothing
 * after it is read: what the command prints cannot add to or change the
 * environment. Lines of keys it does not know are ignored.
 *
 * On success returns 0 and sets *json to a compact JSON object text
 * (caller frees with free()), members in this order, each left out when its
 * line is absent or does not parse:
 *
 *	{"os":"Debian GNU/Linux 12 (bookworm)","kernel":"Linux 6.1.0-18-amd64 x86_64",
 *	 "cpu":"Intel(R) Xeon(R) ...","cpus":2,"memory_bytes":25165824000,
 *	 "gpus":[{"index":0,"name":"NVIDIA H200","driver":"550.54.15","memory_mib":143771}],
 *	 "cuda":"12.4","versions":[{"command":"cmake --version","output":"cmake version 3.25.1"}],
 *	 "complete":true}
 *
 * "complete" (always present) is false when "# env.end" is missing: the run
 * was killed before its command started. A GPU line gives index, name,
 * driver and memory_mib as far as it has fields (a memory that is not a
 * number, "[N/A]", is left out). Strings are valid UTF-8 (an invalid byte
 * becomes '?', a sequence cut at the end of a value is dropped), control
 * characters become spaces, each at most 1024 bytes. Returns -ENOENT when
 * the text has no block (*json untouched), -ENOMEM. Any thread; pure.
 */
int runenv_parse(const char *log, size_t len, char **json);

/*
 * Appends s to out as one sh word that stands for exactly s: s in single
 * quotes, each ' written '\'' ("" gives ''). Safe for any bytes, newlines,
 * $, ` and \ included. Returns 0 or -ENOMEM. Any thread.
 */
int runenv_sh_quote(const char *s, struct buf *out);

#endif
