#!/usr/bin/env bash
# A change that also edits a file outside its plan (SPEC §6 "Scope"): the path is reported in
# validation/scope.md and status says "1 outside the plan", but nothing refuses it: the item
# reaches review and is published. A plan without a scope block changes nothing: scope is empty
# in status and scope.md says nothing is checked.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
scope_item "edit README.md
keep CHANGELOG.md" edit:README.md edit:NOTES.md
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
assert_eq "1 outside the plan" "$(status_field "$M" fix-1 scope)" "status scope"
ls "$d/stages" | grep -q -- '-review\.log$' || fail "review did not run"
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null ||
	fail "the item was not published"
md=$(cat "$d/validation/scope.md")
assert_contains "$md" "# Scope [1 outside the plan]"
assert_contains "$md" '## Outside the plan

- `NOTES.md`: added'
assert_contains "$md" '- `CHANGELOG.md`: untouched'

# No scope block: no scope line value, no refusal.
new_item fix-2
printf '# Plan\n\n```validation-recipes\n01-build\n```\n' >"$M/fix-2/plan.md"
assert_eq "" "$(status_field "$M" fix-2 scope)" "status scope without a block"
assert_contains "$(cat "$M/fix-2/validation/scope.md")" 'plan.md has no ```scope block: nothing is checked.'
exit 0
