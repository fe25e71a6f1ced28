#!/usr/bin/env bash
# adopt-request.sh - the example stage that adopts an existing pull request in place of print
# (SPEC §5 "Review request"): the item's head becomes the request's head, which the later
# stages validate and review like any change.
#
# Runs with cwd = the item directory on the mount, on a template that a plan with a line
# "Review request: N" (or "#N", or a URL ending in /pull/N) chooses; packetfs passes that value
# in PACKET_REVIEW_REQUEST. It
#
#   1. fetches the request's head from the remote REMOTE (ADOPT_REMOTE, default origin):
#        git fetch REMOTE pull/N/head
#      in the item's worktree ($PACKET_WORKTREE, on the item branch);
#   2. moves the item branch there (git reset --hard FETCH_HEAD): the stage moves the branch,
#      as print does, so validate and review judge exactly that commit;
#   3. writes adopted.md: the request, the remote and the commit adopted, for the stages after
#      it (answer-request.sh names that commit in its answer).
#
# Exits 1 with "adopt-request.sh: what: why" when PACKET_REVIEW_REQUEST is empty or not a
# pull request, or the fetch fails.
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# request_number VALUE : the pull request number of "N", "#N" or ".../pull/N[/...]".
request_number() {
	local v=${1#\#}
	if [[ $v =~ ^[0-9]+$ ]]; then
		printf '%s\n' "$v"
	elif [[ $v =~ /pull/([0-9]+)(/.*)?$ ]]; then
		printf '%s\n' "${BASH_REMATCH[1]}"
	else
		return 1
	fi
}

request=${PACKET_REVIEW_REQUEST:-}
[ -n "$request" ] || die "PACKET_REVIEW_REQUEST: empty (the plan needs a line \"Review request: N\")"
number=$(request_number "$request") || die "Review request: $request: not a pull request number or URL"
remote=${ADOPT_REMOTE:-origin}
wt=${PACKET_WORKTREE:-}
[ -d "$wt" ] || die "PACKET_WORKTREE: not a directory (run this program as a packetfs stage)"

err=$(git -C "$wt" fetch -q "$remote" "pull/$number/head" 2>&1) ||
	die "git fetch $remote pull/$number/head: ${err//$'\n'/ }"
head=$(git -C "$wt" rev-parse FETCH_HEAD)
git -C "$wt" reset -q --hard "$head"
{
	printf '# Review request %s\n\n' "$number"
	printf 'Adopted the head of pull request %s (%s pull/%s/head): `%s`.\n' "$request" "$remote" \
		"$number" "$head"
} >adopted.md
say "adopted $head, the head of pull request $number, as $PACKET_BRANCH"
