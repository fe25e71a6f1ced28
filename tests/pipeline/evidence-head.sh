#!/usr/bin/env bash
# Evidence recorded at an older head does not count. The item runs to done; then `run print`
# (held) makes a new commit on the branch: the runs validated before are stale. They no longer
# count in status or evidence.md (report.html shows them stale), a rerun of one recipe does not make the verdict pass, the
# review and publish gates refuse, and nothing is pushed, until every recipe is validated
# again at the new head (and a new approve is given).
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint

ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state at the publish gate"
ctl "$M" fix-1 approve
assert_eq done "$(settled fix-1)" "state after approve"
head1=$(worktree_head fix-1)
assert_eq "$head1" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" "pushed head"
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence at done"
for rc in 01-build 02-lint; do
	assert_eq "$head1" "$(reg field "$r" -1 head recipe=$rc)" "head of the $rc run"
done

# A new commit by run print: the evidence of head1 is stale.
ctl "$M" fix-1 hold
ctl "$M" fix-1 "run print"
assert_eq waiting "$(settled fix-1)" "state after run print (held)"
assert_eq print "$(status_field "$M" fix-1 stage)" "stage after run print"
head2=$(worktree_head fix-1)
[ "$head2" != "$head1" ] || fail "run print made no new commit"
assert_head "$head2" "$(status_field "$M" fix-1 head)" "status head"
assert_eq "" "$(status_field "$M" fix-1 verdict)" "verdict after run print"
assert_eq "" "$(status_field "$M" fix-1 assessment)" "assessment after run print"
assert_eq "0/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence after run print"
ev=$(cat "$d/validation/evidence.md")
assert_contains "$ev" "[0/2 validated]" "evidence.md after run print"
assert_contains "$ev" "stale: ran at ${head1:0:12}" "evidence.md after run print"
# report.html shows a stale run as stale, not in the green of validated.
html=$(cat "$d/report.html")
assert_contains "$html" '<td class="st s-stale">validated (stale)</td>' "report.html after run print"
assert_not_contains "$html" '<td class="st s-validated">validated</td>' "report.html after run print"

ctl "$M" fix-1 "run review"
assert_eq blocked "$(settled fix-1)" "state after run review on stale evidence"
assert_contains "$(status_field "$M" fix-1 last_error)" "review: gate refused" "last_error"

# One recipe again at head2: the other is still stale, so the verdict is not pass.
ctl "$M" fix-1 "rerun 01-build"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=01-build)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
settled fix-1 >/dev/null
assert_eq "$head2" "$(reg field "$r" -1 head recipe=01-build)" "head of the rerun"
assert_eq "1/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence after one rerun"
assert_eq blocked "$(status_field "$M" fix-1 verdict)" "verdict with 02-lint stale"
ev=$(cat "$d/validation/evidence.md")
assert_contains "$ev" "[1/2 validated]" "evidence.md after one rerun"
assert_not_contains "$(grep '^| 01-build' "$d/validation/evidence.md")" "stale" "01-build row"
assert_contains "$(grep '^| 02-lint' "$d/validation/evidence.md")" "stale: ran at ${head1:0:12}" \
	"02-lint row"

for stage in review publish; do
	ctl "$M" fix-1 "run $stage"
	assert_eq blocked "$(settled fix-1)" "state after run $stage with 02-lint stale"
	assert_contains "$(status_field "$M" fix-1 last_error)" "$stage: gate refused" "last_error"
done
assert_eq 1 "$(ls "$d/stages" | grep -Ecx '[0-9]+-review\.log')" "review runs"
assert_eq 1 "$(ls "$d/stages" | grep -Ecx '[0-9]+-publish\.log')" "publish runs"
assert_eq "$head1" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" \
	"pushed head while the evidence is stale"

# Both recipes validated at head2: the verdict passes, review runs, publish waits for a new
# approve (the one given before run print does not count).
ctl "$M" fix-1 "rerun 02-lint"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=02-lint)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
settled fix-1 >/dev/null
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict after both reruns"
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence after both reruns"
ctl "$M" fix-1 release
ctl "$M" fix-1 "run review"
assert_eq waiting "$(settled fix-1)" "state at the publish gate after revalidation"
assert_eq "publish: waiting for approve" "$(status_field "$M" fix-1 last_error)" "last_error"
ctl "$M" fix-1 approve
assert_eq done "$(settled fix-1)" "state after the second approve"
assert_eq "$head2" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" "pushed head"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
