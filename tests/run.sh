#!/usr/bin/env bash
# tests/run.sh - builds packetfs and runs its whole test suite.
#
#	bash tests/run.sh [--sanitize] [PATTERN...]
#
# 1. Runs the setup step, tests/setup.sh: installs the build and test dependencies that are
#    missing (Debian packages; apt-get update runs only when something is missing).
# 2. Builds with meson into build/ (or build-asan/ with --sanitize: address and undefined
#    behaviour sanitizers) at the root of the source tree, wherever this is called from, with
#    the engine's assert()s on (-Db_ndebug=false, also in a build directory set up before).
# 3. Runs the unit tests (meson test --suite unit): each unit test program counts as one test.
#    Then the parsers' libFuzzer harnesses (tests/fuzz/README.md), each over its seed corpus
#    plus 10 s of fuzzing, built with clang into build-fuzz/: one test "fuzz/NAME" each,
#    skipped (with the reason) where clang's libFuzzer is missing.
# 4. Starts a one-node Slurm cluster for the slurm executor's tests (tests/slurm-cluster.sh,
#    private configuration and ports, stopped at the end); where it cannot start, those tests
#    are skipped and the reason is printed.
# 5. Runs the source tree's checks tests/tree/*.sh, then every integration test
#    tests/{fs,pipeline,bad}/*.sh, each in a process of its own under a timeout; each
#    integration test on a fresh store and mount.
# 6. Runs pjdfstest (../shared/third_party/pjdfstest, built into build-pjdfstest/) inside an
#    item of a store mounted -o allow_other,default_permissions: each test file is a test
#    "pjdfstest/DIR/NN.t"; the files tests/pjdfstest/known-failures lists (each with the reason it
#    fails, and whether it fails on ext4 too) print "XFAIL name (reason)" and count neither way.
#
# Prints "PASS name", "FAIL name" (with the tail of the failing output) or "SKIP name (why)" (a
# test that exits 77) per test and ends with the failures again, then the line "N passed, M
# failed" (after "# K skipped" when some were); exits 0 only when nothing failed. PATTERNs (e.g. "fs/" or
# "pipeline/full") restrict the run to the tests whose name contains one of them; "unit" selects
# the unit tests. PFS_BUILD_DIR names another build directory (relative to the source root or
# absolute); PFS_TEST_TIMEOUT changes the per-test timeout (default 120 s). A test that needs
# longer says so in a header line "# test-timeout: SECONDS" (the larger of the two applies).
#
# The same tests run under `meson test -C BUILD` too (tests/meson.build: suites unit, tree, fs,
# pipeline, bad, pjdfstest, each shell test reported in TAP by tests/tap.sh), once
# tests/setup.sh has installed what they need.

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

SANITIZE=0
SANDIR=""
PATTERNS=()
for arg in "$@"; do
	case "$arg" in
	--sanitize) SANITIZE=1 ;;
	-h | --help)
		sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "tests/run.sh: unknown option: $arg" >&2
		exit 2
		;;
	*) PATTERNS+=("$arg") ;;
	esac
done

TEST_TIMEOUT=${PFS_TEST_TIMEOUT:-120}
PASSED=0
FAILED=0
SKIPPED=0
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-run.XXXXXX")
[ -n "${PFS_KEEP:-}" ] || trap 'rm -rf "$LOGDIR"' EXIT

pass()
{
	PASSED=$((PASSED + 1))
	echo "PASS $1"
}

# fail NAME LOGFILE [WHY]
fail()
{
	FAILED=$((FAILED + 1))
	{
		echo "FAIL $1${3:+ ($3)}"
		if [ -s "${2:-}" ]; then
			grep -a -m 3 '^FAIL: ' "$2" | cat -v | sed 's/^/    | /'
			grep -av '^FAIL: ' "$2" | tail -n 30 | cat -v | sed 's/^/    | /'
		fi
	} | tee -a "$LOGDIR/failures"
}

# Ends the run: the failures once more (a reader of the output's tail alone sees them all),
# the counts, and the exit status.
finish()
{
	if [ "$FAILED" != 0 ]; then
		echo "# the $FAILED failures again:"
		cat "$LOGDIR/failures"
	fi
	[ "$SKIPPED" = 0 ] || echo "# $SKIPPED skipped"
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
	exit
}

selected()
{
	local p
	[ "${#PATTERNS[@]}" = 0 ] && return 0
	for p in "${PATTERNS[@]}"; do
		case "$1" in
		*"$p"*) return 0 ;;
		esac
	done
	return 1
}

# The setup step (tests/setup.sh): the packages that are missing.
if ! bash tests/setup.sh --log "$LOGDIR/apt.log"; then
	fail install "$LOGDIR/apt.log"
	finish
fi

if [ "$SANITIZE" = 1 ]; then
	BUILD=${PFS_BUILD_DIR:-build-asan}
	SETUP_OPTS=(-Db_sanitize=address,undefined -Db_lundef=false -Db_ndebug=false)
	# Daemons write to /dev/null: their reports go to files under $SANDIR instead, which
	# fail the test that made them.
	SANDIR=$LOGDIR/sanitizer
	mkdir -p "$SANDIR"
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:log_path=$SANDIR/asan}
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/lsan.supp}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$SANDIR/ubsan}
else
	BUILD=${PFS_BUILD_DIR:-build}
	SETUP_OPTS=(-Db_ndebug=false)
fi

echo "# building in $BUILD"
if [ ! -f "$BUILD/build.ninja" ]; then
	# A directory left by a failed setup cannot be set up again in place.
	[ ! -d "$BUILD/meson-private" ] || rm -rf "$BUILD"
	if ! meson setup "$BUILD" "${SETUP_OPTS[@]}" >"$LOGDIR/setup.log" 2>&1; then
		fail build "$LOGDIR/setup.log" "meson setup"
		finish
	fi
elif ! grep -q '"name": "b_ndebug", "value": "false"' "$BUILD/meson-info/intro-buildoptions.json" &&
	! meson configure "$BUILD" -Db_ndebug=false >"$LOGDIR/setup.log" 2>&1; then
	fail build "$LOGDIR/setup.log" "meson configure -Db_ndebug=false"
	finish
fi
if ! ninja -C "$BUILD" >"$LOGDIR/build.log" 2>&1; then
	fail build "$LOGDIR/build.log" "ninja"
	finish
fi
BUILD=$(cd "$BUILD" && pwd)
export PACKETFS_BIN="$BUILD/cli/packetfs"

# Unit tests: meson's machine-readable log gives one result per test program.
run_unit_tests()
{
	local log=$LOGDIR/unit.log results rc=0 name result
	rm -f "$BUILD/meson-logs/testlog.json"
	meson test -C "$BUILD" --suite unit --print-errorlogs >"$log" 2>&1 || rc=$?
	if [ ! -f "$BUILD/meson-logs/testlog.json" ]; then
		fail unit "$log" "meson test wrote no results"
		return
	fi
	results=$(python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        t = json.loads(line)
        # "packetfs:unit / util" where the project names suites: the test's own name
        print(t["name"].split(" / ")[-1], t["result"])
PY
	) || {
		fail unit "$log" "unreadable meson test log"
		return
	}
	if [ -z "$results" ]; then
		[ "$rc" = 0 ] || fail unit "$log" "meson test failed"
		return
	fi
	while read -r name result; do
		case "$result" in
		OK | EXPECTEDFAIL) pass "unit/$name" ;;
		SKIP) echo "SKIP unit/$name" ;;
		*)
			python3 - "$BUILD/meson-logs/testlog.json" "$name" >"$LOGDIR/unit-$name.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.strip():
        t = json.loads(line)
        if t["name"].split(" / ")[-1] == sys.argv[2]:
            print(t.get("stdout") or "")
            print(t.get("stderr") or "")
PY
			fail "unit/$name" "$LOGDIR/unit-$name.log" "$result"
			;;
		esac
	done <<<"$results"
}

if selected unit; then
	echo "# unit tests"
	run_unit_tests
fi

# The fuzz harnesses' quick form: built once (under a timeout of its own), then each run.
run_fuzz_quick()
{
	local names=() name rc=0 log=$LOGDIR/fuzz-build.log why
	for name in $(bash tests/fuzz/run.sh --list); do
		selected "fuzz/$name" && names+=("$name")
	done
	[ "${#names[@]}" -gt 0 ] || return 0
	echo "# fuzz harnesses (quick: corpus plus 10 s each)"
	timeout -k 10 900 bash tests/fuzz/run.sh --build-only >"$log" 2>&1 || rc=$?
	if [ "$rc" = 77 ]; then
		why=$(sed -n 's/^SKIP: //p' "$log" | head -n 1)
		for name in "${names[@]}"; do
			SKIPPED=$((SKIPPED + 1))
			echo "SKIP fuzz/$name ($why)"
		done
		return 0
	elif [ "$rc" != 0 ]; then
		fail fuzz/build "$log"
		return 0
	fi
	for name in "${names[@]}"; do
		log=$LOGDIR/fuzz-$name.log
		rc=0
		PFS_FUZZ_WORK=$LOGDIR/fuzz-work timeout -k 10 "$TEST_TIMEOUT" \
			bash tests/fuzz/run.sh 10 "$name" >"$log" 2>&1 || rc=$?
		case "$rc" in
		0) pass "fuzz/$name" ;;
		124 | 137) fail "fuzz/$name" "$log" "timed out after ${TEST_TIMEOUT}s" ;;
		*) fail "fuzz/$name" "$log" ;;
		esac
	done
}
run_fuzz_quick

# sweep DIR: what the test that ran with TMPDIR=DIR left behind, undone.
# shellcheck source=sweep.sh
. tests/sweep.sh

# The one-node Slurm cluster of the slurm executor's tests (tests/slurm-cluster.sh); they are
# skipped, saying why, only where it cannot start.
SLURM_DIR=$LOGDIR/slurm
if out=$(bash tests/slurm-cluster.sh start "$SLURM_DIR" 2>&1); then
	export "${out##*$'\n'}"
	echo "# Slurm test cluster up ($SLURM_CONF)"
	trap 'bash tests/slurm-cluster.sh stop "$SLURM_DIR"; [ -n "${PFS_KEEP:-}" ] || rm -rf "$LOGDIR"' EXIT
else
	unset SLURM_CONF
	export PFS_SLURM_WHY="slurmctld cannot start: $(echo "$out" | head -n 1)"
	echo "# $PFS_SLURM_WHY"
fi

echo "# integration tests (PACKETFS_BIN=$PACKETFS_BIN)"
[ -e /dev/fuse ] || echo "# warning: /dev/fuse is missing; mounts will fail"
for script in tests/tree/*.sh tests/fs/*.sh tests/pipeline/*.sh tests/bad/*.sh; do
	[ -f "$script" ] || continue
	name=${script#tests/}
	name=${name%.sh}
	selected "$name" || continue
	log=$LOGDIR/$(echo "$name" | tr / -).log
	tmp=$LOGDIR/tmp-$(echo "$name" | tr / -)
	mkdir -p "$tmp"
	rc=0
	limit=$(sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -n 1)
	[ -n "$limit" ] && [ "$limit" -gt "$TEST_TIMEOUT" ] || limit=$TEST_TIMEOUT
	TMPDIR=$tmp timeout -k 10 "$limit" bash "$script" </dev/null >"$log" 2>&1 || rc=$?
	sweep "$tmp"
	if [ -n "${SANDIR:-}" ] && [ -n "$(ls -A "$SANDIR")" ]; then
		# Reports of suppressed leaks only (a summary table) are no failure.
		if grep -qE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$SANDIR"/*; then
			cat "$SANDIR"/* >>"$log"
			[ "$rc" != 0 ] || rc=99
		fi
		rm -f "$SANDIR"/*
	fi
	case "$rc" in
	0) pass "$name" ;;
	77)
		SKIPPED=$((SKIPPED + 1))
		echo "SKIP $name ($(sed -n 's/^SKIP: //p' "$log" | head -n 1))"
		;;
	124 | 137) fail "$name" "$log" "timed out after ${limit}s" ;;
	99) fail "$name" "$log" "sanitizer report" ;;
	*) fail "$name" "$log" ;;
	esac
done

# pjdfstest inside an item (tests/pjdfstest/run.sh): one test "pjdfstest/DIR/NN.t" per test file.
# A file listed in tests/pjdfstest/known-failures, with the reason, is reported XFAIL and counts
# neither way; one listed that passes fails, so that the list only shrinks.
run_pjdfstest()
{
	local names=() f log=$LOGDIR/pjdfstest.log out=$LOGDIR/pjdfstest.out rc=0 line why
	local known=tests/pjdfstest/known-failures
	for f in $(bash tests/pjdfstest/run.sh --list 2>/dev/null); do
		selected "pjdfstest/$f" && names+=("$f")
	done
	[ "${#names[@]}" -gt 0 ] || return 0
	echo "# pjdfstest inside an item (-o allow_other,default_permissions)"
	timeout -k 10 3600 bash tests/pjdfstest/run.sh --out "$out" "${names[@]}" \
		>"$log" 2>&1 || rc=$?
	if [ "$rc" = 77 ]; then
		why=$(sed -n 's/^SKIP: //p' "$log" | head -n 1)
		SKIPPED=$((SKIPPED + ${#names[@]}))
		echo "SKIP pjdfstest/* (${#names[@]} files: $why)"
		return 0
	elif [ "$rc" != 0 ]; then
		fail pjdfstest "$log" "exit status $rc"
		return 0
	fi
	for f in "${names[@]}"; do
		line=$(grep -m 1 -E "^(not )?ok $f( |\$)" "$out")
		why=$(awk -v f="$f" '$1 == f { $1 = ""; sub(/^ +/, ""); print; exit }' "$known")
		case "$line" in
		"ok $f")
			if [ -n "$why" ]; then
				fail "pjdfstest/$f" "" "passes now: remove it from $known"
			else
				pass "pjdfstest/$f"
			fi
			;;
		"not ok $f"*)
			if [ -n "$why" ]; then
				echo "XFAIL pjdfstest/$f ($why)"
			else
				fail "pjdfstest/$f" "build-pjdfstest/logs/${f//\//-}.log" "${line#not ok "$f" }"
			fi
			;;
		*) fail "pjdfstest/$f" "$log" "no result" ;;
		esac
	done
}
run_pjdfstest

finish
