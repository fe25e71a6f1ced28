#!/usr/bin/env bash
# A malformed scope block fails plan (SPEC §6 "Scope") with the line of plan.md and the reason:
# an unknown word, a keep pattern with an unclosed bracket, a path planned twice; nothing after
# plan runs. status and scope.md say the block is invalid.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
scope_item "edit README.md
modify hello.c" edit:README.md
ctl "$M" fix-1 advance
wait_state "$M" fix-1 failed
assert_eq 'plan: plan.md: line 13: "modify" is not edit, add, delete or keep' \
	"$(status_field "$M" fix-1 last_error)" "last_error"
ls "$d/stages" | grep -q -- '-print\.log$' && fail "print ran after a failed plan"
assert_eq 'invalid: plan.md: line 13: "modify" is not edit, add, delete or keep' \
	"$(status_field "$M" fix-1 scope)" "status scope"
assert_contains "$(cat "$d/validation/scope.md")" "# Scope [invalid]"

# Other malformed lines, each with its reason, through plan run again on a new plan.md.
bad()
{
	printf '%s\n' "$1" >"$T/scope.txt"
	ctl "$M" fix-1 "run plan"
	wait_state "$M" fix-1 failed
	assert_eq "plan: plan.md: $2" "$(status_field "$M" fix-1 last_error)" "$1"
}
bad "keep docs/[ab.svg" "line 12: keep an unclosed '[' in the pattern"
bad "edit /etc/passwd" "line 12: edit an absolute path (paths are relative to the repository root)"
bad "delete" "line 12: delete a path is missing"
bad "edit README.md
add README.md" "line 13: README.md is already planned on line 12"
exit 0
