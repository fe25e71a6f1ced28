#!/usr/bin/env bash
# The shipped recipe 02-unit-tests runs every test system of the worktree. On a project with a
# Makefile whose test target runs the program (which prints no test summary and exits 0) and a
# CMakeLists.txt whose ctest test fails, the run is failing: the passing `make test` does not
# hide the failing ctest, and both are in the JUnit XML the engine counts. Once the CMake test
# is fixed, a rerun is validated with the counts of both ("3 tests ran (JUnit XML)"); with
# Python tests added, pytest runs too; without any test system the recipe is blocked. Its build
# directories leave the worktree clean.
. "$(dirname "$0")/../lib.sh"
for tool in cmake ctest make cc pytest; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "SKIP: $tool is not installed (tests/run.sh installs cmake and python3-pytest)" >&2
		exit 77
	}
done
make_repo
# hello.c as make_repo wrote it; print.sh makes it say "hello, new world (iteration N)".
cat >"$REPO/Makefile" <<'EOF'
hello: hello.c
	$(CC) -Wall -o hello hello.c

test: hello
	./hello

.PHONY: test
EOF
cat >"$REPO/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(hello C)
add_executable(hello hello.c)
enable_testing()
add_test(NAME hello_runs COMMAND hello)
add_test(NAME greeting COMMAND sh -c "$<TARGET_FILE:hello> | grep -q 'hello, world'")
EOF
git -C "$REPO" add -A
git -C "$REPO" commit -q -m "make test and ctest"
RECIPES=$T/recipes
mkdir -p "$RECIPES/lib"
cp "$ROOT/recipes/02-unit-tests.sh" "$RECIPES/"
cp "$ROOT/recipes/lib/junit-merge.py" "$ROOT/recipes/lib/report.sh" "$RECIPES/lib/"
PLAN_RECIPES=02-unit-tests std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
wt=$STORE/worktrees/fix-1

ctl "$M" fix-1 advance
wait_for bash -c 'case "$(sed -n "s/^state: *//p" "$1")" in running | queued) exit 1 ;; esac' \
	_ "$d/status"
assert_eq 1 "$(reg count "$r" recipe=02-unit-tests)" "02-unit-tests lines"
assert_eq failing "$(reg field "$r" 0 status recipe=02-unit-tests)" "status with a failing ctest"
assert_eq 1 "$(reg field "$r" 0 exit_code recipe=02-unit-tests)" "exit code"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=02-unit-tests)")
assert_contains "$log" "== ctest" "log"
assert_contains "$log" "greeting (Failed)" "log: ctest's failure"
assert_contains "$log" "== make check / make test" "log"
assert_contains "$log" "hello, new world" "log: make test ran the program"
assert_contains "$log" "ctest: 2 tests ran, 1 failed, 0 skipped" "log: ctest's counts"
assert_contains "$log" "make test: 1 test ran, 0 failed, 0 skipped" "log: make test's counts"
assert_contains "$log" "02-unit-tests: FAILING: ctest failed" "log"
assert_eq fail "$(status_field "$M" fix-1 verdict)" "verdict"
assert_eq "" "$(git -C "$wt" status --porcelain)" "git status of the worktree after the run"
[ -f "$wt/.packetfs-build/.gitignore" ] || fail "no .packetfs-build/.gitignore in the worktree"

# The CMake test fixed: both systems pass, and the engine counts them from the JUnit XML.
sed -i "s/hello, world/hello, new world/" "$wt/CMakeLists.txt"
git -C "$wt" commit -q -a -m "the greeting test expects the new greeting"
ctl "$M" fix-1 "rerun 02-unit-tests"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=02-unit-tests)" = 2 ]' _ \
	"$FIXTURES/registry.py" "$r"
assert_eq validated "$(reg field "$r" -1 status recipe=02-unit-tests)" "status once fixed"
assert_eq "3 tests ran (JUnit XML)" "$(reg field "$r" -1 note recipe=02-unit-tests)" \
	"note once fixed"
assert_eq "" "$(git -C "$wt" status --porcelain)" "git status of the worktree after the rerun"

# Python tests too: pytest runs after make, its tests are counted with the others.
cat >"$wt/test_greeting.py" <<'PY'
import pytest


def test_greeting_is_new():
    assert "new world" in open("hello.c").read()


@pytest.mark.skip(reason="not today")
def test_later():
    pass
PY
git -C "$wt" add test_greeting.py
git -C "$wt" commit -q -m "a Python test"
ctl "$M" fix-1 "rerun 02-unit-tests"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=02-unit-tests)" = 3 ]' _ \
	"$FIXTURES/registry.py" "$r"
assert_eq validated "$(reg field "$r" -1 status recipe=02-unit-tests)" "status with pytest"
assert_eq "4 tests ran, 1 skipped (JUnit XML)" "$(reg field "$r" -1 note recipe=02-unit-tests)" \
	"note with pytest"
assert_contains "$(cat "$d/$(reg field "$r" -1 evidence recipe=02-unit-tests)")" \
	"pytest: 1 test ran, 0 failed, 1 skipped" "log with pytest"
assert_eq "!! .packetfs-build/" "$(git -C "$wt" status --porcelain --ignored)" \
	"what git sees in the worktree (no __pycache__, no pytest cache)"

# No test system at all: blocked.
git -C "$wt" rm -q Makefile CMakeLists.txt test_greeting.py
git -C "$wt" commit -q -m "no build system"
ctl "$M" fix-1 "rerun 02-unit-tests"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=02-unit-tests)" = 4 ]' _ \
	"$FIXTURES/registry.py" "$r"
assert_eq blocked "$(reg field "$r" -1 status recipe=02-unit-tests)" "status without tests"
assert_contains "$(cat "$d/$(reg field "$r" -1 evidence recipe=02-unit-tests)")" \
	"02-unit-tests: BLOCKED: no test system in the worktree" "log without tests"
exit 0
