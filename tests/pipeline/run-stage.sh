#!/usr/bin/env bash
# A stage that fails leaves the item failed with the reason in last_error; "run STAGE" runs a
# stage again (a new run with its own log) and the pipeline advances from it.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 02-lint)" "$(print_stage)" "$(stage_json check - fail.sh)"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 failed
last_error=$(status_field "$M" fix-1 last_error)
[ -n "$last_error" ] || fail "a failed stage left last_error empty"
assert_eq check "$(status_field "$M" fix-1 stage)" "stage of the failure"
assert_contains "$(cat "$d"/stages/*-check.log)" "stage failing on purpose" "check log"

ctl "$M" fix-1 "run plan"
# plan runs again, and the pipeline advances from it as before, up to the failing stage.
wait_for bash -c '[ "$(ls "$1" | grep -Ecx "[0-9]+-check\.log")" = 2 ]' _ "$d/stages"
wait_state "$M" fix-1 failed
assert_eq 2 "$(ls "$d/stages" | grep -Ecx '[0-9]+-plan\.log')" "plan runs"
assert_eq 2 "$(ls "$d/stages" | grep -Ecx '[0-9]+-print\.log')" "print runs"
exit 0
