# shellcheck shell=bash
# recipes/lib/build-common.sh - the build system detection and build
# directory of 01-build; sourced, never run as a recipe (the catalog lists
# only NN-name files). (02-unit-tests builds on its own, in the worktree's
# .packetfs-build/, for every test system it finds.)
#
# Before sourcing, the recipe sets RECIPE (its name, for messages) and, for
# CMake projects, WANT_CTEST=1 when it needs ctest too. Afterwards:
#   say/run/fail/blocked  output helpers (lib/report.sh: fail exits 1, blocked 77)
#   need  need TOOL WHAT: blocked unless the command TOOL is installed
#   src   the worktree (cwd)
#   bdir  the out-of-tree build directory:
#         ${TMPDIR:-/tmp}/packetfs-build/<item>-<hash of the worktree path>
#   kind  meson | make | cmake | configure (blocked when none is found)
#   copy_tree  copies the worktree (without .git) to $bdir/src
# and file descriptor 9 holds a lock on "$bdir.lock", so two runs do not
# build in the same directory at the same time.

# shellcheck source=report.sh
. "$(dirname "${BASH_SOURCE[0]}")/report.sh"
need() {
	command -v "$1" >/dev/null 2>&1 || blocked "$2 project, but '$1' is not installed"
}

src=$PWD
key="${PACKET_ITEM:-local}-$(printf '%s' "$src" | sha256sum | cut -c1-12)"
bdir="${TMPDIR:-/tmp}/packetfs-build/$key"
mkdir -p "${bdir%/*}"

say "recipe:   ${RECIPE_NAME:-$RECIPE}"
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
	[ "${WANT_CTEST:-0}" = 1 ] && need ctest CMake
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
