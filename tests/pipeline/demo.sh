#!/usr/bin/env bash
# examples/demo.sh, README's first command, runs to the end with the build under test: exit 0,
# its scratch directory removed, and its closing `packetfs status` table shows an item per seed
# template where that path ends: demo-1 (Route: implementation) done at publish on
# change-build-deploy-measure, demo-2 done at investigate on debug-investigation, demo-3
# (Route: review, Review request: 1) done at publish on existing-request, whose dry-run answer
# names the pull request's commit. The demo checks each item itself (pushed heads, recorded
# procedures, nothing pushed for the review request); this test holds it to the end.
# Skipped where the binary has no meson build directory to hand the demo, or where dpkg lacks one
# of the demo's packages (the demo would install it).
. "$(dirname "$0")/../lib.sh"
for tool in make cc git python3; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "SKIP: $tool is not installed" >&2
		exit 77
	}
done
BUILD=$(cd "$(dirname "$PFS")/.." && pwd)
[ -f "$BUILD/build.ninja" ] || {
	echo "SKIP: $PFS is not in a meson build directory" >&2
	exit 77
}
if command -v dpkg >/dev/null 2>&1; then
	for p in $(sed -n '/^packages=(/,/)/p' "$ROOT/examples/demo.sh" | tr -d '()' | sed 's/packages=//'); do
		dpkg -s "$p" >/dev/null 2>&1 || {
			echo "SKIP: package $p is not installed (the demo would install it)" >&2
			exit 77
		}
	done
fi
mkdir -p "$T/tmp"

rc=0
TMPDIR=$T/tmp PACKETFS_BUILDDIR=$BUILD bash "$ROOT/examples/demo.sh" >"$T/demo.log" 2>&1 || rc=$?
log=$(cat "$T/demo.log")
[ "$rc" = 0 ] || fail "examples/demo.sh exited $rc: $(tail -n 40 "$T/demo.log")"
assert_eq "" "$(find "$T/tmp" -mindepth 1 -maxdepth 1)" "the demo's scratch directory is removed"

# shellcheck disable=SC2016 # the backquotes are Markdown
pr_head=$(sed -n 's/^## packetfs review of `\([0-9a-f]\{40\}\)`$/\1/p' "$T/demo.log")
[ -n "$pr_head" ] || fail "the demo printed no answer naming a commit: $log"
assert_contains "$log" "Answer to pull request 1 (dry run: not sent)" "demo-3's answer"
assert_contains "$log" "Review request 1, judged at commit \`$pr_head\`" "demo-3's answer names the commit"

# The closing table: ITEM STATE STAGE TEMPLATE ROUTE ...
table=$(sed -n '/^ITEM  *STATE  *STAGE  *TEMPLATE  *ROUTE/,/^==> demo done/p' "$T/demo.log")
[ -n "$table" ] || fail "the demo printed no status table: $log"
row() { printf '%s\n' "$table" | awk -v i="$1" '$1 == i { print $1, $2, $3, $4, $5 }'; }
assert_eq "demo-1 done publish change-build-deploy-measure implementation" "$(row demo-1)" "demo-1's path"
assert_eq "demo-2 done investigate debug-investigation -" "$(row demo-2)" "demo-2's path"
assert_eq "demo-3 done publish existing-request review" "$(row demo-3)" "demo-3's path"
exit 0
