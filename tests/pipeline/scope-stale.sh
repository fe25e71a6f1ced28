#!/usr/bin/env bash
# The scope belongs to the head it was computed at (SPEC §6 "Scope"): a change inside its plan
# passes review, then a commit by hand touches a kept path; status recomputes the scope at the
# new head, and approve does not get it published: the item is blocked naming the path.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
PUBLISH_GATE='"gate": "approve",' scope_item "edit README.md
keep CHANGELOG.md" edit:README.md
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
assert_eq clean "$(status_field "$M" fix-1 scope)" "scope after review"

echo "- 1.1: by hand" >>"$STORE/worktrees/fix-1/CHANGELOG.md"
git -C "$STORE/worktrees/fix-1" commit -q -am "a hand commit to the changelog"
assert_eq "1 kept path touched, 1 outside the plan" "$(status_field "$M" fix-1 scope)" \
	"scope after the hand commit"
assert_contains "$(cat "$d/validation/scope.md")" "Head: $(worktree_head fix-1)"
ctl "$M" fix-1 approve
assert_eq blocked "$(settled fix-1)" "state after approve"
assert_eq "publish: gate refused: the change touches 1 kept path (plan.md's scope): CHANGELOG.md" \
	"$(status_field "$M" fix-1 last_error)" "last_error"
not_published
exit 0
