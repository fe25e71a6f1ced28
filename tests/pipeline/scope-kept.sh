#!/usr/bin/env bash
# A change that edits a file under a keep glob (SPEC §6 "Scope") is refused at the review gate
# like a failing recipe: the item is blocked with the path named, review never runs and nothing
# is published; status says "1 kept path touched", scope.md marks the pattern touched, and
# evidence.md, junit.xml (a failure), report.html and the attestation (FAILED) carry it.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
scope_item "edit README.md
keep CHANGELOG.md
keep docs/**/*.svg" edit:README.md edit:docs/diagrams/deep/arch.svg
ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state"
assert_eq "review: gate refused: the change touches 1 kept path (plan.md's scope): docs/diagrams/deep/arch.svg" \
	"$(status_field "$M" fix-1 last_error)" "last_error"
assert_eq review "$(status_field "$M" fix-1 stage)" "stage"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict (the recipes passed)"
ls "$d/stages" | grep -q -- '-review\.log$' && fail "review ran on a change that touches a kept path"
not_published
assert_eq "1 kept path touched, 1 outside the plan" "$(status_field "$M" fix-1 scope)" "status scope"
md=$(cat "$d/validation/scope.md")
assert_contains "$md" '- `docs/**/*.svg`: TOUCHED `docs/diagrams/deep/arch.svg` (edited)'
assert_contains "$md" '- `CHANGELOG.md`: untouched'
scope_carried "1 kept path touched, 1 outside the plan" failure docs/diagrams/deep/arch.svg

# Running review by hand meets the same gate.
ctl "$M" fix-1 "run review"
assert_eq blocked "$(settled fix-1)" "state after run review"
ls "$d/stages" | grep -q -- '-review\.log$' && fail "review ran after run review"
not_published
exit 0
