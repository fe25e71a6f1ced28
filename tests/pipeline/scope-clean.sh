#!/usr/bin/env bash
# A change inside its plan's scope (SPEC §6 "Scope"): status and status.json say scope clean,
# validation/scope.md lists each planned path with what the change did to it (an edit, an add,
# a delete, and a planned path left untouched) and each keep pattern untouched; evidence.md,
# junit.xml, report.html and the attestation carry it; the item passes every gate and is
# published.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
scope_item "edit README.md
add src/new.c
delete CHANGELOG.md
edit Makefile
keep docs/**/*.svg
keep docs/old/" edit:README.md edit:src/new.c rm:CHANGELOG.md
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
head=$(worktree_head fix-1)
assert_eq "$head" "$(git -C "$ORIGIN" rev-parse refs/heads/packetfs/fix-1)" "published head"
assert_eq clean "$(status_field "$M" fix-1 scope)" "status scope"
python3 - "$d/status.json" <<'EOPY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["scope"] == "clean", s
EOPY
md=$(cat "$d/validation/scope.md")
assert_contains "$md" "# Scope [clean]"
assert_contains "$md" "Head: $head"
assert_contains "$md" '- edit `README.md`: edited'
assert_contains "$md" '- add `src/new.c`: added'
assert_contains "$md" '- delete `CHANGELOG.md`: deleted'
assert_contains "$md" '- edit `Makefile`: untouched'
assert_contains "$md" '## Outside the plan

None.'
assert_contains "$md" '- `docs/**/*.svg`: untouched'
assert_contains "$md" '- `docs/old/`: untouched'
assert_contains "$md" "do not edit by hand."
scope_carried clean passed
# The size a stat gives is the rendering's.
assert_eq "$(printf '%s\n' "$md" | wc -c)" "$(stat -c %s "$d/validation/scope.md")" "scope.md size"
exit 0
