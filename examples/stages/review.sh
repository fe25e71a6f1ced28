#!/usr/bin/env bash
# review.sh - the example reviewer stage.
#
# Runs with cwd = the item directory on the mount. Reads change.diff and
# validation/evidence.md and writes review.md: the files the change
# touches, its size, the evidence summary, every named recipe whose latest
# run is not validated, and as the last line
#
#   ## Assessment: sound            when the evidence says n/n validated (n > 0)
#   ## Assessment: needs_changes    otherwise, or when change.diff is empty
#
# packetfs sends a needs_changes item back to the print stage.
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -r change.diff ] || die "change.diff: not readable in $PWD"
[ -r validation/evidence.md ] || die "validation/evidence.md: not readable in $PWD"

diff=$(cat change.diff)
evidence=$(cat validation/evidence.md)

files=$(printf '%s\n' "$diff" | sed -n 's|^diff --git a/\(.*\) b/.*$|\1|p')
nfiles=$(printf '%s' "$files" | grep -c . || true)
added=0
removed=0
if [ "$nfiles" -gt 0 ]; then
	read -r added removed < <(git apply --numstat <change.diff |
		awk '{ a += $1; r += $2 } END { print a + 0, r + 0 }')
fi

# "[n/m validated]" from the evidence heading.
counts=$(printf '%s\n' "$evidence" | grep -oE '\[[0-9]+/[0-9]+ validated\]' | head -n 1 || true)
n=$(printf '%s' "$counts" | sed -n 's|^\[\([0-9]*\)/.*|\1|p')
m=$(printf '%s' "$counts" | sed -n 's|^\[[0-9]*/\([0-9]*\) .*|\1|p')

# Table rows of the engine table whose status is not "validated". The
# engine table is the first table; external claims follow in a second one.
not_validated=$(printf '%s\n' "$evidence" | awk -F'|' '
	/^\|/ { intable = 1 }
	!/^\|/ && intable { tables++; intable = 0 }
	tables == 0 && /^\|/ && NF > 3 {
		name = $2; status = $3
		gsub(/^ +| +$/, "", name); gsub(/^ +| +$/, "", status)
		if (name != "Recipe" && name !~ /^:?-+:?$/ && status != "validated")
			print "  - `" name "`: " status
	}')

problems=()
[ "$nfiles" -gt 0 ] || problems+=("change.diff is empty: there is no change to review")
if [ -z "$counts" ]; then
	problems+=("validation/evidence.md has no [n/m validated] summary")
elif [ "${m:-0}" -eq 0 ]; then
	problems+=("the plan names no recipe: nothing was validated")
elif [ "$n" -ne "$m" ]; then
	problems+=("only $n of $m named recipes are validated")
fi
[ -z "$not_validated" ] || problems+=("recipes whose latest run is not validated:
$not_validated")

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
	printf '# Review of %s (iteration %s)\n\n' "${PACKET_ITEM:-this item}" "${PACKET_ITERATION:-1}"
	printf '## The change\n\n'
	printf '%s files changed, %s lines added, %s removed:\n\n' "$nfiles" "$added" "$removed"
	if [ -n "$files" ]; then
		printf '%s\n' "$files" | sed 's/^/- `/; s/$/`/'
	fi
	printf '\n## Evidence\n\n'
	printf 'validation/evidence.md: %s\n\n' "${counts:-no summary}"
	if [ "${#problems[@]}" -eq 0 ]; then
		printf 'Every recipe the plan names has a validated run; the change is small and\n'
		printf 'covered by unit tests.\n\n'
		printf '## Assessment: sound\n'
	else
		printf '## Problems\n\n'
		printf -- '- %s\n' "${problems[@]}"
		printf '\n## Assessment: needs_changes\n'
	fi
} >"$tmp"
# One write of the whole text: a document on the mount gains a revision at
# every close of its file, including the closes of the commands above.
cat "$tmp" >review.md
printf 'review.sh: wrote review.md (%s)\n' "$(tail -n 1 review.md)"
