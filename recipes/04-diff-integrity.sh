#!/usr/bin/env bash
# summary: change.diff applies to the merge base and reproduces the item's head tree
# gpus: 0
# timeout: 120
#
# Runs with cwd = the item's worktree. Applies "$PACKET_DIR/change.diff"
# to the merge base of $PACKET_BASE and HEAD in a temporary index (never
# the worktree, never the repository's own index): `git apply --check
# --cached`, then applies it and compares the resulting tree with HEAD's,
# so a diff that applies but leaves out part of the change is caught too.
#
# Exit status: 0 the diff applies and matches HEAD, 77 change.diff is not
# readable or the base is unknown, 1 the diff is empty, does not apply or
# does not reproduce HEAD.
set -euo pipefail

# shellcheck disable=SC2034 # used by lib/report.sh
RECIPE=04-diff-integrity
# shellcheck source=lib/report.sh
. "$(dirname "$0")/lib/report.sh"

say "recipe:   ${RECIPE_NAME:-$RECIPE}"
say "worktree: $PWD"

[ -n "${PACKET_DIR:-}" ] || blocked "PACKET_DIR is not set"
diff="$PACKET_DIR/change.diff"
[ -r "$diff" ] || blocked "$diff is not readable"
git rev-parse --git-dir >/dev/null 2>&1 || blocked "the working directory is not a git worktree"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Read once, so that the checks below all judge the same bytes.
cp "$diff" "$tmp/change.diff"
[ -s "$tmp/change.diff" ] || fail "change.diff is empty: no change"
say "diff:     $diff ($(wc -c <"$tmp/change.diff") bytes, sha256 $(sha256sum <"$tmp/change.diff" | cut -c1-16)…)"

# shellcheck source=lib/merge-base.sh
. "$(dirname "$0")/lib/merge-base.sh"
head=$(git rev-parse HEAD)
say "base:     $base ($baserev)"
say "merge:    $mb"
say "head:     $head"

export GIT_INDEX_FILE="$tmp/index"
say "\$ GIT_INDEX_FILE=$GIT_INDEX_FILE git read-tree $mb"
git read-tree "$mb" || fail "git read-tree $mb failed"

say "\$ git apply --stat"
git apply --stat <"$tmp/change.diff" || fail "change.diff is not a patch git understands"

say "\$ git apply --check --cached change.diff"
git apply --check --cached <"$tmp/change.diff" || fail "change.diff does not apply to the merge base $mb"

git apply --cached <"$tmp/change.diff" || fail "change.diff does not apply to the merge base $mb"
got=$(git write-tree)
want=$(git rev-parse "HEAD^{tree}")
say "tree:     applied $got, HEAD $want"
if [ "$got" != "$want" ]; then
	say "paths that differ between the applied diff and HEAD:"
	git diff-index --cached --name-status HEAD || true
	fail "change.diff applied to $mb does not reproduce HEAD's tree"
fi
say "04-diff-integrity: validated"
