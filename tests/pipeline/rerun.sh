#!/usr/bin/env bash
# rerun RECIPE runs one recipe again: the registry gains a line and the verdict is recomputed
# from the latest runs; an unknown recipe is refused with EINVAL.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint

ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
assert_eq 2 "$(reg count "$r")" "registry lines before rerun"
first=$(reg field "$r" 0 run recipe=01-build)

ctl "$M" fix-1 "rerun 01-build"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=01-build)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
assert_eq validated "$(reg field "$r" -1 status recipe=01-build)" "status of the rerun"
second=$(reg field "$r" -1 run recipe=01-build)
[ "$second" -gt "$first" ] || fail "rerun got run number $second, not above $first"
assert_eq 3 "$(reg count "$r")" "registry lines after one rerun"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# The recipe now fails: a rerun records it and the verdict follows the latest run.
printf '#!/usr/bin/env bash\n# summary: now failing\necho "lint: broken"\nexit 1\n' \
	>"$RECIPES/02-lint.sh"
ctl "$M" fix-1 "rerun 02-lint"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=02-lint)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
assert_eq failing "$(reg field "$r" -1 status recipe=02-lint)" "status of the failing rerun"
wait_for bash -c '[ "$(sed -n "s/^verdict: *//p" "$1")" = fail ]' _ "$d/status"
wait_for grep -q '\[1/2 validated\]' "$d/validation/evidence.md"
assert_eq "## Verdict: fail" "$(last_line "$d/change-validation.md")" "change-validation.md"

lines=$(reg count "$r")
assert_fails_with EINVAL sh_write "$d/ctl" $'rerun 99-no-such-recipe\n'
assert_fails_with EINVAL sh_write "$d/ctl" $'rerun\n'
assert_eq "$lines" "$(reg count "$r")" "registry lines after refused reruns"
exit 0
