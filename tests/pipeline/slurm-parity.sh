#!/usr/bin/env bash
# The same pipeline with the local executor and with Slurm yields the same registry and evidence
# apart from the executor fields (and what differs on every run: times, heads, log hashes and
# paths): validated, failing, blocked (exit 77), timed out and GPU recipes alike, with the same
# statuses, exit codes, signals, notes and granted GPUs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
need_slurm
copy_recipes
recipes="01-build 02-lint 03-fail 04-gpu 06-prereq 07-slow"

make_repo "$T/repo-local"
GPUS=2 PLAN_RECIPES="$recipes" pipeline_with "$T/local.json" "$(plan_stage $recipes)" \
	"$(print_stage)" "$(validate_stage)"
make_store "$T/local.json"
mount_store "$T/mnt-local"
new_item fix-1
ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" "local: state"
local_item=$M/fix-1

STORE="" REPO=""
make_repo "$T/repo-slurm"
PLAN_RECIPES="$recipes" slurm_pipeline "$T/slurm.json" plan print validate
STORE=$T/store-slurm
out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$T/slurm.json" 2>&1) || fail "init: $out"
mount_store "$T/mnt-slurm"
new_item fix-1
ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" "slurm: state"

python3 "$FIXTURES/slurm/compare.py" "$local_item" "$M/fix-1" || fail "local and Slurm runs differ"
assert_eq 6 "$(reg count "$M/fix-1/validation/registry.jsonl" executor=slurm)" "Slurm lines"
assert_eq 6 "$(reg count "$local_item/validation/registry.jsonl" executor=local)" "local lines"
exit 0
