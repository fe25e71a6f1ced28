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
