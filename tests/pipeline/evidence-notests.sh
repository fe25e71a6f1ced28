#!/usr/bin/env bash
# A recipe that exits 0 but whose test runner ran no test is recorded failing, not validated,
# with the reason in its note and its log: meson test on a project without tests (a real meson
# run), pytest that collected nothing, ctest whose only test was skipped, automake's
# "# TOTAL: 0", a plain "0 passed, 0 failed". Recipes whose tests ran (a real meson test, a
# ctest summary followed by more output) and recipes without a summary stay validated.
. "$(dirname "$0")/../lib.sh"
copy_recipes notests
names="01-build 10-meson-none 11-meson-tests 12-pytest-none 13-ctest-skipped 14-automake-zero
15-plain-zero 16-ctest-ran"
# shellcheck disable=SC2086
std_item $names

ctl "$M" fix-1 advance
# The verdict is fail: the review gate refuses (waiting at publish would mean it passed).
wait_for bash -c 'case "$(sed -n "s/^state: *//p" "$1")" in running | queued) exit 1 ;; esac' \
	_ "$d/status"
assert_eq blocked "$(status_field "$M" fix-1 state)" "state after validation"
assert_eq 8 "$(reg count "$r" source=engine)" "registry lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

if command -v meson >/dev/null 2>&1; then
	meson_status=failing meson_ok=validated
else
	meson_status=blocked meson_ok=blocked
	note "meson is not installed: the meson recipes are blocked"
fi

# expect RECIPE STATUS NOTE
expect()
{
	assert_eq "$2" "$(reg field "$r" 0 status recipe="$1")" "status of $1"
	assert_eq "$3" "$(reg field "$r" 0 note recipe="$1")" "note of $1"
	if [ "$2" = failing ]; then
		assert_eq 0 "$(reg field "$r" 0 exit_code recipe="$1")" "exit code of $1"
		assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe="$1")")" \
			"# packetfs: status failing: $3" "log of $1"
	fi
}
expect 01-build validated ""
if [ "$meson_status" = failing ]; then
	expect 10-meson-none failing "no tests ran (meson test)"
	expect 11-meson-tests validated ""
fi
expect 12-pytest-none failing "no tests ran (pytest)"
expect 13-ctest-skipped failing "no tests ran (ctest)"
expect 14-automake-zero failing "no tests ran (make check)"
expect 15-plain-zero failing "no tests ran (test summary)"
expect 16-ctest-ran validated ""

assert_eq fail "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_eq "## Verdict: fail" "$(last_line "$d/change-validation.md")" "change-validation.md"
ev=$(cat "$d/validation/evidence.md")
assert_contains "$ev" "| 12-pytest-none | failing |" "evidence.md"
assert_contains "$ev" "| no tests ran (pytest) |" "evidence.md"
if [ "$meson_status" = failing ]; then
	assert_contains "$ev" "[3/8 validated]" "evidence.md"
fi
ls "$d/stages" | grep -Eq -- '-review\.log$' && fail "review ran though no test ran"
exit 0
