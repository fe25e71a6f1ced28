#!/usr/bin/env bash
# A review stage without on_needs_changes still judges (SPEC §5): its review.md is read, a
# needs_changes assessment stops the item blocked at review with the reason, and nothing is
# pushed, not even by `run publish`. (Before, such a stage's review.md
# was never read and publish pushed whatever it said.)
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 01-build 02-lint)" "$(print_stage)" "$(validate_stage)" \
	"$(review_stage needs_changes)" "$(publish_stage)"
ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state after a needs_changes review"
assert_eq review "$(status_field "$M" fix-1 stage)" "stage"
assert_eq needs_changes "$(status_field "$M" fix-1 assessment)" "assessment"
head=$(worktree_head fix-1)
assert_eq "$head" "$(status_field "$M" fix-1 assessment_head)" "assessment_head"
assert_contains "$(status_field "$M" fix-1 last_error)" "review: needs_changes at ${head:0:12}" \
	"last_error"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null &&
	fail "a needs_changes review was pushed"
ls "$M/fix-1/stages" | grep -q -- '-publish\.log$' && fail "publish ran after needs_changes"

# run publish cannot jump past it: the gate refuses.
ctl "$M" fix-1 "run publish"
assert_eq blocked "$(settled fix-1)" "state after run publish"
assert_contains "$(status_field "$M" fix-1 last_error)" "assessment is needs_changes, not sound" \
	"last_error of run publish"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null &&
	fail "run publish pushed past a needs_changes review"

exit 0
