#!/usr/bin/env bash
# Each kind of change the engine makes by itself reaches inotifywait -m -r as the same events a
# write through the mount gives: a new stage or recipe log is CREATEd, then MODIFYed while it
# grows (before its run ends); status, status.json, events (the item's and the root's),
# registry.jsonl, evidence.md, change.diff and the engine-written change-validation.md get
# MODIFY and CLOSE_WRITE; archiving by `archive` in ctl gives DELETE,ISDIR of the item and
# CREATE,ISDIR under .archive/. Each watched content is already the new one when its event
# arrives: the watcher's own read after the CLOSE_WRITE of status sees the final state. The
# replays leave every mode as it was for everyone else: status 444, stages/ and validation/logs/
# 555 (pipeline/watch-engine-modes runs this with a daemon that does not override modes, whose
# notifier alone is told the owner may write them).
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 01-build 08-stream)" "$(print_stage)" "$(validate_stage)"
ev=$T/events.txt

bg inotifywait -m -r -e create,modify,close_write,moved_to,delete --format '%e %w%f' "$M" \
	>"$ev" 2>"$T/inotify.err"
wait_for grep -q 'Watches established' "$T/inotify.err"

# A reader that re-reads status after each CLOSE_WRITE of it, as a watcher script would.
bg bash -c 'inotifywait -m -e close_write --format %f "$1" 2>/dev/null |
	while read -r f; do [ "$f" = status ] && grep "^state:" "$1/status"; done' _ "$d" \
	>"$T/states.txt"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done

# saw EVENT PATH_REGEX : inotifywait reported EVENT (one of the comma-separated flags) for a
# path matching PATH_REGEX (relative to the mount).
saw()
{
	grep -Eq "^([A-Z_]+,)*$1(,[A-Z_]+)* $M/$2\$" "$ev"
}
for f in status status.json events validation/registry.jsonl validation/evidence.md \
	change.diff change-validation.md; do
	wait_for saw MODIFY "fix-1/${f//./\\.}"
	wait_for saw CLOSE_WRITE "fix-1/${f//./\\.}"
done
wait_for saw CLOSE_WRITE events
for log in 'stages/[0-9]+-plan\.log' 'stages/[0-9]+-print\.log' 'stages/[0-9]+-validate\.log' \
	'validation/logs/[^/]+-01-build-[0-9]+\.log' 'validation/logs/[^/]+-08-stream-[0-9]+\.log'; do
	wait_for saw CREATE "fix-1/$log"
	wait_for saw MODIFY "fix-1/$log"
done

# The streaming recipe's log was reported growing several times, not once at its end.
n=$(grep -Ec "^MODIFY $M/fix-1/validation/logs/[^/]+-08-stream-[0-9]+\.log\$" "$ev" || true)
[ "$n" -ge 3 ] || fail "the growing log was reported modified only $n times"

# The status reader saw the final state on its own read after an event.
wait_for grep -qx 'state: done' "$T/states.txt"

# What stat shows after the replays: the modes everyone is told.
assert_eq "444 555 555 444" "$(stat -c %a "$d/status" "$d/stages" "$d/validation/logs" \
	"$d"/validation/logs/*-01-build-*.log | tr '\n' ' ' | sed 's/ $//')" \
	"modes of status, stages/, validation/logs/ and a recipe log after the replays"

echo archive >"$d/ctl"
wait_for saw 'DELETE' 'fix-1'
wait_for saw 'CREATE' '\.archive/fix-1'
grep -Eq "^DELETE,ISDIR $M/fix-1\$" "$ev" || fail "the archived item's DELETE is not ISDIR"
[ -d "$M/.archive/fix-1" ] || fail ".archive/fix-1 missing"
[ ! -e "$M/fix-1" ] || fail "fix-1 still there after archive"
cmp "$M/.archive/fix-1/plan.md" "$M/.archive/fix-1/.history/plan.md@1" || fail "the archived plan.md differs from its revision"
exit 0
