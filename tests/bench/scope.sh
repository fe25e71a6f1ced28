#!/usr/bin/env bash
# tests/bench/scope.sh - the cost of the plan's scope (SPEC §6 "Scope", docs/scope.md) on a
# large change: a scope block in the seed plans' style (FILES planned edits, forty keep globs:
# diagrams that merely contain the same word, a release-notes ledger, a backend's code path)
# against a change of FILES (default 1000) edited files, one of them renamed. Run on demand,
# not part of the test suite (no time is asserted):
#
#	bash tests/bench/scope.sh [FILES] [READS]
#
# Prints the median and the maximum milliseconds of READS (default 20) reads of status and of
# validation/scope.md with the block, and of status without it (the baseline), then checks
# that the answer is right: "1 kept path touched, 1 outside the plan" (the rename's old path is
# under a kept directory).
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/scope.sh"
FILES=${1:-1000}
READS=${2:-20}
make_repo
mkdir -p "$REPO/src" "$REPO/docs/diagrams" "$REPO/legacy"
for ((i = 0; i < FILES; i++)); do
	echo "file $i" >"$REPO/src/f$i.c"
done
for ((i = 0; i < 40; i++)); do
	echo "<svg>$i</svg>" >"$REPO/docs/diagrams/flag-$i.svg"
done
echo "a backend kept as it is, long enough to be found renamed" >"$REPO/legacy/backend.c"
git -C "$REPO" add -A
git -C "$REPO" commit -q -m "a large tree"
mount_item
wt=$STORE/worktrees/fix-1
for ((i = 0; i < FILES; i++)); do
	echo "changed" >>"$wt/src/f$i.c"
done
git -C "$wt" mv legacy/backend.c src/backend.c
git -C "$wt" commit -q -am "a change of $FILES files"

{
	printf '# Plan\n\n```validation-recipes\n01-build\n```\n\n```scope\n'
	for ((i = 0; i < FILES; i++)); do
		printf 'edit src/f%d.c\n' "$i"
	done
	printf 'add src/backend.c\n'
	for ((i = 0; i < 36; i++)); do
		printf 'keep docs/diagrams/**/flag-%d.svg\n' "$i"
	done
	printf 'keep CHANGELOG.md\nkeep legacy/\nkeep **/fixtures/**\nkeep docs/**/*.png\n```\n'
} >"$d/plan.md"

# times FILE : READS reads of FILE; prints "median max" in milliseconds.
times()
{
	python3 - "$1" "$READS" <<'EOPY'
import statistics, sys, time
path, n = sys.argv[1], int(sys.argv[2])
ms = []
for _ in range(n):
    t = time.perf_counter()
    with open(path, "rb") as f:
        f.read()
    ms.append((time.perf_counter() - t) * 1000)
print("%.1f %.1f" % (statistics.median(ms), max(ms)))
EOPY
}

echo "# scope bench: $FILES changed files, $FILES planned paths, 40 keep globs, $READS reads each"
echo "status (scope block):        $(times "$d/status") ms (median, max)"
echo "validation/scope.md:         $(times "$d/validation/scope.md") ms"
assert_eq "1 kept path touched, 1 outside the plan" "$(status_field "$M" fix-1 scope)" "scope"
printf '# Plan\n\n```validation-recipes\n01-build\n```\n' >"$d/plan.md"
echo "status (no scope block):     $(times "$d/status") ms"
assert_eq "" "$(status_field "$M" fix-1 scope)" "scope without a block"
exit 0
