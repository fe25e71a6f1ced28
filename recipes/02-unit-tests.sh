#!/usr/bin/env bash
# summary: run every test system of the worktree (meson test, ctest, make check/test, pytest)
# gpus: 0
# timeout: 1200
# version: meson --version
# version: cmake --version
# version: make --version
# version: pytest --version
#
# Runs with cwd = the item's worktree, and runs each test system the
# worktree has, in this order, each only when present:
#   meson   a meson.build: meson setup, meson test (which builds first);
#           JUnit XML from meson-logs/testlog.junit.xml
#   ctest   a CMakeLists.txt, with enable_testing(), include(CTest) or
#           add_test() in the project's CMake files: configure, build,
#           ctest --output-junit (CMake 3.21 and later)
#   make    a Makefile (or a ./configure script that writes one) whose check
#           or test target would run something (`make -q TARGET` says it is
#           not up to date): make check, else make test, in a copy of the
#           worktree
#   pytest  Python tests (test_*.py, *_test.py, conftest.py, pytest.ini):
#           python3 -m pytest --junitxml (or the pytest command, e.g.
#           Debian's python3-pytest beside another python3)
# So a project with a Makefile and CMake tests runs both: a `make test` that
# passes never hides a failing ctest.
#
# Everything it builds lies under .packetfs-build/ in the worktree, which
# holds a .gitignore of "*": git sees no new file, and the build directories
# stay for the next run (meson and CMake rebuild only what changed).
# Python writes no bytecode and pytest no cache there.
#
# With $PACKET_JUNIT set it writes there one JUnit XML file of every
# system's tests (recipes/lib/junit-merge.py; make's own run is one
# testcase, or one per test of automake's harness), from which the engine
# counts the tests; without it, .packetfs-build/junit.xml.
#
# Exit status: 0 every system present ran and passed, and at least one test
# ran; 1 a system failed (a failing test, a failed configure or build), or no
# test ran at all; 77 the worktree has no test system, or the tool of one is
# missing (and nothing failed).
set -uo pipefail # not -e: a system that fails is noted and the next one runs

# shellcheck disable=SC2034 # used by lib/report.sh
RECIPE=02-unit-tests
# shellcheck source=lib/report.sh
. "$(dirname "$0")/lib/report.sh"
have() { command -v "$1" >/dev/null 2>&1; }
# tools_for WHAT TOOL... : true when every TOOL is installed; else notes "WHAT, but TOOL or
# TOOL is not installed" in missing and is false.
tools_for() {
	local what=$1 t list
	shift
	for t in "$@"; do
		if ! have "$t"; then
			list=$(printf ' or %s' "$@")
			missing+=("$what, but ${list# or } is not installed")
			return 1
		fi
	done
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=.packetfs-build
mkdir -p "$out" || fail "cannot make $out"
[ -f "$out/.gitignore" ] || printf '*\n' >"$out/.gitignore" || fail "cannot write $out/.gitignore"
jobs=$(nproc 2>/dev/null || echo 2)
export PYTHONDONTWRITEBYTECODE=1

say "recipe:   ${RECIPE_NAME:-$RECIPE}"
say "worktree: $PWD"
say "head:     $(git rev-parse HEAD 2>/dev/null || echo '(not a git worktree)')"
say "builds:   $PWD/$out"

systems=()  # the test systems that ran
failed=()   # what failed
missing=()  # test systems whose tool is not installed
merge=()    # arguments of junit-merge.py

# --- meson -------------------------------------------------------------
if [ -f meson.build ]; then
	if tools_for meson.build meson ninja; then
		say ""
		say "== meson test"
		systems+=(meson)
		b=$out/meson
		ok=1
		if [ ! -f "$b/build.ninja" ]; then
			rm -rf "$b"
			run meson setup "$b" || ok=0
		fi
		if [ "$ok" = 1 ]; then
			rm -f "$b/meson-logs/testlog.junit.xml"
			run meson test -C "$b" --print-errorlogs || failed+=("meson test")
			merge+=(--junit meson "$b/meson-logs/testlog.junit.xml")
		else
			failed+=("meson setup")
		fi
	fi
fi

# --- ctest -------------------------------------------------------------
# Whether the project's CMake files enable tests.
cmake_tests() {
	grep -rqsiE --include=CMakeLists.txt --include='*.cmake' --exclude-dir=.git \
		--exclude-dir=.packetfs-build \
		'^[[:space:]]*(enable_testing|add_test|include[[:space:]]*\([[:space:]]*CTest)' .
}

if [ -f CMakeLists.txt ] && cmake_tests; then
	if tools_for "CMake tests" cmake ctest; then
		say ""
		say "== ctest"
		systems+=(ctest)
		b=$out/cmake
		if run cmake -S . -B "$b" && run cmake --build "$b" -j "$jobs"; then
			rm -f "$b/ctest-junit.xml"
			v=$(ctest --version | sed -n 's/^ctest version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
			major=${v% *} minor=${v#* }
			if [ "${major:-0}" -gt 3 ] || { [ "${major:-0}" = 3 ] && [ "${minor:-0}" -ge 21 ]; }; then
				(cd "$b" && run ctest --output-on-failure --output-junit ctest-junit.xml) ||
					failed+=(ctest)
				merge+=(--junit ctest "$b/ctest-junit.xml")
			else # no --output-junit: its run is one testcase
				rc=0
				(cd "$b" && run ctest --output-on-failure) 2>&1 | tee "$out/ctest.log" || rc=$?
				[ "$rc" = 0 ] || failed+=(ctest)
				merge+=(--make ctest "$out/ctest.log" "$rc")
			fi
		else
			failed+=("CMake configure or build")
		fi
	fi
fi

# --- make check / make test ------------------------------------------------
mk=""
for f in GNUmakefile makefile Makefile; do
	[ -f "$f" ] && mk=$f
done
if [ -n "$mk" ] || [ -x configure ]; then
	if tools_for "${mk:-configure}" make; then
		say ""
		say "== make check / make test"
		src=$out/make/src
		mkdir -p "$src"
		say "\$ copy the worktree -> $src (without .git and $out)"
		if have rsync; then
			# Ignored files are neither copied nor deleted: earlier build
			# outputs stay, so make rebuilds only what changed.
			rsync -a --delete --exclude=/.git --exclude="/$out" \
				--filter=':- .gitignore' ./ "$src/"
		else
			rm -rf "$src" && mkdir -p "$src" &&
				tar --exclude=./.git --exclude="./$out" -cf - . | tar -C "$src" -xf -
		fi || failed+=("copying the worktree")
		ok=1
		if [ -z "$mk" ] && [ ! -f "$src/Makefile" ]; then
			(cd "$src" && run ./configure) || ok=0
		fi
		target=""
		if [ "$ok" = 1 ]; then
			for t in check test; do
				rc=0
				make -C "$src" -q "$t" >/dev/null 2>"$out/make-q.err" || rc=$?
				case $rc in
				1)
					target=$t
					break
					;;
				0) say "make $t: up to date, would run nothing" ;;
				*)
					if ! grep -q "No rule to make target '$t'" "$out/make-q.err"; then
						say "\$ make -q $t"
						cat "$out/make-q.err"
						failed+=("make -q $t")
						break
					fi
					;;
				esac
			done
		else
			systems+=(configure)
			failed+=(configure)
		fi
		if [ -n "$target" ]; then
			systems+=("make $target")
			rc=0
			run make -C "$src" "$target" 2>&1 | tee "$out/make.log" || rc=$?
			[ "$rc" = 0 ] || failed+=("make $target")
			merge+=(--make "make $target" "$out/make.log" "$rc")
		elif [ "$ok" = 1 ]; then
			say "the $mk has no check or test target that would run something"
		fi
	fi
fi

# --- pytest --------------------------------------------------------------
if [ -n "$(find . \( -path ./.git -o -path "./$out" \) -prune -o -type f \
	\( -name 'test_*.py' -o -name '*_test.py' -o -name conftest.py -o -name pytest.ini \) \
	-print -quit 2>/dev/null)" ]; then
	pytest=()
	if python3 -c 'import pytest' >/dev/null 2>&1; then
		pytest=(python3 -m pytest)
	elif have pytest; then
		pytest=(pytest)
	elif have pytest-3; then
		pytest=(pytest-3)
	fi
	if [ "${#pytest[@]}" = 0 ]; then
		missing+=("Python tests, but pytest is not installed")
	else
		say ""
		say "== pytest"
		systems+=(pytest)
		mkdir -p "$out/pytest"
		rm -f "$out/pytest/junit.xml"
		rc=0
		run "${pytest[@]}" -p no:cacheprovider --ignore="$out" \
			--junitxml="$out/pytest/junit.xml" || rc=$?
		# 5: no test was collected, which the count below judges
		[ "$rc" = 0 ] || [ "$rc" = 5 ] || failed+=(pytest)
		merge+=(--junit pytest "$out/pytest/junit.xml")
	fi
fi

# --- verdict -------------------------------------------------------------
say ""
if [ "${#systems[@]}" = 0 ]; then
	[ "${#missing[@]}" = 0 ] || blocked "${missing[*]}"
	blocked "no test system in the worktree (meson.build, CMake tests, a Makefile with a" \
		"check or test target, Python tests)"
fi
totals=""
if [ "${#merge[@]}" -gt 0 ] && have python3; then
	say "== JUnit XML -> ${PACKET_JUNIT:-$out/junit.xml}"
	totals=$(python3 "$here/lib/junit-merge.py" "${PACKET_JUNIT:-$out/junit.xml}" "${merge[@]}") ||
		failed+=("merging the JUnit XML")
	say "$totals"
fi
[ "${#failed[@]}" = 0 ] || fail "${failed[*]} failed"
[ "${#missing[@]}" = 0 ] || blocked "${missing[*]}"
if [ -n "$totals" ]; then
	ran=$(sed -n 's/^total: ran=\([0-9]*\).*/\1/p' <<<"$totals")
	nfailed=$(sed -n 's/^total: .*failed=\([0-9]*\).*/\1/p' <<<"$totals")
	[ "${ran:-0}" -gt 0 ] || fail "no test ran (${systems[*]})"
	[ "${nfailed:-0}" = 0 ] || fail "$nfailed tests failed though every system exited 0"
fi
say "02-unit-tests: validated (${systems[*]})"
