#!/usr/bin/env bash
# summary: build the project (meson, make, cmake or configure+make) out of tree
# gpus: 0
# timeout: 900
#
# Runs with cwd = the item's worktree. The build happens in the worktree's
# .packetfs-build/01-build/, which git ignores (.packetfs-build/ holds a
# .gitignore of "*"), so the worktree stays exactly as the printer left it
# and the build output belongs to the user who runs the recipe, no one
# else. Meson and CMake build there directly; a Makefile or configure
# project is copied there first (without .git and .packetfs-build). A lock
# file serializes runs that would share it.
#
# Exit status: 0 built, 77 no build system found or its tool is missing,
# 1 the build failed.
set -euo pipefail

# shellcheck disable=SC2034 # used by lib/build-common.sh
RECIPE=01-build
# shellcheck source=lib/build-common.sh
. "$(dirname "$0")/lib/build-common.sh"

case $kind in
meson)
	if [ ! -f "$bdir/build.ninja" ]; then
		rm -rf "$bdir"
		run meson setup "$bdir" "$src" || fail "meson setup failed"
	fi
	run ninja -C "$bdir" || fail "ninja failed"
	;;
make)
	copy_tree
	run make -C "$bdir/src" -j2 || fail "make failed"
	;;
cmake)
	run cmake -S "$src" -B "$bdir" || fail "cmake configure failed"
	run cmake --build "$bdir" -j 2 || fail "cmake --build failed"
	;;
configure)
	copy_tree
	if [ ! -f "$bdir/src/Makefile" ]; then
		(cd "$bdir/src" && run ./configure) || fail "configure failed"
	fi
	run make -C "$bdir/src" -j2 || fail "make failed"
	;;
esac

say "01-build: validated ($kind build in $bdir)"
