#!/usr/bin/env bash
# The seed workflow end to end, as examples/demo.sh runs it: the pipeline of
# examples/pipeline.json.in with the example stage programs (examples/stages/*.sh) and the
# shipped recipes (recipes/), on a copy of examples/sample-project (strkit: make, make check).
#   seed-1   plan names the script recipes and the procedures 00-preflight and
#            06-change-review; validate runs the scripts, then validate.sh records each
#            procedure (packetfs record) and writes change-validation.md; review, approve,
#            publish. The procedures' registry lines are engine lines recorded by the validate
#            stage with the exact commands; the verdict is pass; the pushed head is the head
#            of the verdict and of the assessment.
#   seed-2   after print, a commit by hand breaks a unit test, so `make check` fails:
#            02-unit-tests and 06-change-review are failing, the verdict is fail, review is
#            refused, and nothing is pushed.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../sample.sh
. "$TESTS_DIR/sample.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-90}
# The demo's repository, remote and pipeline (examples/sample-setup.sh, as demo.sh makes them).
sample_setup
make_store "$T/pipeline.json"
mount_store

preflight="sh -c 'cc --version && make clean && make'"
review="sh -c 'git diff --check main...HEAD && make check'"
brief='# Add str_reverse to strkit

strkit needs a function that reverses a string in place and returns it.'

# --- seed-1: the whole pipeline ----------------------------------------------------------
new_item seed-1
printf '%s\n' "$brief" >"$M/seed-1/brief.md"
ctl "$M" seed-1 advance

# --- seed-2: held, so that a commit can break the project after print -------------------
new_item seed-2
d2=$M/seed-2
printf '%s\n' "$brief" >"$d2/brief.md"
ctl "$M" seed-2 hold
for stage in plan print; do
	ctl "$M" seed-2 advance
	assert_eq waiting "$(settled seed-2)" "seed-2: state after $stage (held)"
	assert_eq "$stage" "$(status_field "$M" seed-2 stage)" "seed-2: stage"
done
wt2=$STORE/worktrees/seed-2
sed -i 's/str_count_char("banana", '"'a'"') == 3/str_count_char("banana", '"'a'"') == 4/' \
	"$wt2/tests/test_strkit.c"
git -C "$wt2" diff --quiet && fail "seed-2: the edit that breaks the test changed nothing"
git -C "$wt2" commit -q -am "strkit: a test that fails"
broken=$(worktree_head seed-2)
ctl "$M" seed-2 advance
assert_eq waiting "$(settled seed-2)" "seed-2: state after validate (held)"
assert_eq validate "$(status_field "$M" seed-2 stage)" "seed-2: stage"

# --- seed-1's results ------------------------------------------------------------------------
d=$M/seed-1
r=$d/validation/registry.jsonl
wait_state "$M" seed-1 waiting
assert_eq publish "$(status_field "$M" seed-1 stage)" "seed-1: stage before approve"
plan=$(sed -n '/^```validation-recipes$/,/^```$/p' "$d/plan.md")
for rc in 00-preflight 01-build 02-unit-tests 04-diff-integrity 06-change-review; do
	assert_contains "$plan" "$rc" "seed-1: the plan's validation-recipes block"
done
assert_eq "## Verdict: pass" "$(last_line "$d/change-validation.md")" \
	"seed-1: last line of change-validation.md"
assert_eq "## Assessment: sound" "$(last_line "$d/review.md")" "seed-1: last line of review.md"
n=$(printf '%s\n' "$plan" | grep -c '^[0-9]')
assert_eq "$n/$n validated" "$(status_field "$M" seed-1 evidence)" "seed-1: status evidence"
ctl "$M" seed-1 approve
wait_state "$M" seed-1 "done"
check_status "$M" seed-1

head=$(worktree_head seed-1)
[ "$head" != "$(git -C "$REPO" rev-parse main)" ] || fail "seed-1: the item branch did not move"
pushed=$(git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/seed-1) ||
	fail "seed-1: the branch is not in the remote"
assert_eq "$head" "$pushed" "seed-1: the pushed head"
assert_head "$pushed" "$(status_field "$M" seed-1 head)" "seed-1: status head"
assert_head "$pushed" "$(status_field "$M" seed-1 verdict_head)" "seed-1: status verdict_head"
assert_head "$pushed" "$(status_field "$M" seed-1 assessment_head)" "seed-1: status assessment_head"
assert_eq pass "$(status_field "$M" seed-1 verdict)" "seed-1: status verdict"
assert_eq sound "$(status_field "$M" seed-1 assessment)" "seed-1: status assessment"

# by REG RECIPE : the stage of recorded_by on RECIPE's latest line ("-" when it has none).
by()
{
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
last = [o for o in lines if o.get("recipe") == sys.argv[2]][-1]
print((last.get("recorded_by") or {}).get("stage", "-"))
PY
}

reg check "$r" "$d" || fail "seed-1: registry lines are incomplete or logs do not match"
for rc in 00-preflight 06-change-review; do
	assert_eq 1 "$(reg count "$r" "recipe=$rc")" "seed-1: $rc lines"
	assert_eq engine "$(reg field "$r" -1 source "recipe=$rc")" "seed-1: $rc source"
	assert_eq validated "$(reg field "$r" -1 status "recipe=$rc")" "seed-1: $rc status"
	assert_eq validate "$(by "$r" "$rc")" "seed-1: $rc recorded_by.stage"
	assert_eq "$head" "$(reg field "$r" -1 head "recipe=$rc")" "seed-1: $rc head"
done
assert_eq "$preflight" "$(reg field "$r" -1 command recipe=00-preflight)" "seed-1: 00-preflight command"
assert_eq "$review" "$(reg field "$r" -1 command recipe=06-change-review)" \
	"seed-1: 06-change-review command"
for rc in 01-build 02-unit-tests 04-diff-integrity; do
	assert_eq validated "$(reg field "$r" -1 status "recipe=$rc")" "seed-1: $rc status"
	assert_eq - "$(by "$r" "$rc")" "seed-1: $rc recorded_by (a catalog run)"
done
log=$(cat "$d/$(reg field "$r" -1 evidence recipe=00-preflight)")
assert_contains "$log" "make clean" "seed-1: 00-preflight log"
assert_contains "$log" "libstrkit.a" "seed-1: 00-preflight log (the build)"
log=$(cat "$d/$(reg field "$r" -1 evidence recipe=06-change-review)")
assert_contains "$log" " passed, 0 failed" "seed-1: 06-change-review log (make check)"
cv=$(cat "$d/change-validation.md")
assert_contains "$cv" "| 00-preflight | procedure | validated | \`$preflight\` |" "seed-1: change-validation.md"
assert_contains "$cv" "| 06-change-review | procedure | validated | \`$review\` |" "seed-1: change-validation.md"
assert_contains "$cv" "| 01-build | script | validated |" "seed-1: change-validation.md"
vlog=$(cat "$d"/stages/*-validate.log)
assert_contains "$vlog" "[packetfs] 00-preflight is a procedure" "seed-1: validate log"
assert_contains "$vlog" "validate.sh: \$ packetfs record 00-preflight -- sh -c" "seed-1: validate log"
assert_contains "$vlog" "validate.sh: wrote change-validation.md (## Verdict: pass)" "seed-1: validate log"
assert_contains "$(cat "$d"/stages/*-publish.log)" "head:   packetfs/seed-1" "seed-1: publish log"

# --- seed-2's results: make check fails, nothing is published ---------------------------
r2=$d2/validation/registry.jsonl
assert_eq fail "$(status_field "$M" seed-2 verdict)" "seed-2: status verdict"
assert_head "$broken" "$(status_field "$M" seed-2 verdict_head)" "seed-2: status verdict_head"
assert_eq "## Verdict: fail" "$(last_line "$d2/change-validation.md")" \
	"seed-2: last line of change-validation.md"
assert_eq failing "$(reg field "$r2" -1 status recipe=02-unit-tests)" "seed-2: 02-unit-tests status"
assert_eq validated "$(reg field "$r2" -1 status recipe=01-build)" "seed-2: 01-build status"
assert_eq validated "$(reg field "$r2" -1 status recipe=00-preflight)" "seed-2: 00-preflight status"
assert_eq failing "$(reg field "$r2" -1 status recipe=06-change-review)" "seed-2: 06-change-review status"
assert_eq engine "$(reg field "$r2" -1 source recipe=06-change-review)" "seed-2: 06-change-review source"
assert_eq validate "$(by "$r2" 06-change-review)" "seed-2: 06-change-review recorded_by.stage"
assert_eq "$review" "$(reg field "$r2" -1 command recipe=06-change-review)" "seed-2: 06-change-review command"
assert_eq "$broken" "$(reg field "$r2" -1 head recipe=06-change-review)" "seed-2: 06-change-review head"
assert_contains "$(cat "$d2/$(reg field "$r2" -1 evidence recipe=06-change-review)")" "1 failed" \
	"seed-2: 06-change-review log"
assert_contains "$(cat "$d2/change-validation.md")" "| 06-change-review | procedure | failing |" \
	"seed-2: change-validation.md"
reg check "$r2" "$d2" || fail "seed-2: registry lines are incomplete or logs do not match"

ctl "$M" seed-2 advance
assert_eq blocked "$(settled seed-2)" "seed-2: state at the review gate"
assert_eq review "$(status_field "$M" seed-2 stage)" "seed-2: stage"
assert_contains "$(status_field "$M" seed-2 last_error)" "verdict" "seed-2: last_error"
ls "$d2/stages" | grep -Eq -- '-(review|publish)\.log$' && fail "seed-2: review or publish ran: $(ls "$d2/stages")"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/seed-2 >/dev/null &&
	fail "seed-2: the branch was pushed"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check failed: $out"
exit 0
