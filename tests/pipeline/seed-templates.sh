#!/usr/bin/env bash
# The demo's three seed templates (examples/pipeline.json.in) in one store, each end to end with
# the example stage programs on the sample project: a brief's header lines, carried into plan.md
# by plan.sh, send its item down the path they name.
#   seed-inv   Template: debug-investigation: validate runs the reproducing recipes at the base,
#              investigate.sh writes report.md; no change, the branch does not move.
#   seed-impl  Route: implementation -> change-build-deploy-measure: print, validate, review,
#              publish (behind approve, open-pr.sh --dry-run), the branch pushed.
#   seed-pr    Route: review, Review request: 1 -> existing-request: adopt-request.sh fetches
#              origin pull/1/head as the item's head, validate and review judge it, and
#              answer-request.sh --dry-run answers naming that commit; nothing is pushed.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../sample.sh
. "$TESTS_DIR/sample.sh"
# shellcheck disable=SC2034 # read by wait_state (lib.sh)
WAIT_BOUND=${PFS_WAIT_BOUND:-120}
sample_setup
base=$(git -C "$REPO" rev-parse main)

# Somebody's pull request 1: a comment in the library, on origin as refs/pull/1/head.
git -C "$REPO" checkout -q -b contrib
printf '/* strkit: small string helpers. */\n' >"$T/head.c"
cat "$REPO/src/strkit.c" >>"$T/head.c"
cp "$T/head.c" "$REPO/src/strkit.c"
git -C "$REPO" -c user.name=contributor -c user.email=c@example.invalid commit -qam "strkit: a file comment"
pr_head=$(git -C "$REPO" rev-parse HEAD)
git -C "$REPO" push -q origin contrib:refs/pull/1/head
git -C "$REPO" checkout -q main
git -C "$REPO" branch -q -D contrib

make_store "$T/pipeline.json"
mount_store
# brief ITEM HEADER_LINE... : a new item whose brief opens with the header lines.
brief()
{
	local item=$1
	shift
	new_item "$item"
	{
		printf '# Add str_reverse to strkit\n\n'
		printf '%s\n' "$@"
		printf '\nstrkit needs a function that reverses a string in place and returns it.\n'
	} >"$M/$item/brief.md"
	ctl "$M" "$item" advance
}
brief seed-inv 'Template: debug-investigation' 'Engine: vllm'
brief seed-impl 'Route: implementation'
brief seed-pr 'Route: review' 'Review request: 1'

# The investigation: a report, no change.
wait_state "$M" seed-inv done
assert_eq debug-investigation "$(status_field "$M" seed-inv template)" "seed-inv: template"
assert_eq investigate "$(status_field "$M" seed-inv stage)" "seed-inv: stage"
assert_eq vllm "$(status_field "$M" seed-inv engine)" "seed-inv: engine"
assert_contains "$(cat "$M/seed-inv/plan.md")" "Template: debug-investigation" "seed-inv: plan.md header"
assert_not_contains "$(cat "$M/seed-inv/plan.md")" "04-diff-integrity" "seed-inv: no change recipes"
report=$(cat "$M/seed-inv/report.md")
assert_contains_each "$report" "## Hypotheses" "## What ran" "01-build" "## Outcome" \
	"not reproduced: every named recipe validates at the head" "engine \`vllm\`"
assert_eq "$base" "$(git -C "$REPO" rev-parse packetfs/seed-inv)" "seed-inv: the branch did not move"

# The change, behind approve.
wait_state "$M" seed-impl waiting
assert_eq change-build-deploy-measure "$(status_field "$M" seed-impl template)" "seed-impl: template"
assert_eq implementation "$(status_field "$M" seed-impl route)" "seed-impl: route"
assert_eq publish "$(status_field "$M" seed-impl stage)" "seed-impl: stage before approve"
ctl "$M" seed-impl approve
wait_state "$M" seed-impl done
assert_eq "$(git -C "$REPO" rev-parse packetfs/seed-impl)" \
	"$(git -C "$ORIGIN" rev-parse packetfs/seed-impl)" "seed-impl: the published head"

# The existing request: judged at its head, answered, pushed nowhere.
wait_state "$M" seed-pr done
assert_eq existing-request "$(status_field "$M" seed-pr template)" "seed-pr: template"
assert_eq 1 "$(status_field "$M" seed-pr review_request)" "seed-pr: review_request"
assert_eq "$pr_head" "$(git -C "$REPO" rev-parse packetfs/seed-pr)" "seed-pr: the request's head"
assert_eq pass "$(status_field "$M" seed-pr verdict)" "seed-pr: verdict"
assert_eq sound "$(status_field "$M" seed-pr assessment)" "seed-pr: assessment"
assert_contains "$(cat "$M/seed-pr/answer.json")" "\"head\": \"$pr_head\"" "seed-pr: answer.json"
assert_contains_each "$(cat "$M"/seed-pr/stages/*-publish.log)" \
	"Answer to pull request 1 (dry run: not sent)" "## packetfs review of \`$pr_head\`"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/seed-pr >/dev/null &&
	fail "seed-pr: the branch was pushed"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check failed: $out"
exit 0
