#!/usr/bin/env bash
# Evidence describes exactly the commit it names (SPEC §5): a print stage that commits but
# leaves an untracked file behind gets every recipe blocked, naming the file, instead of
# recipes "validated at head" that used a file the head does not hold. Once the file is
# committed, a rerun validates at the new head. Files git ignores do not count.
. "$(dirname "$0")/../lib.sh"
copy_recipes
cat >"$RECIPES/05-generated.sh" <<'EOR'
#!/usr/bin/env bash
# summary: needs generated.h
test -f generated.h && echo "generated.h is there"
EOR
chmod +x "$RECIPES/05-generated.sh"
PRINT_ARGS=untracked std_item 01-build 05-generated
ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state after validation"
head=$(worktree_head fix-1)
for rec in 01-build 05-generated; do
	assert_eq blocked "$(reg field "$r" -1 status recipe=$rec)" "status of $rec"
	assert_eq "$head" "$(reg field "$r" -1 head recipe=$rec)" "head of $rec"
done
assert_contains "$(reg field "$r" -1 note recipe=01-build)" "1 uncommitted: generated.h" \
	"note of 01-build"
# 05-generated needs 01-build (the lower-numbered recipe of its batch), which was blocked.
assert_contains "$(reg field "$r" -1 note recipe=05-generated)" "01-build: latest run at ${head:0:12} is blocked" \
	"note of 05-generated"
assert_eq blocked "$(status_field "$M" fix-1 verdict)" "verdict"
assert_contains "$(status_field "$M" fix-1 last_error)" "gate refused" "last_error"
log=$(reg field "$r" -1 evidence recipe=01-build)
assert_contains "$(cat "$d/$log")" "not run: the worktree differs from its head ${head:0:12}" "log"
[ "$(reg count "$r" status=validated)" = 0 ] || fail "a recipe validated on a dirty worktree"

# Ignored files do not count; committing the file makes the head hold it.
git -C "$STORE/worktrees/fix-1" add generated.h
git -C "$STORE/worktrees/fix-1" commit -q -m "add the generated header"
printf 'ignored.o\n' >>"$(git -C "$STORE/worktrees/fix-1" rev-parse --git-common-dir)/info/exclude"
echo "object" >"$STORE/worktrees/fix-1/ignored.o"
ctl "$M" fix-1 "rerun failed"
wait_for bash -c '[ "$(python3 "$1" count "$2" status=validated)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
new=$(worktree_head fix-1)
assert_eq "$new" "$(reg field "$r" -1 head recipe=05-generated)" "head of the rerun"
assert_eq pass "$(settled fix-1 >/dev/null; status_field "$M" fix-1 verdict)" "verdict after the rerun"
assert_eq "$new" "$(status_field "$M" fix-1 verdict_head)" "verdict_head after the rerun"
exit 0
