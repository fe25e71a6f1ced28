#!/usr/bin/env bash
# `meson test` runs the whole shell suite: every folder of scripts tests/run.sh runs
# (tests/tree, fs, pipeline, bad) is one of tests/meson.build's suites, and its meson.build lists
# every script on disk, nothing else, in sorted order (meson cannot glob: a script left out
# would silently never run under meson test). The build directory of PACKETFS_BIN (default
# build/), when configured, lists each as a test DIR/NAME (`meson test --list`). First the check
# must catch each kind of gap in a copy, then the tree itself must pass.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${PACKETFS_BIN:-$ROOT/build/cli/packetfs}
T=$(mktemp -d "${TMPDIR:-/tmp}/suites.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

# folders SRC : the folders tests/run.sh runs the scripts of, one a line.
folders()
{
	grep -m 1 '^for script in tests/' "$1/tests/run.sh" | grep -o 'tests/[a-z0-9_-]*/\*\.sh' |
		sed 's|^tests/||; s|/\*\.sh$||'
}

# listed SRC DIR : the names tests/DIR/meson.build lists, in its order.
listed()
{
	sed -n "s/^  '\([^']*\)',\$/\1/p" "$1/tests/$2/meson.build"
}

# scripts SRC DIR : the names of the scripts tests/DIR/*.sh, sorted.
scripts()
{
	find "$1/tests/$2" -maxdepth 1 -name '*.sh' -type f -printf '%f\n' | sed 's/\.sh$//' |
		LC_ALL=C sort
}

# check SRC : whether the source tree SRC's lists are complete; prints each gap.
check()
{
	local src=$1 d want have bad=0
	want=$(folders "$src")
	[ -n "$want" ] || { echo "no 'for script in tests/...' line in tests/run.sh"; return 1; }
	have=$(sed -n "s/^foreach d : \[\(.*\)\]\$/\1/p" "$src/tests/meson.build" |
		sed "s/[', ]\{1,\}/ /g; s/^ //; s/ \$//" | tr ' ' '\n')
	if [ "$want" != "$have" ]; then
		echo "tests/meson.build's folders ($(paste -sd ' ' <<<"$have")) are not those tests/run.sh runs ($(paste -sd ' ' <<<"$want"))"
		bad=1
	fi
	for d in $want; do
		if [ ! -f "$src/tests/$d/meson.build" ]; then
			echo "tests/$d/meson.build is missing"
			bad=1
			continue
		fi
		grep -qx "shell_tests += {'$d': \[" "$src/tests/$d/meson.build" || {
			echo "tests/$d/meson.build does not add the suite '$d' to shell_tests"
			bad=1
		}
		have=$(listed "$src" "$d")
		comm -23 <(scripts "$src" "$d") \
			<(LC_ALL=C sort <<<"$have") | sed "s|.*|tests/$d/&.sh is not listed in tests/$d/meson.build|" |
			grep . && bad=1
		comm -13 <(scripts "$src" "$d") \
			<(LC_ALL=C sort <<<"$have") | sed "s|.*|tests/$d/meson.build lists &, which has no script|" |
			grep . && bad=1
		[ "$have" = "$(LC_ALL=C sort -u <<<"$have")" ] || {
			echo "tests/$d/meson.build is not in sorted order (or lists a name twice)"
			bad=1
		}
	done
	return "$bad"
}

# gap NAME EXPECTED EDIT... : in a copy of the lists (and empty scripts of the same names), runs
# the edit (a shell command, in the copy) and checks that check reports a line containing
# EXPECTED.
gap()
{
	local name=$1 want=$2 out rc=0 d
	shift 2
	rm -rf "$T/copy"
	mkdir -p "$T/copy/tests"
	cp "$ROOT/tests/run.sh" "$ROOT/tests/meson.build" "$T/copy/tests/"
	for d in $(folders "$ROOT"); do
		mkdir "$T/copy/tests/$d"
		cp "$ROOT/tests/$d/meson.build" "$T/copy/tests/$d/"
		(cd "$ROOT/tests/$d" && ls -- *.sh) | sed "s|^|$T/copy/tests/$d/|" | xargs touch
	done
	(cd "$T/copy" && eval "$*")
	out=$(check "$T/copy") || rc=$?
	[ "$rc" = 1 ] || fail "$name: the check returned $rc, not 1: $out"
	grep -qF -- "$want" <<<"$out" || fail "$name: the check did not say \"$want\": $out"
	echo "ok: caught $name"
}

# last_first FILE : moves the last name FILE lists before the first.
last_first()
{
	local last
	last=$(grep "^  '" "$1" | tail -n 1)
	grep -vxF -- "$last" "$1" | awk -v l="$last" '!done && /^  \x27/ { print l; done = 1 } 1' >"$1.new"
	mv "$1.new" "$1"
}

gap "a script not listed" "tests/fs/zz-new.sh is not listed in tests/fs/meson.build" \
	'touch tests/fs/zz-new.sh'
gap "a listed name without its script" "tests/bad/meson.build lists init-bad, which has no script" \
	'rm tests/bad/init-bad.sh'
gap "a list out of order" "tests/pipeline/meson.build is not in sorted order" \
	'last_first tests/pipeline/meson.build'
gap "a folder tests/run.sh runs that meson does not" "are not those tests/run.sh runs" \
	'mkdir tests/extra && touch tests/extra/a.sh && sed -i "s|tests/bad/\*\.sh;|tests/bad/*.sh tests/extra/*.sh;|" tests/run.sh'
gap "a folder without its list" "tests/tree/meson.build is missing" 'rm tests/tree/meson.build'

out=$(check "$ROOT") || fail "the tree's lists are incomplete:
$out"
echo "ok: every script of $(folders "$ROOT" | sed 's|.*|tests/&/|' | paste -sd ' ') is listed"

BUILD=$(cd "$(dirname "$BIN")/.." 2>/dev/null && pwd) || BUILD=""
if [ -n "$BUILD" ] && [ -f "$BUILD/meson-private/coredata.dat" ]; then
	tests=$(meson test -C "$BUILD" --list --no-rebuild 2>/dev/null) ||
		fail "meson test -C $BUILD --list failed"
	for d in $(folders "$ROOT"); do
		for n in $(listed "$ROOT" "$d"); do
			grep -qxF "packetfs:$d / $d/$n" <<<"$tests" ||
				fail "meson test -C $BUILD --list lacks $d/$n (in suite $d): reconfigure it (meson setup --reconfigure $BUILD)"
		done
	done
	echo "ok: meson test -C $BUILD --list has every script, each in the suite of its folder"
else
	echo "# no configured build directory at $BUILD: meson test --list not checked"
fi
