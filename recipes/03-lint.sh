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

# shellcheck disable=SC2034 # used by lib/report.sh
RECIPE=03-lint
# shellcheck source=lib/report.sh
. "$(dirname "$0")/lib/report.sh"

say "recipe:   ${RECIPE_NAME:-$RECIPE}"
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
	'*.c' '*.h' '*.cc' '*.cpp' '*.cxx' '*.hh' '*.hpp' '*.hxx' '*.cu' '*.cuh')
if [ "${#files[@]}" -eq 0 ]; then
	say "03-lint: no C/C++ file changed between $mb and HEAD: nothing to check"
	say "03-lint: validated"
	exit 0
fi

if [ -z "$(find . -path ./.git -prune -o \( -name .clang-format -o -name _clang-format \) \
	-print -quit)" ]; then
	blocked "the project has no .clang-format file: no style to check against"
fi

say "files:    ${#files[@]}"
bad=0
for f in "${files[@]}"; do
	if [ ! -f "$f" ]; then
		say "skip $f (not in the worktree)"
		continue
	fi
	say "\$ $cf --dry-run --Werror --style=file $f"
	if ! "$cf" --dry-run --Werror --style=file "$f"; then
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ] || fail "$bad of ${#files[@]} changed files are not formatted as .clang-format says"
say "03-lint: validated (${#files[@]} files formatted)"
