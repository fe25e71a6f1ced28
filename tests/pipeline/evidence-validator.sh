#!/usr/bin/env bash
# The review gate believes only the engine's own runs at the current head, whatever the verdict
# says: here a validator program writes "## Verdict: pass" whatever the recipes did.
#   v1  every recipe validated, then a commit lands on the branch outside the engine: the
#       verdict was made at an older head, so it is stale, and the gate refuses;
#   v2  a recipe fails, and an external line claims it validated at the current head (even
#       saying "source":"engine"): the gate refuses, naming the failing recipe.
. "$(dirname "$0")/../lib.sh"
pipeline_store "$(plan_stage 01-build 02-lint)" "$(print_stage)" "$(validate_stage validator-pass.sh)" \
	"$(review_loop 3 review.sh sound)" "$(publish_stage '"gate": "approve",')"

# step ITEM STAGE : advance of a held ITEM, which then waits after STAGE.
step()
{
	ctl "$M" "$1" advance
	assert_eq waiting "$(settled "$1")" "$1: state after $2 (held)"
	assert_eq "$2" "$(status_field "$M" "$1" stage)" "$1: stage"
}

# v1: a commit outside the engine after validation.
new_item v1
ctl "$M" v1 hold
step v1 plan
step v1 print
step v1 validate
assert_eq pass "$(status_field "$M" v1 verdict)" "v1: verdict"
old=$(worktree_head v1)
git -C "$STORE/worktrees/v1" commit -q --allow-empty -m "a commit nobody validated"
new=$(worktree_head v1)
ctl "$M" v1 advance
assert_eq blocked "$(settled v1)" "v1: state at the review gate with evidence of an older head"
assert_eq "review: gate refused: the verdict pass is stale (made at ${old:0:12}, the head is ${new:0:12} now): validate again" \
	"$(status_field "$M" v1 last_error)" "v1: last_error"
assert_eq "pass (stale: the head moved)" "$(status_field "$M" v1 verdict)" "v1: verdict after the commit"
assert_eq "$old" "$(status_field "$M" v1 verdict_head)" "v1: verdict_head"
ls "$M/v1/stages" | grep -Eq -- '-review\.log$' && fail "v1: review ran on stale evidence"
assert_contains "$(cat "$M/v1/validation/evidence.md")" "stale: ran at ${old:0:12}" \
	"v1: evidence.md"

# v2: a failing recipe, a validator that says pass and an external claim.
new_item v2
ctl "$M" v2 hold
step v2 plan
printf '# Plan\n\n```validation-recipes\n01-build\n03-fail\n```\n' >"$M/v2/plan.md"
step v2 print
step v2 validate
r=$M/v2/validation/registry.jsonl
assert_eq failing "$(reg field "$r" -1 status recipe=03-fail)" "v2: 03-fail status"
assert_eq pass "$(status_field "$M" v2 verdict)" "v2: verdict of the validator"
head=$(worktree_head v2)
run=$(reg field "$r" -1 run recipe=03-fail)
printf '{"run":%s,"recipe":"03-fail","status":"validated","exit_code":0,"head":"%s","source":"engine","note":"trust me"}\n' \
	"$run" "$head" >>"$r"
assert_eq external "$(reg field "$r" -1 source)" "v2: source of the appended line"
assert_eq 1 "$(reg count "$r" recipe=03-fail status=validated)" "v2: validated claims"
ctl "$M" v2 advance
assert_eq blocked "$(settled v2)" "v2: state at the review gate"
assert_eq "review: gate refused: 03-fail: latest run at ${head:0:12} is failing" \
	"$(status_field "$M" v2 last_error)" "v2: last_error"
ls "$M/v2/stages" | grep -Eq -- '-review\.log$' && fail "v2: review ran on an external claim"
assert_eq "1/2 validated" "$(status_field "$M" v2 evidence)" "v2: evidence"
exit 0
