#!/usr/bin/env bash
# The review loop at its edges (max_iterations 2; the reviewer's assessment per iteration comes
# from the item's review-script document):
#   e1  needs_changes, then sound at the last allowed iteration: the item reaches publish;
#   e2  needs_changes at the last allowed iteration: blocked with the reason, and neither
#       advance nor approve gets it past the publish gate;
#   e3  needs_changes while held: the item waits at print with the iteration raised and the
#       assessment and verdict cleared; release runs print, validate and review again.
. "$(dirname "$0")/../lib.sh"
pipeline_store "$(plan_stage 01-build)" "$(print_stage)" "$(validate_stage)" \
	"$(review_loop 2 review-scripted.sh)" "$(publish_stage '"gate": "approve",')"

# runs ITEM STAGE : how many times STAGE ran for ITEM.
runs()
{
	ls "$M/$1/stages" | grep -Ecx "[0-9]+-$2\.log" || true
}

# e1: sound at the last allowed iteration.
new_item e1
printf 'needs_changes\nsound\n' >"$M/e1/review-script"
ctl "$M" e1 advance
assert_eq waiting "$(settled e1)" "e1: state"
assert_eq 2 "$(status_field "$M" e1 iteration)" "e1: iteration"
assert_eq sound "$(status_field "$M" e1 assessment)" "e1: assessment"
assert_eq "publish: waiting for approve" "$(status_field "$M" e1 last_error)" "e1: last_error"
assert_eq 2 "$(runs e1 print)" "e1: print runs"
assert_eq 2 "$(runs e1 review)" "e1: review runs"
r=$M/e1/validation/registry.jsonl
assert_eq 2 "$(reg count "$r" recipe=01-build status=validated)" "e1: validations"
assert_eq "$(worktree_head e1)" "$(reg field "$r" -1 head recipe=01-build)" "e1: head of the last run"

# e2: needs_changes at the last allowed iteration.
new_item e2
printf 'needs_changes\nneeds_changes\nsound\n' >"$M/e2/review-script"
ctl "$M" e2 advance
assert_eq blocked "$(settled e2)" "e2: state"
assert_eq 2 "$(status_field "$M" e2 iteration)" "e2: iteration"
assert_eq review "$(status_field "$M" e2 stage)" "e2: stage"
assert_eq needs_changes "$(status_field "$M" e2 assessment)" "e2: assessment"
assert_eq "review: needs_changes after 2 iterations (max_iterations 2)" \
	"$(status_field "$M" e2 last_error)" "e2: last_error"
assert_eq 2 "$(runs e2 print)" "e2: print runs"
assert_eq 2 "$(runs e2 review)" "e2: review runs"
ctl "$M" e2 advance
assert_eq blocked "$(settled e2)" "e2: state after advance"
assert_eq "publish: gate refused: assessment is needs_changes, not sound" \
	"$(status_field "$M" e2 last_error)" "e2: last_error after advance"
ctl "$M" e2 approve
assert_eq blocked "$(settled e2)" "e2: state after approve"
ctl "$M" e2 advance
assert_eq blocked "$(settled e2)" "e2: state after approve and advance"
assert_eq 0 "$(runs e2 publish)" "e2: publish runs"
assert_eq 2 "$(runs e2 print)" "e2: print runs after advance"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/e2 >/dev/null &&
	fail "e2: a blocked item was pushed"

# e3: needs_changes while held.
new_item e3
printf 'needs_changes\n' >"$M/e3/review-script"
ctl "$M" e3 hold
for stage in plan print validate review; do
	ctl "$M" e3 advance
	assert_eq waiting "$(settled e3)" "e3: state after $stage (held)"
done
assert_eq print "$(status_field "$M" e3 stage)" "e3: stage after needs_changes"
assert_eq 2 "$(status_field "$M" e3 iteration)" "e3: iteration after needs_changes"
assert_eq "" "$(status_field "$M" e3 assessment)" "e3: assessment after needs_changes"
assert_eq "" "$(status_field "$M" e3 verdict)" "e3: verdict after needs_changes"
assert_eq 1 "$(runs e3 print)" "e3: print runs while held"
ctl "$M" e3 release
assert_eq waiting "$(settled e3)" "e3: state after release"
assert_eq publish "$(status_field "$M" e3 stage)" "e3: stage after release"
assert_eq 2 "$(runs e3 print)" "e3: print runs"
assert_eq 2 "$(runs e3 review)" "e3: review runs"
assert_eq sound "$(status_field "$M" e3 assessment)" "e3: assessment"
assert_eq pass "$(status_field "$M" e3 verdict)" "e3: verdict"
exit 0
