#!/usr/bin/env bash
# Review request (SPEC §5): a plan with "Review request: N" and a template that adopts it
# (examples/stages/adopt-request.sh: git fetch origin pull/N/head) makes the pull request's
# head the item's head; the item is validated and reviewed like any change, and its publish
# (no push; examples/stages/answer-request.sh) answers on the request through the gh stand-in,
# naming the commit judged. The item branch is pushed nowhere. A request whose head moved on
# the remote since is not answered: the judgment is stale.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
export GH_STUB_STATE=$T/gh.json GH_REPO=acme/hello
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
export PATH="$FIXTURES/bin:$PATH"
make_repo
copy_recipes

# Somebody's pull request 1: a branch "greeting" on origin, also as refs/pull/1/head.
git -C "$REPO" checkout -q -b greeting
sed -i 's/old world/brave new world/' "$REPO/hello.c"
git -C "$REPO" commit -qam "say brave new world"
pr_head=$(git -C "$REPO" rev-parse HEAD)
git -C "$REPO" push -q origin greeting greeting:refs/pull/1/head
git -C "$REPO" checkout -q main
git -C "$REPO" branch -q -D greeting
gh-stub-state init
gh pr create --title "Say brave new world" --body "please" --base main --head greeting >/dev/null
gh-stub-state push 1 "$pr_head"

ex=$ROOT/examples/stages
request="[{\"name\": \"adopt\", \"run\": [\"/bin/bash\", \"$ex/adopt-request.sh\"], \"produces\": [\"adopted.md\"]},
	$(validate_stage), $(review_stage sound),
	{\"name\": \"publish\", \"run\": [\"/bin/bash\", \"$ex/answer-request.sh\"], \"produces\": [\"answer.json\"]}]"
extra="\"templates\": {\"existing-request\": {\"stages\": $request}},
  \"routes\": {\"review\": \"existing-request\"},"
EXTRA=$extra pipeline_store "$(stage_json plan plan.md plan-header.sh 01-build)" "$(print_stage)" "$(validate_stage)" \
	"$(review_stage sound)" "$(publish_stage)"
new_item pr1
printf '%s\n' 'Route: review' 'Review request: https://github.com/acme/hello/pull/1' >"$M/pr1/header"
ctl "$M" pr1 advance
wait_state "$M" pr1 done

assert_eq existing-request "$(status_field "$M" pr1 template)" "template"
assert_eq https://github.com/acme/hello/pull/1 "$(status_field "$M" pr1 review_request)" "review_request"
assert_eq publish "$(status_field "$M" pr1 stage)" "stage"
assert_eq "$pr_head" "$(git -C "$REPO" rev-parse packetfs/pr1)" "the item's head is the request's"
assert_eq pass "$(status_field "$M" pr1 verdict)" "verdict"
assert_eq "$pr_head" "$(status_field "$M" pr1 verdict_head)" "verdict_head"
assert_eq sound "$(status_field "$M" pr1 assessment)" "assessment"
assert_eq "$pr_head" "$(status_field "$M" pr1 assessment_head)" "assessment_head"
assert_contains "$(grep '"status":"validated"' "$M/pr1/validation/registry.jsonl")" "$pr_head" \
	"the evidence is of the request's head"
assert_eq "" "$(remote_head "$ORIGIN" packetfs/pr1)" "the item branch is pushed nowhere"
assert_contains "$(cat "$M/pr1/change.diff")" "brave new world" "change.diff is the request's change"

# One answer on the request, naming the commit judged, with the evidence and the review.
calls=$(gh_log pr comment)
assert_eq 1 "$(printf '%s\n' "$calls" | grep -c .)" "gh pr comment calls"
body=$(printf '%s\n' "$calls" | field body)
assert_contains_each "$body" "## packetfs review of \`$pr_head\`" "judged at commit \`$pr_head\`" \
	"**pass** at \`$pr_head\`" "### Evidence record" "01-build" "### Review" "Assessment: sound"
assert_eq 1 "$(printf '%s\n' "$calls" | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["argv"][2])')" \
	"the request answered"
assert_contains "$(cat "$M/pr1/answer.json")" "\"head\": \"$pr_head\"" "answer.json"

# The request moves on the remote: answering again is refused as stale.
gh-stub-state push 1 "$(printf '%040d' 7)"
ctl "$M" pr1 "run publish"
wait_state "$M" pr1 failed
assert_contains "$(status_field "$M" pr1 last_error)" "publish: exited with code 1" "last_error"
assert_contains "$(cat "$M"/pr1/stages/*-publish.log)" \
	"pull request 1: its head moved to 0000000000000000000000000000000000000007 since $pr_head was judged: the review is stale" \
	"publish log"
assert_eq 1 "$(gh_log pr comment | grep -c .)" "no second answer"
exit 0
