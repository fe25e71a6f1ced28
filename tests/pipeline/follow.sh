#!/usr/bin/env bash
# `packetfs follow MNT/ITEM` prints the item's logs as it runs: a stage's output appears while
# the stage still runs, each log under a header line "==> PATH <==" (stage logs, then the
# recipes' logs as they start), and it ends by itself once the item stops running, with the
# state. While a stage runs: tests/pipeline/follow-running.sh.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint
printf 'Make the greeting say "new".\n' >"$d/brief.md"

"$PFS" follow "$d" >"$T/early" 2>&1 || fail "follow of a new item failed: $(cat "$T/early")"
assert_eq "==> state: new <==" "$(cat "$T/early")" "follow of an item that never ran"

# follow starts after the advance: started before it, follow may read the state "new" and end
# at once, as it should for an item that never ran (above). A write to ctl has been applied when
# it returns, so follow sees the item running, or already waiting with all its logs.
ctl "$M" fix-1 advance
st=$(status_field "$M" fix-1 state)
case "$st" in queued | running | waiting) ;; *) fail "state '$st' right after advance" ;; esac
"$PFS" follow "$d" >"$T/out" 2>"$T/err" &
fpid=$!
wait_state "$M" fix-1 waiting
wait_gone "$fpid"
wait "$fpid" || fail "follow failed: $(cat "$T/err")"
out=$(cat "$T/out")
for log in "$d"/stages/*.log "$d"/validation/logs/*.log; do
	rel=${log#"$d/"}
	grep -qxF "==> $rel <==" "$T/out" || fail "no header for $rel in: $out"
	assert_contains "$out" "$(head -n 1 "$log")" "follow output"
done
assert_contains "$out" "plan: named 01-build 02-lint for fix-1" "follow output"
assert_eq "==> state: waiting <==" "$(tail -n 1 "$T/out")" "follow's last line"
# Stage logs before recipe logs: the plan's header comes before every recipe log's header.
first_recipe=$(grep -n '^==> validation/logs/' "$T/out" | head -n 1 | cut -d: -f1)
plan_at=$(grep -n '^==> stages/1-plan.log <==' "$T/out" | cut -d: -f1)
[ -n "$first_recipe" ] && [ "$plan_at" -lt "$first_recipe" ] || fail "order of the logs: $out"

exit 0
