#!/usr/bin/env bash
# run STAGE on a finished item makes STAGE and every later stage stale (docs/guide.md "Stale
# results"): their results (verdict, assessment) are cleared and their gates must be passed
# again; a print also makes the evidence of the old head stale and drops approve, and an approve
# is used up by the publish it let through.
#   run publish   waits for a new approve;
#   run validate  validates again, reviews again, then waits for a new approve;
#   run print     a new commit: validated and reviewed again at the new head, a new approve
#                 publishes the new head.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint

runs()
{
	ls "$d/stages" | grep -Ecx "[0-9]+-$1\.log" || true
}

ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state at the publish gate"
ctl "$M" fix-1 approve
assert_eq done "$(settled fix-1)" "state after approve"
head1=$(worktree_head fix-1)

# run publish: the approve was used.
ctl "$M" fix-1 "run publish"
assert_eq waiting "$(settled fix-1)" "state after run publish"
assert_eq "publish: waiting for approve" "$(status_field "$M" fix-1 last_error)" "last_error"
assert_eq 1 "$(runs publish)" "publish runs before the new approve"
ctl "$M" fix-1 approve
assert_eq done "$(settled fix-1)" "state after the second approve"
assert_eq 2 "$(runs publish)" "publish runs"

# run validate: the recipes run again at the same head, review follows.
ctl "$M" fix-1 "run validate"
assert_eq waiting "$(settled fix-1)" "state after run validate"
assert_eq 4 "$(reg count "$r" source=engine)" "registry lines after run validate"
assert_eq 2 "$(runs review)" "review runs after run validate"
assert_eq 2 "$(runs publish)" "publish runs after run validate"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict after run validate"
assert_eq sound "$(status_field "$M" fix-1 assessment)" "assessment after run validate"

# run print: a new head, validated and reviewed again.
ctl "$M" fix-1 "run print"
assert_eq waiting "$(settled fix-1)" "state after run print"
head2=$(worktree_head fix-1)
[ "$head2" != "$head1" ] || fail "run print made no new commit"
assert_eq 6 "$(reg count "$r" source=engine)" "registry lines after run print"
for rc in 01-build 02-lint; do
	assert_eq "$head2" "$(reg field "$r" -1 head recipe=$rc)" "head of the last $rc run"
done
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence at the new head"
assert_not_contains "$(cat "$d/validation/evidence.md")" "stale" "evidence.md at the new head"
assert_eq 3 "$(runs review)" "review runs after run print"
assert_eq "publish: waiting for approve" "$(status_field "$M" fix-1 last_error)" "last_error"
assert_eq "$head1" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" "pushed head"
ctl "$M" fix-1 approve
assert_eq done "$(settled fix-1)" "state after the third approve"
assert_eq "$head2" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" "pushed head"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
