#!/usr/bin/env bash
# plan.sh - the example planner stage.
#
# Runs with cwd = the item directory on the mount (packetfs sets
# PACKET_ITEM, PACKET_DIR, PACKET_WORKTREE, PACKET_STAGE, PACKET_ITERATION,
# PACKET_BRANCH, PACKET_BASE). Reads brief.md and writes plan.md: a
# summary, the steps, and the ```validation-recipes block that tells the
# validate stage which recipes to run: the script recipes 01-build,
# 02-unit-tests, 03-lint and 04-diff-integrity, and the procedures
# 00-preflight and 06-change-review where the catalog (.packetfs/recipes/)
# has them; the validator (validate.sh) records those. 03-lint is named
# only when clang-format is installed and 05-gpu-smoke only when
# nvidia-smi answers on this host, since either recipe can only be blocked
# without its tool. The brief's header lines (Route:, Template:, Engine:,
# Review request:, Disposition:) open plan.md, where packetfs reads them;
# for an investigation (Template: debug-investigation or Route:
# investigation) the plan names only the recipes that reproduce (build
# and unit tests), not those that judge a change (lint, diff integrity,
# change review).
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -s brief.md ] || die "brief.md: missing or empty in $PWD"

# The title: the first Markdown heading, else the first non-blank line.
title=$(sed -n 's/^#\{1,6\}[[:space:]]\{1,\}//p' brief.md | head -n 1)
if [ -z "$title" ]; then
	title=$(grep -m 1 -v '^[[:space:]]*$' brief.md || true)
fi
# The request: every line of the brief that is not a heading.
request=$(grep -v '^#' brief.md | sed '/^[[:space:]]*$/d' || true)

# The brief's header lines (SPEC §5 "Routes and templates"), carried into plan.md: they
# choose the item's path (Template, Route) and reach the later stages (Engine, Review
# request), or end the item (Disposition).
header=$(grep -E '^(Route|Template|Engine|Review request|Disposition): ' brief.md || true)
# An investigation reproduces: it names the recipes that build and test the head as it is,
# not those that judge a change.
investigation=0
if printf '%s\n' "$header" | grep -q -E '^(Template: debug-investigation|Route: investigation)$'; then
	investigation=1
fi

catalog=../.packetfs/recipes
recipes=""
add() { recipes="$recipes${recipes:+
}$1"; }
procedures=""
if [ -f "$catalog/00-preflight.md" ]; then
	add 00-preflight
	procedures="00-preflight"
fi
add 01-build
add 02-unit-tests
lint_note="clang-format is not installed here, so no format check is planned."
for c in clang-format clang-format-19 clang-format-18 clang-format-17 clang-format-16 \
	clang-format-15 clang-format-14; do
	if [ "$investigation" = 0 ] && command -v "$c" >/dev/null 2>&1; then
		add 03-lint
		lint_note="The changed C files get a format check (clang-format)."
		break
	fi
done
[ "$investigation" = 1 ] || add 04-diff-integrity
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	add 05-gpu-smoke
	gpu_note="nvidia-smi answers on this host, so the GPU smoke test runs too."
else
	gpu_note="No GPU answers on this host (nvidia-smi), so no GPU recipe is planned."
fi
if [ "$investigation" = 0 ] && [ -f "$catalog/06-change-review.md" ]; then
	add 06-change-review
	procedures="$procedures${procedures:+ and }06-change-review"
fi

{
	printf '# Plan: %s\n\n' "$title"
	[ -z "$header" ] || printf '%s\n\n' "$header"
	printf '## Summary\n\n'
	printf 'Item `%s`, branch `%s` from `%s`, iteration %s.\n\n' "${PACKET_ITEM:-?}" \
		"${PACKET_BRANCH:-?}" "${PACKET_BASE:-?}" "${PACKET_ITERATION:-1}"
	printf '%s\n\n' "${request:-$title}"
	printf '## Steps\n\n'
	if [ "$investigation" = 1 ]; then
		printf '1. Build and run the unit tests at `%s` as it is: the recipes below.\n' \
			"${PACKET_BASE:-the base}"
		printf '2. Write report.md: the hypotheses, what ran, the outcome. No change is printed.\n\n'
	else
		printf '1. Add the function the brief asks for to `include/strkit.h` and `src/strkit.c`,\n'
		printf '   with a contract comment in the header.\n'
		printf '2. Add unit tests to `tests/test_strkit.c`: the usual case, the empty string,\n'
		printf '   a one-character string.\n'
		printf '3. Keep the code formatted as `.clang-format` says.\n'
		printf '4. Commit on `%s` and describe the change in change.md.\n\n' \
			"${PACKET_BRANCH:-the item branch}"
	fi
	printf '## Validation\n\n'
	printf 'Build, unit tests, and a check that change.diff applies to the base and\n'
	printf 'reproduces the branch. %s\n%s\n\n' "$lint_note" "$gpu_note"
	if [ -n "$procedures" ]; then
		printf 'Procedures (%s) have no command of their own: the validator chooses\n' "$procedures"
		printf 'commands from what each must prove (.packetfs/recipes/NAME.md) and records\n'
		printf 'them with `packetfs record`, so that they count like the scripts.\n\n'
	fi
	printf '```validation-recipes\n%s\n```\n' "$recipes"
} >plan.md
printf 'plan.sh: wrote plan.md (%s recipes)\n' "$(printf '%s\n' "$recipes" | wc -l)"
