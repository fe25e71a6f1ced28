#!/usr/bin/env bash
# .packetfs/recipes/ follows recipes_dir while mounted (SPEC §6, no remount): a recipe added,
# edited or removed there shows at once in ls and cat; a procedure NN-name.md is listed, executable
# or not, while other non-executable files are not; the files stay read-only; and `rerun NAME` of
# a recipe added after the mount is accepted and runs it, one removed is refused (EINVAL).
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
PLAN_RECIPES="01-build" std_pipeline "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store
R=$M/.packetfs/recipes

# listing : the names ls shows in .packetfs/recipes/, one line.
listing()
{
	ls "$R" | tr '\n' ' '
}

assert_contains "$(listing)" "01-build.sh" "catalog at mount"
assert_not_contains "$(listing)" "20-added.sh" "catalog at mount"

# Added: a script, a procedure (not executable), and files that are no recipes.
script=$'#!/usr/bin/env bash\n# summary: added after the mount\necho "added ran"\nexit 0\n'
printf '%s' "$script" >"$RECIPES/20-added.sh"
chmod 755 "$RECIPES/20-added.sh"
proc=$'<!--\n# summary: the README explains the flag\n# needs: none\n-->\n# Proof\n\nShow it.\n'
printf '%s' "$proc" >"$RECIPES/21-docs.md"
chmod 644 "$RECIPES/21-docs.md"
printf '#!/bin/sh\nexit 0\n' >"$RECIPES/22-not-exec.sh"
chmod 644 "$RECIPES/22-not-exec.sh"
printf '# summary: no recipe name\n' >"$RECIPES/NOTES.md"

l=$(listing)
assert_contains "$l" "20-added.sh" "catalog after adding"
assert_contains "$l" "21-docs.md" "catalog after adding a procedure"
assert_not_contains "$l" "22-not-exec.sh" "catalog (a non-executable script)"
assert_not_contains "$l" "NOTES.md" "catalog (a bad name)"
assert_doc "$R/20-added.sh" "$script"
assert_doc "$R/21-docs.md" "$proc"
[ ! -e "$R/22-not-exec.sh" ] || fail "a non-executable script resolves on the mount"
assert_fails_with EACCES sh_write "$R/21-docs.md" "overwritten"
assert_fails_with EACCES sh_append "$R/20-added.sh" "appended"
assert_doc "$R/21-docs.md" "$proc"

# Edited: a longer text, then one of the same size (within the same second).
script2=$'#!/usr/bin/env bash\n# summary: edited\necho "edited ran"\necho "a second line"\nexit 0\n'
printf '%s' "$script2" >"$RECIPES/20-added.sh"
assert_doc "$R/20-added.sh" "$script2"
script3=${script2//edited/EDITED}
printf '%s' "$script3" >"$RECIPES/20-added.sh"
assert_doc "$R/20-added.sh" "$script3"
# Made executable, a script joins the catalog; no longer executable, it leaves it.
chmod 755 "$RECIPES/22-not-exec.sh"
assert_contains "$(listing)" "22-not-exec.sh" "catalog after chmod +x"
assert_doc "$R/22-not-exec.sh" $'#!/bin/sh\nexit 0\n'
chmod 644 "$RECIPES/22-not-exec.sh"
assert_not_contains "$(listing)" "22-not-exec.sh" "catalog after chmod -x"

# Removed: gone from the listing, and every use of the name fails.
cat "$R/21-docs.md" >/dev/null
rm "$RECIPES/21-docs.md"
assert_not_contains "$(listing)" "21-docs.md" "catalog after removing"
[ ! -e "$R/21-docs.md" ] || fail "a removed recipe still resolves"
assert_fails_with ENOENT cat "$R/21-docs.md"
# ... and back under the same name, with other content.
printf '# summary: back\n' >"$RECIPES/21-docs.md"
assert_contains "$(listing)" "21-docs.md" "catalog after adding again"
assert_doc "$R/21-docs.md" $'# summary: back\n'
rm "$RECIPES/21-docs.md"

# Renamed: the old name goes, the new one comes.
mv "$RECIPES/20-added.sh" "$RECIPES/23-renamed.sh"
l=$(listing)
assert_not_contains "$l" "20-added.sh" "catalog after renaming"
assert_contains "$l" "23-renamed.sh" "catalog after renaming"
mv "$RECIPES/23-renamed.sh" "$RECIPES/20-added.sh"

# After the racy window (recipe.c) the catalog is kept and still sees a change.
sleep 2.5
assert_contains "$(listing)" "20-added.sh" "catalog after a pause"
printf '%s' "$script2" >"$RECIPES/20-added.sh"
assert_doc "$R/20-added.sh" "$script2"
rm "$RECIPES/22-not-exec.sh"
printf '# summary: late\n' >"$RECIPES/24-late.md"
assert_contains "$(listing)" "24-late.md" "catalog after adding after a pause"

# rerun of a recipe added after the mount is accepted and runs the file as it is now.
new_item fix-1
d=$M/fix-1
r=$d/validation/registry.jsonl
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
lines=$(reg count "$r")
ctl "$M" fix-1 "rerun 20-added"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=20-added)" = 1 ]' _ "$FIXTURES/registry.py" "$r"
assert_eq validated "$(reg field "$r" -1 status recipe=20-added)" "status of the added recipe"
log=$(reg field "$r" -1 evidence recipe=20-added)
assert_contains "$(cat "$d/$log")" "edited ran" "log of the added recipe"
# A removed one is refused.
rm "$RECIPES/20-added.sh"
assert_fails_with EINVAL sh_write "$d/ctl" $'rerun 20-added\n'
assert_eq "$((lines + 1))" "$(reg count "$r")" "registry lines after the refused rerun"
exit 0
