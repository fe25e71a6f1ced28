#!/usr/bin/env bash
# A recipe runs with cwd = the item worktree and env PACKET_* plus RECIPE_NAME; its log has
# its output between a header and a footer.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 05-env)" "$(print_stage)" "$(validate_stage)"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
assert_eq 1 "$(reg count "$r" recipe=05-env status=validated source=engine)" "validated 05-env"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=05-env)")
assert_contains "$log" "CWD=$(readlink -f "$STORE/worktrees/fix-1")" "05-env log: cwd"
assert_contains "$log" "RECIPE_NAME=05-env" "05-env log"
assert_contains "$log" "PACKET_ITEM=fix-1" "05-env log"
assert_contains "$log" "PACKET_BRANCH=packetfs/fix-1" "05-env log"
# The output sits between the header and the footer.
first=$(printf '%s\n' "$log" | head -n 1)
last=$(printf '%s\n' "$log" | grep -v '^[[:space:]]*$' | tail -n 1)
assert_not_contains "$first" "CWD=" "first line of the log (header expected)"
assert_not_contains "$last" "RECIPE_NAME=" "last line of the log (footer expected)"
assert_eq "## Verdict: pass" "$(last_line "$d/change-validation.md")" "change-validation.md"
exit 0
