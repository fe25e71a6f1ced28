#!/usr/bin/env bash
# open-pr.sh - the example publish program.
#
# Runs with cwd = the item directory on the mount, after packetfs has
# pushed the item branch to the configured remote. Prints the pull request
# that would be opened: its title (the brief's first heading), the branch
# and base, the body (the brief and change.md) and the diffstat of
# change.diff. A real deployment replaces the last step with a call to its
# forge, e.g. `gh pr create --head "$PACKET_BRANCH" --base "$PACKET_BASE"`.
set -euo pipefail

die() {
	printf 'open-pr.sh: %s\n' "$*" >&2
	exit 1
}

[ -r brief.md ] || die "brief.md: not readable in $PWD"
[ -r change.diff ] || die "change.diff: not readable in $PWD"
[ -s change.diff ] || die "change.diff is empty: nothing to propose"

title=$(sed -n 's/^#\{1,6\}[[:space:]]\{1,\}//p' brief.md | head -n 1)
if [ -z "$title" ]; then
	title=$(grep -m 1 -v '^[[:space:]]*$' brief.md || true)
fi
[ -n "$title" ] || title="packetfs item ${PACKET_ITEM:-?}"

printf 'Pull request (not sent; this example only prints it)\n'
printf '====================================================\n\n'
printf 'title:  %s\n' "$title"
printf 'head:   %s\n' "${PACKET_BRANCH:-?}"
printf 'base:   %s\n' "${PACKET_BASE:-?}"
printf 'item:   %s (iteration %s)\n\n' "${PACKET_ITEM:-?}" "${PACKET_ITERATION:-1}"
printf -- '--- body ---\n'
grep -v '^#' brief.md | sed '/./,$!d'
if [ -s change.md ]; then
	printf '\n'
	cat change.md
fi
if [ -s review.md ]; then
	printf '\nReview: %s\n' "$(tail -n 1 review.md | sed 's/^## //')"
fi
printf -- '--- diffstat ---\n'
git apply --stat <change.diff
