#!/usr/bin/env bash
# Changes the engine makes are visible to inotify watchers on the mount like changes made
# through it: a new stage log appears in stages/, status changes, the item's events grow.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(stage_run plan.sh 02-lint), \"produces\": [\"plan.md\"]}"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1
mkdir -p "$T/w"

bg inotifywait -m -r -e create,modify,close_write,moved_to --format '%e %w%f' "$d" \
	>"$T/w/item.txt" 2>"$T/w/item.err"
wait_for grep -q 'Watches established' "$T/w/item.err"
bg tail -n 0 -f "$d/events" >"$T/w/tail.txt"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done

# seen PATH_REGEX : an event that changes content or adds a name was reported for the path.
seen()
{
	grep -Eq "^[A-Z_,]*(CREATE|MODIFY|CLOSE_WRITE|MOVED_TO)[A-Z_,]* $1\$" "$T/w/item.txt"
}
wait_for seen "$d/status"
wait_for seen "$d/events"
wait_for seen "$d/plan.md"
wait_for seen "$d/stages/[0-9]+-plan\.log"
wait_for grep -q . "$T/w/tail.txt"
exit 0
