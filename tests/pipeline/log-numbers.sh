#!/usr/bin/env bash
# Logs number themselves by kind: the stage logs of an item are stages/1-..., 2-..., 3-... in
# the order the stages ran, and the recipe logs validation/logs/...-1.log, -2.log, ... in the
# order the recipes started, though stages and recipes share the item's run numbers (the
# stage_started events name each log with its run). A store made before keeps its logs' names:
# tests/unit/store/test-run-begin.c.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint
printf 'Make the greeting say "new".\n' >"$d/brief.md"
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting

# numbers DIR SED : the numbers SED takes out of the names of the logs in DIR, sorted.
numbers()
{
	ls "$1" | sed -En "$2" | sort -n | tr '\n' ' '
}

stages=$(ls "$d/stages")
n=$(printf '%s\n' "$stages" | grep -c '\.log$')
[ "$n" -ge 3 ] || fail "expected at least 3 stage logs: $stages"
assert_eq "$(seq -s ' ' 1 "$n") " "$(numbers "$d/stages" 's/^([0-9]+)-.*\.log$/\1/p')" \
	"stage log numbers ($stages)"
# In the order the stages started.
order=$(grep -o '"type":"stage_started"[^}]*"log":"stages/[^"]*"' "$d/events" |
	sed -E 's/.*"log":"stages\/([0-9]+)-.*/\1/' | tr '\n' ' ')
assert_eq "$(seq -s ' ' 1 "$n") " "$order" "stage logs in the order of stage_started"

recipes=$(ls "$d/validation/logs")
assert_eq "1 2 " "$(numbers "$d/validation/logs" 's/^.*-([0-9]+)\.log$/\1/p')" \
	"recipe log numbers ($recipes)"
# The run numbers the events give are shared: some stage's run number differs from its log's.
runs=$(grep -o '"type":"stage_started"[^}]*' "$d/events" | grep -o '"run":[0-9]*' | cut -d: -f2 |
	sort -n | tr '\n' ' ')
[ "$runs" != "$(seq -s ' ' 1 "$n") " ] || fail "stages and recipes did not share run numbers: $runs"
exit 0
