#!/usr/bin/env bash
# `packetfs log STORE ITEM PATH` tells who wrote what when (SPEC §7): each revision of PATH
# on its own line with its path@rev, a UTC time within the test, the writer's uid, pid and
# command name (python3 for a python program that prints its own pid, bash for a shell), and
# the stage for a write made by a pipeline stage program (plan writes plan.md, print appends
# to change.md), none for a write made outside the pipeline. Without PATH it lists the
# revisions of every document and the item's events; an unknown item is an error. A reader's
# close while a writer holds bytes not committed makes no revision of them: the writer's close
# does, named for the writer.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 02-lint)" "$(print_stage)"
uid=$(id -u)
t0=$(date -u +%s)

# rev_line LOG PATH REV : the line of LOG about PATH@REV (exactly one).
rev_line()
{
	local lines
	lines=$(printf '%s\n' "$1" | grep -E "(^|[^[:alnum:]_./-])$2@$3([^0-9]|\$)") ||
		fail "packetfs log has no line for $2@$3: $1"
	[ "$(printf '%s\n' "$lines" | grep -c .)" = 1 ] || fail "packetfs log has several lines for $2@$3: $lines"
	printf '%s\n' "$lines"
}

# has_field LINE NAME VALUE : LINE shows NAME with VALUE (NAME=VALUE, NAME: VALUE, NAME VALUE).
has_field()
{
	printf '%s\n' "$1" | grep -Eq "(^|[^[:alnum:]_])$2[=: ]+$3([^[:alnum:]_.-]|\$)"
}

# in_window LINE : LINE holds an RFC 3339 UTC time between the test's start and now.
in_window()
{
	local ts t now
	ts=$(printf '%s\n' "$1" | grep -Eo '[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|\+00:00)' |
		head -n 1) || fail "no UTC time in the log line: $1"
	t=$(date -u -d "$ts" +%s) || fail "cannot read the time '$ts' of: $1"
	now=$(date -u +%s)
	[ "$t" -ge "$t0" ] && [ "$t" -le "$now" ] || fail "time $ts is not within the test ($t0..$now): $1"
}

# A python program writes notes.md and prints its own pid.
pid=$(python3 -c '
import os, sys
with open(sys.argv[1], "w") as f:
    f.write("written by python\n")
print(os.getpid())
' "$d/notes.md") || fail "python could not write notes.md"
# A shell appends to it and prints its own pid.
sh_pid=$(bash -c 'echo "appended by bash" >>"$1"; echo $$' _ "$d/notes.md") ||
	fail "bash could not append to notes.md"
assert_file_eq "$d/notes.md" $'written by python\nappended by bash\n'

log=$("$PFS" log "$STORE" fix-1 notes.md 2>&1) || fail "packetfs log fix-1 notes.md failed: $log"
r=$(last_rev "$d" notes.md)
[ -n "$r" ] && [ "$r" -ge 2 ] || fail "notes.md has no second revision: $(ls "$d/.history")"
assert_file_eq "$d/.history/notes.md@$r" $'written by python\nappended by bash\n'
py_rev=$(revs "$d" notes.md | tail -n 2 | head -n 1)
assert_file_eq "$d/.history/notes.md@$py_rev" $'written by python\n'

line=$(rev_line "$log" notes.md "$py_rev")
has_field "$line" pid "$pid" || fail "python's write is not shown with its pid $pid: $line"
has_field "$line" uid "$uid" || fail "python's write is not shown with uid $uid: $line"
has_field "$line" comm python3 || fail "python's write is not shown with comm python3: $line"
has_field "$line" stage '(plan|print)' && fail "a write outside the pipeline is shown with a stage: $line"
in_window "$line"

line=$(rev_line "$log" notes.md "$r")
has_field "$line" pid "$sh_pid" || fail "bash's append is not shown with its pid $sh_pid: $line"
has_field "$line" uid "$uid" || fail "bash's append is not shown with uid $uid: $line"
has_field "$line" comm bash || fail "bash's append is not shown with comm bash: $line"
in_window "$line"
printf '%s\n' "$log" | grep -q 'change\.md\|plan\.md' && fail "packetfs log of notes.md lists other documents: $log"

# A reader that opens and closes the document while a writer holds bytes it has not committed
# commits nothing of them: the writer's close makes the one revision, named for the writer.
before=$(revs "$d" notes.md | wc -l)
python3 - "$d/notes.md" "$T/w-ready" "$T/w-go" >"$T/w.pid" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"held by a writer\n")
print(os.getpid(), flush=True)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.02)
os.close(fd)
PY
writer=$!
wait_for test -e "$T/w-ready"
assert_file_eq "$d/notes.md" $'written by python\nappended by bash\nheld by a writer\n'
assert_eq "$before" "$(revs "$d" notes.md | wc -l)" "notes.md's revisions after a reader's close"
touch "$T/w-go"
wait "$writer" || fail "the writer holding notes.md failed"
assert_eq $((before + 1)) "$(revs "$d" notes.md | wc -l)" "notes.md's revisions after the writer's close"
log=$("$PFS" log "$STORE" fix-1 notes.md 2>&1) || fail "packetfs log fix-1 notes.md failed: $log"
line=$(rev_line "$log" notes.md "$(last_rev "$d" notes.md)")
has_field "$line" pid "$(cat "$T/w.pid")" ||
	fail "the held writer's revision is not shown with its pid $(cat "$T/w.pid"): $line"
has_field "$line" comm python3 || fail "the held writer's revision is not shown with comm python3: $line"

# Writes by stage programs: plan writes plan.md, print appends to change.md.
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
log=$("$PFS" log "$STORE" fix-1 plan.md 2>&1) || fail "packetfs log fix-1 plan.md failed: $log"
line=$(rev_line "$log" plan.md "$(last_rev "$d" plan.md)")
has_field "$line" stage plan || fail "plan.md written by the plan stage is not shown with stage plan: $line"
has_field "$line" uid "$uid" || fail "the plan stage's write is not shown with uid $uid: $line"
has_field "$line" comm bash || fail "the plan stage's write (a bash script) is not shown with comm bash: $line"
in_window "$line"
log=$("$PFS" log "$STORE" fix-1 change.md 2>&1) || fail "packetfs log fix-1 change.md failed: $log"
line=$(rev_line "$log" change.md "$(last_rev "$d" change.md)")
has_field "$line" stage print || fail "change.md written by the print stage is not shown with stage print: $line"

# Without PATH: the revisions of every document, and the item's events.
log=$("$PFS" log "$STORE" fix-1 2>&1) || fail "packetfs log fix-1 failed: $log"
for p in notes.md@"$py_rev" notes.md@"$r" plan.md@"$(last_rev "$d" plan.md)" change.md@"$(last_rev "$d" change.md)"; do
	rev_line "$log" "${p%@*}" "${p##*@}" >/dev/null
done
while IFS= read -r ev; do
	[ -n "$ev" ] || continue
	printf '%s\n' "$log" | grep -qxF -- "$ev" || fail "packetfs log fix-1 lacks the event $ev: $log"
done <"$d/events"

out=$("$PFS" log "$STORE" no-such-item 2>&1) && fail "packetfs log of an unknown item succeeded: $out"
assert_contains "$out" "packetfs: " "error of packetfs log for an unknown item"
exit 0
