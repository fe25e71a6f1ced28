/*
 * exec.h - the processes' layer: everything packetfs runs outside itself,
 * and what the layers above may use of it, one header per executor.
 *
 * It knows nothing of items, stages or the store: it is given argument
 * vectors, environments, paths and a libuv loop, and answers with exit
 * statuses, captured output and its own errors. It may use format.h
 * (slurm.h and gpu.h take the configuration) and util.h, nothing above.
 * Each header states its own contract and threads.
 *
 *   proc.h    - the one start of a program (proc_start: posix_spawn, or
 *               vfork for another user's credentials); every child
 *               process of packetfs begins there
 *   capture.h - run a program to its end with a deadline, capturing its
 *               output (the one way to run a short child synchronously:
 *               nvidia-smi, scontrol at recovery, git bundle, fusermount3)
 *   runner.h  - child processes in their own sessions on a loop (stages,
 *               recipes); slurm_cmd.c runs the Slurm commands on the loop
 *   slurm.h   - the Slurm executor: sbatch, squeue, scontrol, scancel
 *   gpu.h     - the GPU pool: slots, nvidia-smi, leaks held back
 *   cenv_probe.h - compute-env.md's questions: the host, sinfo, the probes
 *   runenv_local.c - the probe of this machine, declared in runenv.h
 */
#ifndef PACKETFS_EXEC_H
#define PACKETFS_EXEC_H

#include "format.h"
#include "proc.h"
#include "capture.h"
#include "gpu.h"
#include "cenv_probe.h"
#include "runner.h"
#include "slurm.h"

#endif
