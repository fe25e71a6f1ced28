#!/usr/bin/env bash
# summary: run the unit tests (meson test, make check or make test, ctest)
# gpus: 0
# timeout: 1200
#
# Runs with cwd = the item's worktree, in the build directory 01-build uses
# (${TMPDIR:-/tmp}/packetfs-build/<item>-<hash of the worktree path>),
# building first when needed; a lock file serializes it with 01-build.
#
# A test run that ran no test is failing, not validated: a meson project
# without tests (or whose tests all skipped), a CMake project without
# tests, a Makefile whose check target does nothing or whose output says
# "0 passed" / "# TOTAL: 0".
#
# Exit status: 0 tests ran and passed, 77 no build system or tool missing,
# 1 a test failed, the build failed, or no test ran.
set -euo pipefail

# shellcheck disable=SC2034 # used by lib/build-common.sh
RECIPE=02-unit-tests
WANT_CTEST=1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck source=lib/build-common.sh
. "$(dirname "$0")/lib/build-common.sh"

# Runs "$@", echoing its output and keeping a copy in $out.
run_logged() {
	say "\$ $*"
	local rc=0
	"$@" 2>&1 | tee "$out" || rc=$?
	return "$rc"
}

# The last number a regular expression captures in $out ("" when none).
last_count() {
	grep -oE "$1" "$out" | tail -n 1 | grep -oE '[0-9]+' | head -n 1 || true
}

# Zero-test detection for make check / make test output.
check_make_output() {
	local target=$1 n
	if grep -qE "Nothing to be done for .?$target|.?$target.? is up to date" "$out"; then
		fail "'make $target' ran nothing: no tests"
	fi
	n=$(last_count '# TOTAL: *[0-9]+')
	if [ -n "$n" ]; then
		[ "$n" -gt 0 ] || fail "the test suite reports '# TOTAL: 0': no test ran"
		n=$(last_count '# PASS: *[0-9]+')
		[ "${n:-0}" -gt 0 ] || fail "the test suite reports no passed test"
		say "02-unit-tests: $(last_count '# TOTAL: *[0-9]+') tests counted (automake summary)"
		return 0
	fi
	n=$(last_count '(^|[^0-9])[0-9]+ (tests? )?passed')
	if [ -z "$n" ]; then
		n=$(last_count 'Ran [0-9]+ tests?')
	fi
	if [ -z "$n" ]; then
		n=$(last_count 'All [0-9]+ tests')
	fi
	if [ -n "$n" ]; then
		[ "$n" -gt 0 ] || fail "the test output reports 0 tests passed: no test ran"
		say "02-unit-tests: $n tests passed"
		return 0
	fi
	say "02-unit-tests: note: no test count found in the output; exit status 0 accepted"
}

# Which of check / test the Makefile in $1 defines ("" when neither).
make_target() {
	local t
	for t in check test; do
		if make -C "$1" -n "$t" >/dev/null 2>&1; then
			printf '%s' "$t"
			return 0
		fi
	done
}

case $kind in
meson)
	if [ ! -f "$bdir/build.ninja" ]; then
		rm -rf "$bdir"
		run meson setup "$bdir" "$src" || fail "meson setup failed"
	fi
	run ninja -C "$bdir" || fail "the build failed"
	ntests=$(meson test -C "$bdir" --no-rebuild --list 2>/dev/null |
		grep -cvE '^(No tests defined|ninja: )' || true)
	[ "$ntests" -gt 0 ] || fail "the meson project defines no tests: no test ran"
	say "02-unit-tests: $ntests tests defined"
	run_logged meson test -C "$bdir" --print-errorlogs || fail "meson test reported failures"
	ok=$(last_count '^Ok: *[0-9]+')
	xfail=$(last_count '^Expected Fail: *[0-9]+')
	if [ $((${ok:-0} + ${xfail:-0})) -eq 0 ]; then
		fail "no test passed (every test was skipped): no test ran"
	fi
	;;
make | configure)
	copy_tree
	if [ "$kind" = configure ] && [ ! -f "$bdir/src/Makefile" ]; then
		(cd "$bdir/src" && run ./configure) || fail "configure failed"
	fi
	target=$(make_target "$bdir/src")
	[ -n "$target" ] || fail "the Makefile has neither a check nor a test target: no tests to run"
	run_logged make -C "$bdir/src" "$target" || fail "make $target failed"
	check_make_output "$target"
	;;
cmake)
	run cmake -S "$src" -B "$bdir" || fail "cmake configure failed"
	run cmake --build "$bdir" -j 2 || fail "the build failed"
	ntests=$(cd "$bdir" && ctest -N | sed -n 's/^Total Tests: *\([0-9]*\).*/\1/p')
	[ "${ntests:-0}" -gt 0 ] || fail "the CMake project defines no tests (ctest -N): no test ran"
	say "02-unit-tests: $ntests tests defined"
	(cd "$bdir" && run_logged ctest --output-on-failure) || fail "ctest reported failures"
	;;
esac

say "02-unit-tests: validated"
