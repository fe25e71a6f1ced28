#!/usr/bin/env bash
# A stage that exits 0 without writing its "produces" file fails: the item is failed with the
# reason (naming the file) in last_error, and the pipeline does not advance.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(stage_run publish.sh), \"produces\": [\"plan.md\"]}" \
	"{\"name\": \"print\", \"run\": $(stage_run print.sh), \"produces\": [\"change.md\"]}"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1

ctl "$M" fix-1 advance
wait_state "$M" fix-1 failed
assert_contains "$(status_field "$M" fix-1 last_error)" "plan.md" "last_error"
ls "$d/stages" | grep -Eq -- '-print\.log$' && fail "print ran after a failed plan"

exit 0
