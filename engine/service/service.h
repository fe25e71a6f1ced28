/*
 * service.h - the leaf services' layer: what the pipeline and the
 * namespace above may use of it, one header per service.
 *
 * A service knows nothing of items, stages or the store: it is given paths,
 * strings and a libuv loop, and answers in its own terms. It may use
 * util.h and nothing above it; services call one another only where the
 * header says so (slurm.h and gpu.h take the configuration, slurm.h the
 * runner's types). Each header states its own contract and threads.
 *
 *   config.h    - pipeline.json: parsing and validating the configuration
 *   ctlline.h   - the syntax of ctl's command lines
 *   recipe.h    - the recipe catalog and the plan's recipe list
 *   registry.h  - registry.jsonl lines, the verdict, evidence.md's text
 *   testcount.h - how many tests a run ran: a runner's summary, JUnit XML
 *   repo.h      - git through libgit2: branches, worktrees, heads, diffs
 *   push.h      - a publish's `git push`: its environment and its errors
 *   runner.h    - child processes in their own process groups on a loop
 *   runenv.h    - the environment a recipe run ran in (its log header)
 *   slurm.h     - the Slurm executor: sbatch, squeue, scontrol, scancel
 *   gpu.h       - the GPU pool: slots, nvidia-smi, leaks held back
 */
#ifndef PACKETFS_SERVICE_H
#define PACKETFS_SERVICE_H

#include "config.h"
#include "ctlline.h"
#include "gpu.h"
#include "push.h"
#include "recipe.h"
#include "registry.h"
#include "repo.h"
#include "runenv.h"
#include "runner.h"
#include "slurm.h"
#include "testcount.h"

#endif
