#!/usr/bin/env bash
# rm -rf of an item while a stage runs (SPEC §3: an item cannot be archived then, EBUSY): the
# removal is refused as a whole. Nothing is deleted, the item stays live with every document,
# and once the stage has ended rm -rf archives it with every document.
. "$(dirname "$0")/../lib.sh"
sleeping_item
d=$M/fix-1
printf '# Busy item\n' >"$d/brief.md"
mkdir "$d/notes"
printf 'note\n' >"$d/notes/a.md"

out=$(rm -rf "$d" 2>&1) && fail "rm -rf of an item with a running stage succeeded"
assert_contains "$out" "Device or resource busy" "what rm -rf printed"
[ -d "$d" ] || fail "fix-1 left the root while its stage runs"
assert_file_eq "$d/brief.md" $'# Busy item\n'
assert_file_eq "$d/notes/a.md" $'note\n'
assert_eq running "$(status_field "$M" fix-1 state)" "state after the refused rm -rf"

ctl "$M" fix-1 cancel
wait_for eval '[ "$(status_field "$M" fix-1 state)" != running ]'
out=$(rm -rf "$d" 2>&1) || fail "rm -rf after the stage ended: $out"
assert_eq "" "$out" "what rm -rf printed once the stage ended"
[ ! -e "$d" ] || fail "fix-1 still in the root"
assert_file_eq "$M/.archive/fix-1/brief.md" $'# Busy item\n'
assert_file_eq "$M/.archive/fix-1/notes/a.md" $'note\n'
exit 0
