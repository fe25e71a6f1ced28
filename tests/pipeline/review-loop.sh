#!/usr/bin/env bash
# A reviewer that keeps saying needs_changes sends the item back to print with the iteration
# raised, until max_iterations is reached; then the item is blocked.
. "$(dirname "$0")/../lib.sh"
ASSESSMENT=needs_changes MAX_ITER=2 std_item 01-build

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
check_status "$M" fix-1
assert_eq 2 "$(status_field "$M" fix-1 iteration)" "iteration when blocked"
assert_eq needs_changes "$(status_field "$M" fix-1 assessment)" "status assessment"
[ -n "$(status_field "$M" fix-1 last_error)" ] || fail "blocked without a reason in last_error"

stages=$(ls "$d/stages")
assert_eq 1 "$(printf '%s\n' "$stages" | grep -Ecx '[0-9]+-plan\.log')" "plan runs"
assert_eq 2 "$(printf '%s\n' "$stages" | grep -Ecx '[0-9]+-print\.log')" "print runs"
assert_eq 2 "$(printf '%s\n' "$stages" | grep -Ecx '[0-9]+-review\.log')" "review runs"
printf '%s\n' "$stages" | grep -Eq -- '-publish\.log$' && fail "publish ran: $stages"
assert_contains "$(cat "$d/change.md")" "iteration 1:" "change.md"
assert_contains "$(cat "$d/change.md")" "iteration 2:" "change.md"
assert_contains "$(cat "$d/review.md")" "iteration 2" "review.md of the last review"

# Validation ran again on the second iteration's head.
assert_eq 2 "$(reg count "$r" recipe=01-build status=validated source=engine)" "01-build runs"
assert_eq 1 "$(reg field "$r" 0 iteration recipe=01-build)" "iteration of the first run"
assert_eq 2 "$(reg field "$r" 1 iteration recipe=01-build)" "iteration of the second run"
assert_head "$(worktree_head fix-1)" "$(reg field "$r" 1 head recipe=01-build)" "head of the second run"
[ "$(reg field "$r" 0 head recipe=01-build)" != "$(reg field "$r" 1 head recipe=01-build)" ] ||
	fail "both validation runs recorded the same head"
assert_eq 2 "$(git -C "$STORE/worktrees/fix-1" rev-list --count main..HEAD)" "commits on the branch"
reg check "$r" "$d" || fail "registry lines are incomplete"
# report.html's timeline groups the runs by iteration: the second print under "iteration 2".
rep=$(cat "$d/report.html")
assert_contains "$rep" '<text class="group" x="4" y="' "report.html"
for it in 1 2; do
	assert_contains "$rep" ">iteration $it</text>" "report.html's timeline"
done
[ "$(grep -o 'title>stage print (run [0-9]*, iteration 2)' <<<"$rep" | wc -l)" = 1 ] ||
	fail "report.html has no bar of the second print in iteration 2"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null &&
	fail "a blocked item was pushed"
exit 0
