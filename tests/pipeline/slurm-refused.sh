#!/usr/bin/env bash
# Slurm refusing a job is an answer, not a hang: a recipe submitted to a partition that does not
# exist, and a GPU recipe that needs more GPUs than any node of the partition has, are recorded
# blocked at once with sbatch's reason on the registry line and in the log, without an exit
# code; a GPU recipe the partition can take still runs. So is one whose shared directory has a
# '%' in its path, which sbatch would expand. (The local GPU pool does not count
# under Slurm: the pipeline declares no GPUs.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
SLURM_EXECUTOR='{"kind": "slurm", "partition": "nosuch", "poll_ms": 200}' slurm_item 01-build

ctl "$M" fix-1 advance
settled fix-1 >/dev/null
assert_eq 1 "$(reg count "$r" recipe=01-build status=blocked source=engine)" "blocked lines"
note=$(reg field "$r" 0 note recipe=01-build)
assert_contains "$note" "Slurm refused the job: " "01-build note"
assert_contains "$note" "Invalid partition name specified" "01-build note"
assert_eq null "$(reg field "$r" 0 exit_code recipe=01-build)" "01-build exit code"
assert_eq slurm "$(reg field "$r" 0 executor recipe=01-build)" "01-build executor"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=01-build)")" \
	"# not run: Slurm refused the job" "01-build log"
assert_eq blocked "$(status_field "$M" fix-1 verdict)" "verdict"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# The default partition: 3 GPUs cannot be had on a node with 2; 1 can.
set_executor partition null
ctl "$M" fix-1 "rerun 11-gpus3"
settled fix-1 >/dev/null
assert_eq 1 "$(reg count "$r" recipe=11-gpus3 status=blocked source=engine)" "11-gpus3 blocked"
assert_contains "$(reg field "$r" 0 note recipe=11-gpus3)" \
	"Slurm refused the job: Batch job submission failed: Requested node configuration is not available" \
	"11-gpus3 note"
ctl "$M" fix-1 "rerun 04-gpu"
settled fix-1 >/dev/null
assert_eq 1 "$(reg count "$r" recipe=04-gpu status=validated source=engine)" "04-gpu validated"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# A shared directory whose path sbatch would expand (%j is the job id) is refused before sbatch.
set_executor shared_dir "\"$T/out 50%j\""
ctl "$M" fix-1 "rerun 02-lint"
settled fix-1 >/dev/null
assert_eq blocked "$(reg field "$r" -1 status recipe=02-lint)" "02-lint status"
assert_contains "$(reg field "$r" -1 note recipe=02-lint)" "has a '%' in its path" "02-lint note"
exit 0
