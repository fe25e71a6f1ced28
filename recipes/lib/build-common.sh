# shellcheck shell=bash
# recipes/lib/build-common.sh - the build system detection and build
# directory of 01-build; sourced, never run as a recipe (the catalog lists
# only NN-name files). (02-unit-tests builds on its own, in the worktree's
# .packetfs-build/, for every test system it finds; 01-build beside it.)
#
# Before sourcing, the recipe sets RECIPE (its name, for messages) and, for
# CMake projects, WANT_CTEST=1 when it needs ctest too. Afterwards:
#   say/run/fail/blocked  output helpers (lib/report.sh: fail exits 1, blocked 77)
#   need  need TOOL WHAT: blocked unless the command TOOL is installed
#   src   the worktree (cwd)
#   bdir  the build directory: $src/.packetfs-build/01-build, inside the
#         worktree's own .packetfs-build/, which holds a .gitignore of "*"
#         (git sees no new file, so the worktree still equals its head)
#   kind  meson | make | cmake | configure (blocked when none is found)
#   copy_tree  copies the worktree (without .git) to $bdir/src
# and file descriptor 9 holds a lock on "$bdir.lock", so two runs do not
# build in the same directory at the same time.
#
# Why in the worktree: it belongs to whoever runs the recipe (the daemon's
# user, or the pipeline's run_as user), so the build output is theirs
# alone. A fixed directory in /tmp is not: the first user to make it owns
# it, every other user's build fails on its lock file, and anyone may make
# it first (or a symlink in its place) to take over the builds of others.

# shellcheck source=report.sh
. "$(dirname "${BASH_SOURCE[0]}")/report.sh"
need() {
	command -v "$1" >/dev/null 2>&1 || blocked "$2 project, but '$1' is not installed"
}

src=$PWD
out=$src/.packetfs-build
bdir=$out/01-build
mkdir -p "$out" || fail "cannot make $out"
[ -f "$out/.gitignore" ] || printf '*\n' >"$out/.gitignore" || fail "cannot write $out/.gitignore"

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

exec 9>"$bdir.lock" || fail "cannot open the lock file $bdir.lock"
if command -v flock >/dev/null 2>&1; then
	flock 9
fi

# Copies the worktree into $bdir/src for the in-tree build systems
# (without .git and .packetfs-build, where the copy itself lies).
copy_tree() {
	say "\$ copy $src -> $bdir/src (without .git)"
	mkdir -p "$bdir/src"
	if command -v rsync >/dev/null 2>&1; then
		# Ignored files are neither copied nor deleted: earlier build
		# outputs stay, so make rebuilds only what changed.
		rsync -a --delete --exclude=.git --exclude=/.packetfs-build \
			--filter=':- .gitignore' "$src/" "$bdir/src/"
	else
		rm -rf "$bdir/src"
		mkdir -p "$bdir/src"
		tar -C "$src" --exclude=./.git --exclude=./.packetfs-build -cf - . |
			tar -C "$bdir/src" -xf -
	fi
}
