#!/usr/bin/env bash
# A recipe that exits 1 is recorded failing, the verdict is fail, and the review gate refuses:
# the item is blocked with the reason, and review never runs. The change-validation.md packetfs
# writes has one H1, and its links lead to the logs from the item directory.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 03-fail

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
check_status "$M" fix-1
head=$(worktree_head fix-1)
# The reason names the recipe that failed, not only the verdict.
assert_eq "review: gate refused: verdict is fail, not pass (03-fail: latest run at ${head:0:12} is failing)" \
	"$(status_field "$M" fix-1 last_error)" "last_error of the blocked item"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_eq "1/2 validated" "$(status_field "$M" fix-1 evidence)" "status evidence"
assert_eq "## Verdict: fail" "$(last_line "$d/change-validation.md")" "change-validation.md"
# The change-validation.md packetfs writes has one H1, the evidence as its section, and links
# that lead from the item directory, where it is, to each run's log.
cv=$(cat "$d/change-validation.md")
assert_eq "# Change validation for fix-1" "$(grep '^# ' <<<"$cv")" "the H1 of change-validation.md"
assert_contains "$cv" "## Evidence for fix-1 [1/2 validated]" "change-validation.md"
links=$(grep -o '](\([^)]*\))' <<<"$cv" | sed 's/^](//; s/)$//')
assert_eq 2 "$(grep -c . <<<"$links")" "links in change-validation.md: $cv"
while read -r link; do
	case $link in validation/logs/*) ;; *) fail "change-validation.md links to $link" ;; esac
	[ -f "$d/$link" ] || fail "change-validation.md links to $link, which $d lacks"
done <<<"$links"

assert_eq 1 "$(reg count "$r" recipe=03-fail status=failing source=engine)" "failing 03-fail lines"
assert_eq 1 "$(reg field "$r" 0 exit_code recipe=03-fail)" "03-fail exit code"
assert_eq 1 "$(reg count "$r" recipe=01-build status=validated source=engine)" "validated 01-build"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=03-fail)")" \
	"this recipe fails on purpose" "03-fail log"
assert_contains "$(cat "$d/validation/evidence.md")" "[1/2 validated]" "evidence.md"

ls "$d/stages" | grep -Eq -- '-review\.log$' && fail "review ran despite a failing recipe"
[ ! -e "$d/review.md" ] || fail "review.md exists though review never ran"

# approve does not open the way past a refused gate.
printf 'approve\n' >"$d/ctl" 2>/dev/null || true
assert_eq blocked "$(status_field "$M" fix-1 state)" "state after approve"
ls "$d/stages" | grep -Eq -- '-(review|publish)\.log$' && fail "a later stage ran after approve"
exit 0
