#!/usr/bin/env bash
# A stage that exits 0 without writing its "produces" file fails: the item is failed with the
# reason (naming the file) in last_error, and the pipeline does not advance.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(stage_json plan plan.md publish.sh)" "$(print_stage)"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 failed
assert_contains "$(status_field "$M" fix-1 last_error)" "plan.md" "last_error"
ls "$d/stages" | grep -Eq -- '-print\.log$' && fail "print ran after a failed plan"

exit 0
