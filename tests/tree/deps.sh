#!/usr/bin/env bash
# Every library meson.build asks for with dependency() is installed by both README commands on
# a fresh Debian 12 machine: the Debian package that ships its pkg-config file is in
# examples/demo.sh's package list, in tests/setup.sh's PACKAGES and in README's dependency list.
# The pkg-config name -> package map comes from dpkg itself (dpkg -S on the .pc file), so a
# new dependency needs no edit here; a dependency whose .pc file no installed package ships
# fails, naming it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

names=$(sed -n "s/.*dependency('\([^']*\)'.*/\1/p" "$ROOT/meson.build" | grep -vx threads | sort -u)
[ -n "$names" ] || fail "no dependency() found in meson.build"
demo=$(sed -n '/^packages=(/,/)/p' "$ROOT/examples/demo.sh")
run=$(sed -n '/^PACKAGES="/,/"$/p' "$ROOT/tests/setup.sh")
readme=$(sed -n '/^Dependencies (Debian 12 package names)/,/^$/p' "$ROOT/README.md")
[ -n "$demo" ] && [ -n "$run" ] && [ -n "$readme" ] || fail "a package list was not found"

checked=0
for name in $names; do
	pc=$(pkg-config --variable=pcfiledir "$name" 2>/dev/null)/$name.pc ||
		fail "pkg-config does not know $name (meson.build asks for it)"
	pkg=$(dpkg -S "$(readlink -f "$pc")" 2>/dev/null | head -n 1 | cut -d: -f1) ||
		true
	[ -n "$pkg" ] || pkg=$(dpkg -S "$pc" 2>/dev/null | head -n 1 | cut -d: -f1) || true
	[ -n "$pkg" ] || fail "no installed package ships $pc (dependency $name)"
	grep -qw -- "$pkg" <<<"$demo" || fail "examples/demo.sh does not install $pkg (dependency $name)"
	grep -qw -- "$pkg" <<<"$run" || fail "tests/setup.sh PACKAGES lacks $pkg (dependency $name)"
	grep -qw -- "$pkg" <<<"$readme" || fail "README's dependency list lacks $pkg (dependency $name)"
	checked=$((checked + 1))
done
echo "checked $checked dependencies"
