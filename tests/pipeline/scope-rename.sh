#!/usr/bin/env bash
# A rename out of a kept directory (SPEC §6 "Scope": a rename counts as both paths): the old
# path is a kept path touched, so the item is blocked at the review gate naming it; scope.md
# shows the planned new path added (renamed from the old one) and the old one deleted (renamed
# to the new one) outside the plan.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
scope_item "add src/x.svg
keep docs/old/" mv:docs/old/x.svg:src/x.svg
ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state"
assert_eq "review: gate refused: the change touches 1 kept path (plan.md's scope): docs/old/x.svg" \
	"$(status_field "$M" fix-1 last_error)" "last_error"
not_published
assert_eq "1 kept path touched, 1 outside the plan" "$(status_field "$M" fix-1 scope)" "status scope"
md=$(cat "$d/validation/scope.md")
assert_contains "$md" '- add `src/x.svg`: added (renamed from `docs/old/x.svg`)'
assert_contains "$md" '- `docs/old/x.svg`: deleted (renamed to `src/x.svg`)'
assert_contains "$md" '- `docs/old/`: TOUCHED `docs/old/x.svg` (deleted)'
exit 0
