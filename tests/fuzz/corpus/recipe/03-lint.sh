#!/usr/bin/env bash
# summary: clang-format check of the C/C++ files the item changed
# gpus: 0
# timeout: 300
#
# Runs with cwd = the item's worktree. Checks, with
# `clang-format --dry-run --Werror`, every C/C++ file added, copied,
# modified or renamed between merge-base($PACKET_BASE, HEAD) and HEAD,
# against the project's own .clang-format. Files the item did not touch are
# not judged.
#
# Exit status: 0 every changed file is formatted (or no C/C++ file
# changed), 77 clang-format, the base branch or a .clang-format file is
# missing, 1 a file is not formatted.
set -euo pipefail

say() { printf '%s\n' "$*"; }
fail() { say "03-lint: FAILING: $*"; exit 1; }
blocked() { say "03-lint: BLOCKED: $*"; exit 77; }

say "recipe:   ${RECIPE_NAME:-03-lint}"
say "worktree: $PWD"

cf=""
for c in clang-format clang-format-19 clang-format-18 clang-format-17 clang-format-16 \
	clang-format-15 clang-format-14; do
	if command -v "$c" >/dev/null 2>&1; then
		cf=$c
		break
	fi
done
[ -n "$cf" ] || blocked "clang-format is not installed"
say "tool:     $($cf --version)"

git rev-parse --git-dir >/dev/null 2>&1 || blocked "the working directory is not a git worktree"
# shellcheck source=lib/merge-base.sh
. "$(dirname "$0")/lib/merge-base.sh"
say "base:     $base ($baserev), merge base $mb, head $(git rev-parse HEAD)"

mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$mb" HEAD -- \
