#!/usr/bin/env bash
# A line "Disposition: WORD" in plan.md ends the item done after plan (SPEC §5): status shows the
# disposition, nothing is printed, validated or published, advance says why it refuses, and a
# new run of plan clears it. A "Disposition:" line that is not one word fails plan with the
# reason.
. "$(dirname "$0")/../lib.sh"
make_repo
plan()
{
	printf '{"name": "plan", "run": %s, "produces": ["plan.md"], "env": {"PLAN_DISPOSITION": "%s"}}' \
		"$(stage_run plan.sh 01-build)" "$1"
}
rest=("$(print_stage)"
	"$(validate_stage)"
	"$(review_stage sound)"
	"{\"name\": \"publish\", \"push\": {\"remote\": \"origin\"}}")
pipeline_item "$(plan duplicate)" "${rest[@]}"
base=$(git -C "$REPO" rev-parse main)

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
assert_eq duplicate "$(status_field "$M" fix-1 disposition)" "status disposition"
assert_eq plan "$(status_field "$M" fix-1 stage)" "status stage"
assert_contains "$(cat "$M/fix-1/status.json")" '"disposition":"duplicate"' "status.json"
assert_eq 1 "$(ls "$M/fix-1/stages" | wc -l)" "stage logs (plan only)"
assert_contains "$(cat "$M/fix-1/stages/"*-plan.log)" "Disposition: duplicate" "plan log"
assert_eq "$base" "$(git -C "$REPO" rev-parse packetfs/fix-1)" "the branch did not move"
assert_eq "" "$(cat "$M/fix-1/change.diff")" "change.diff"
assert_eq 0 "$(wc -l <"$M/fix-1/validation/registry.jsonl")" "registry lines"
grep -q '"type":"disposition"' "$M/fix-1/events" || fail "no disposition event: $(cat "$M/fix-1/events")"
assert_fails_with EINVAL sh_write "$M/fix-1/ctl" $'advance\n'
assert_contains "$(cat "$M/fix-1/ctl")" "the plan ended the item (Disposition: duplicate)" "ctl result"

# A word that is not one: plan fails and says why; nothing else moves.
pipeline_with "$M/.packetfs/pipeline.json" "$(plan 'Not Sure')" "${rest[@]}"
ctl "$M" fix-1 "run plan"
wait_state "$M" fix-1 failed
assert_contains "$(status_field "$M" fix-1 last_error)" '"Disposition: Not Sure" is not one word' \
	"last_error"
assert_eq "" "$(status_field "$M" fix-1 disposition)" "disposition after a failed plan"
exit 0
