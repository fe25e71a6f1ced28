#!/usr/bin/env bash
# A recipe needing a GPU on a pool of none ("gpus": 0) is recorded blocked without running; a
# recipe exiting 77 is blocked too; the verdict is blocked and the review gate refuses.
. "$(dirname "$0")/../lib.sh"
std_item 04-gpu 06-prereq

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
check_status "$M" fix-1
[ ! -e "$T/gpu-recipe-ran" ] || fail "the GPU recipe ran on a pool without GPUs"
assert_eq 1 "$(reg count "$r" recipe=04-gpu status=blocked source=engine)" "blocked 04-gpu lines"
assert_eq 0 "$(reg count "$r" recipe=04-gpu status=validated)" "validated 04-gpu lines"
assert_eq 1 "$(reg count "$r" recipe=06-prereq status=blocked source=engine)" "blocked 06-prereq"
assert_eq 77 "$(reg field "$r" 0 exit_code recipe=06-prereq)" "06-prereq exit code"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
note="$(reg field "$r" 0 note recipe=04-gpu)"
[ -n "$note" ] || fail "the blocked GPU recipe has no note saying why"

assert_eq blocked "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_eq "0/2 validated" "$(status_field "$M" fix-1 evidence)" "status evidence"
assert_eq "## Verdict: blocked" "$(last_line "$d/change-validation.md")" "change-validation.md"
[ -n "$(status_field "$M" fix-1 last_error)" ] || fail "blocked without a reason in last_error"
ls "$d/stages" | grep -Eq -- '-review\.log$' && fail "review ran with a blocked verdict"
exit 0
