#!/usr/bin/env bash
# An assessment belongs to the head it judged (SPEC §5): after a sound review, a commit by hand,
# reruns that validate the new head and an approve do not get the new head published - publish
# is blocked until a review judges that head. Status shows the verdict and the assessment stale
# with the commits they were made at; two rerun lines in one write queue both runs.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
reviewed=$(worktree_head fix-1)
assert_eq sound "$(status_field "$M" fix-1 assessment)" "assessment"
assert_eq "$reviewed" "$(status_field "$M" fix-1 assessment_head)" "assessment_head"
assert_eq "$reviewed" "$(status_field "$M" fix-1 verdict_head)" "verdict_head"

git -C "$STORE/worktrees/fix-1" commit -q --allow-empty -m "a commit no reviewer saw"
moved=$(worktree_head fix-1)
assert_eq "pass (stale: the head moved)" "$(status_field "$M" fix-1 verdict)" "verdict after the commit"
assert_eq "sound (stale: the head moved)" "$(status_field "$M" fix-1 assessment)" \
	"assessment after the commit"
python3 - "$d/status.json" <<'EOPY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["verdict_stale"] is True and s["assessment_stale"] is True, s
EOPY

# Both reruns in one write: they queue, and validate the new head.
printf 'rerun 01-build\nrerun 02-lint\n' >"$d/ctl"
wait_for bash -c '[ "$(python3 "$1" count "$2" status=validated head="$3")" = 2 ]' _ \
	"$FIXTURES/registry.py" "$r" "$moved"
assert_eq waiting "$(settled fix-1)" "state after the reruns"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict after the reruns"
assert_eq "$moved" "$(status_field "$M" fix-1 verdict_head)" "verdict_head after the reruns"

ctl "$M" fix-1 approve
assert_eq blocked "$(settled fix-1)" "state after approve with a stale review"
assert_eq "publish: gate refused: the assessment sound is stale (made at ${reviewed:0:12}, the head is ${moved:0:12} now): no review judged this head; run review again" \
	"$(status_field "$M" fix-1 last_error)" "last_error"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null &&
	fail "a head no review judged was pushed"

# A review of the new head lets it through (approve still stands: no print since).
ctl "$M" fix-1 "run review"
wait_state "$M" fix-1 done
assert_eq "$moved" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" "pushed head"
assert_eq "$moved" "$(status_field "$M" fix-1 assessment_head)" "assessment_head at the end"
exit 0
