#!/usr/bin/env bash
# A round after publish (SPEC §5 "After publish") that commits to a path the plan's scope keeps
# (SPEC §6 "Scope"): the plan's recipes validate the new head, but it is refused like a failing
# recipe: not pushed, and the item is blocked naming the path.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-60}
scope_repo
copy_recipes
printf 'edit README.md\nkeep hello.c\n' >"$T/scope.txt"
printf 'commit\nsettled\n' >"$T/rounds"
pipeline_with "$T/pipeline.json" "$(stage_json plan plan.md scope-plan.sh "$T/scope.txt" 01-build)" \
	"$(stage_json print change.md scope-print.sh edit:README.md)" "$(validate_stage)" \
	"$(review_stage sound)" "$(publish_stage)" \
	"{\"name\": \"babysit\", \"run\": $(stage_run round.sh "$T/rounds"), \"rounds\": {\"every_s\": 1, \"max\": 3}}"
mount_item "$T/pipeline.json"
ctl "$M" fix-1 advance
wait_for git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1
published=$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)
wait_state "$M" fix-1 blocked
head=$(worktree_head fix-1)
[ "$head" != "$published" ] || fail "the round made no commit"
assert_eq validated "$(reg field "$r" -1 status recipe=01-build head="$head")" "01-build at the new head"
assert_contains "$(status_field "$M" fix-1 last_error)" \
	"the change touches 1 kept path (plan.md's scope): hello.c" "last_error"
assert_eq "$published" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" \
	"the remote still has the reviewed head"
assert_eq "1 kept path touched, 1 outside the plan" "$(status_field "$M" fix-1 scope)" "status scope"
exit 0
