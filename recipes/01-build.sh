#!/usr/bin/env bash
# summary: build the project (meson, make, cmake or configure+make) out of tree
# gpus: 0
# timeout: 900
#
# Runs with cwd = the item's worktree. The build happens in a directory
# outside the worktree, so the worktree stays exactly as the printer left
# it: ${TMPDIR:-/tmp}/packetfs-build/<item>-<hash of the worktree path>.
# Meson and CMake build there directly; a Makefile or configure project is
# copied there first (without .git). 02-unit-tests uses the same directory;
# a lock file serializes the two when they run in parallel.
#
# Exit status: 0 built, 77 no build system found or its tool is missing,
# 1 the build failed.
set -euo pipefail

say() { printf '%s\n' "$*"; }
fail() { say "01-build: FAILING: $*"; exit 1; }
blocked() { say "01-build: BLOCKED: $*"; exit 77; }
run() {
	say "\$ $*"
	"$@"
}
need() {
	command -v "$1" >/dev/null 2>&1 || blocked "$2 project, but '$1' is not installed"
}

src=$PWD
key="${PACKET_ITEM:-local}-$(printf '%s' "$src" | sha256sum | cut -c1-12)"
bdir="${TMPDIR:-/tmp}/packetfs-build/$key"
mkdir -p "${bdir%/*}"

say "recipe:   ${RECIPE_NAME:-01-build}"
say "worktree: $src"
say "head:     $(git rev-parse HEAD 2>/dev/null || echo '(not a git worktree)')"
say "builddir: $bdir"

if [ -f meson.build ]; then
	kind=meson
	need meson Meson
	need ninja Meson
elif [ -f Makefile ] || [ -f makefile ] || [ -f GNUmakefile ]; then
	kind="make"
	need make Make
elif [ -f CMakeLists.txt ]; then
	kind=cmake
	need cmake CMake
elif [ -x configure ]; then
	kind=configure
	need make Autoconf
else
	blocked "no meson.build, Makefile, CMakeLists.txt or configure script in the worktree"
fi
say "system:   $kind"

exec 9>"$bdir.lock"
if command -v flock >/dev/null 2>&1; then
	flock 9
fi

# Copies the worktree into $bdir/src for the in-tree build systems.
copy_tree() {
	say "\$ copy $src -> $bdir/src (without .git)"
	mkdir -p "$bdir/src"
	if command -v rsync >/dev/null 2>&1; then
		# Ignored files are neither copied nor deleted: earlier build
		# outputs stay, so make rebuilds only what changed.
		rsync -a --delete --exclude=.git --filter=':- .gitignore' "$src/" "$bdir/src/"
	else
		rm -rf "$bdir/src"
		mkdir -p "$bdir/src"
		tar -C "$src" --exclude=.git -cf - . | tar -C "$bdir/src" -xf -
	fi
}

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
