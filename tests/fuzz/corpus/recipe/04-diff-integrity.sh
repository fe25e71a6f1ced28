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

say() { printf '%s\n' "$*"; }
fail() { say "04-diff-integrity: FAILING: $*"; exit 1; }
blocked() { say "04-diff-integrity: BLOCKED: $*"; exit 77; }

say "recipe:   ${RECIPE_NAME:-04-diff-integrity}"
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
