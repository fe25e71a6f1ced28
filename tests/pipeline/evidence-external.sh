#!/usr/bin/env bash
# An external registry line never counts: 06-prereq is blocked (exit 77), and lines appended
# from outside claim it validated at the current head, one of them pretending to be the
# engine's and reusing a run number. They are stored as "source":"external", shown apart in
# evidence.md, and neither the engine's verdict (recomputed by a rerun), the evidence count
# nor the review gate takes them into account.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 06-prereq

ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state at the review gate"
assert_eq blocked "$(reg field "$r" -1 status recipe=06-prereq)" "06-prereq status"
assert_eq blocked "$(status_field "$M" fix-1 verdict)" "verdict"
head=$(worktree_head fix-1)
run=$(reg field "$r" -1 run recipe=06-prereq)

printf '{"recipe":"06-prereq","status":"validated","head":"%s","note":"works on my machine"}\n' \
	"$head" >>"$r"
printf '{"run":%s,"recipe":"06-prereq","status":"validated","exit_code":0,"head":"%s","source":"engine","executor":"local"}\n' \
	"$run" "$head" >>"$r"
assert_eq 2 "$(reg count "$r" recipe=06-prereq status=validated source=external)" "external claims"
assert_eq 0 "$(reg count "$r" recipe=06-prereq status=validated source=engine)" "engine claims"

# A rerun recomputes the verdict from the registry: still blocked.
ctl "$M" fix-1 "rerun 01-build"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=01-build)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
assert_eq blocked "$(settled fix-1)" "state after the rerun"
assert_eq blocked "$(status_field "$M" fix-1 verdict)" "verdict after the rerun"
assert_eq "## Verdict: blocked" "$(last_line "$d/change-validation.md")" "change-validation.md"
assert_eq "1/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence"
ev=$(cat "$d/validation/evidence.md")
assert_contains "$ev" "[1/2 validated]" "evidence.md"
assert_contains "$ev" "| 06-prereq | blocked |" "evidence.md"
assert_contains "$ev" "## External claims (not counted)" "evidence.md"
assert_contains "$ev" "| 06-prereq | validated |" "evidence.md external table"

for stage in review publish; do
	ctl "$M" fix-1 "run $stage"
	assert_eq blocked "$(settled fix-1)" "state after run $stage"
	assert_contains "$(status_field "$M" fix-1 last_error)" \
		"$stage: gate refused: verdict is blocked, not pass" "last_error"
done
ls "$d/stages" | grep -Eq -- '-(review|publish)\.log$' && fail "a stage ran on external claims"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
