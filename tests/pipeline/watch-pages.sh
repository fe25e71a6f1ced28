#!/usr/bin/env bash
# report.html and index.html are views the engine changes on its own: whenever it reports
# status, evidence.md or change.diff of an item changed, inotifywait sees MODIFY and CLOSE_WRITE
# of the item's report.html, and of index.html when status changed or an item was archived. A
# watcher that re-reads the page after each CLOSE_WRITE sees the final state in it, and the
# events are seen within the bound while the item runs, not only at its end.
. "$(dirname "$0")/../lib.sh"
export GATE_DIR=$T/gates # inherited by the daemon, and so by its recipes
mkdir -p "$GATE_DIR"
pipeline_item "$(plan_stage 09-gated)" "$(validate_stage)"
new_item fix-2
ev=$T/events.txt

bg inotifywait -m -e modify,close_write --format '%e %w%f' "$M" "$d" >>"$ev" 2>"$T/inotify.err"
wait_for grep -q 'Watches established' "$T/inotify.err"
# A reader that re-reads report.html after each CLOSE_WRITE of it, as a watcher script would.
bg bash -c 'inotifywait -m -e close_write --format %f "$1" 2>"$2" |
	while read -r f; do
		[ "$f" = report.html ] && grep -o "<th>state</th><td class=\"[^\"]*\">[a-z]*</td>" "$1/report.html"
	done' _ "$d" "$T/reader.err" >"$T/states.txt"
wait_for grep -q 'Watches established' "$T/reader.err"

# saw EVENT PATH : inotifywait reported EVENT for MNT/PATH.
saw()
{
	grep -Eq "^([A-Z_]+,)*$1(,[A-Z_]+)* $M/$2\$" "$ev"
}

ctl "$M" fix-1 advance
# While the gated recipe waits, the report already showed the item running.
wait_for grep -q '>running</td>' "$T/states.txt"
wait_for saw MODIFY 'fix-1/report\.html'
wait_for saw CLOSE_WRITE 'fix-1/report\.html'
wait_for saw MODIFY 'index\.html'
wait_for saw CLOSE_WRITE 'index\.html'
touch "$GATE_DIR/go-1" "$GATE_DIR/go-2" "$GATE_DIR/go-3"
wait_state "$M" fix-1 done
wait_for grep -q '>done</td>' "$T/states.txt"
assert_contains "$(cat "$d/report.html")" '<td class="st s-validated">validated</td>' \
	"report.html after the run"

# Archiving fix-2 changes the index, not through any status of a live item.
: >"$ev"
ctl "$M" fix-2 archive
wait_for saw MODIFY 'index\.html'
assert_not_contains "$(cat "$M/index.html")" 'fix-2/report.html' "index.html after archive"
exit 0
