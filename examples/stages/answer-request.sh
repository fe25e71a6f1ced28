#!/usr/bin/env bash
# answer-request.sh - the example publish program of a template that adopts a review request
# (SPEC §5 "Review request"): it pushes nothing, and answers on the pull request instead.
#
# Runs with cwd = the item directory on the mount, as the program of a publish stage with no
# "push", after the gates passed: a pass verdict and a sound review of the item's head, which
# adopt-request.sh made the request's head. It
#
#   1. reads the head judged (the item branch's head in $PACKET_WORKTREE) and checks that the
#      request still points there (gh pr view N --json headRefOid): a request whose head moved
#      on the remote since is not answered, the judgment is stale (exit 1; run the adopting
#      stage again);
#   2. posts one comment on the request (gh pr comment N --body-file), naming the commit judged:
#        ## packetfs review of COMMIT
#        ### Verdict        the verdict and the head it was made at (from status)
#        ### Evidence record  the number of lines of validation/registry.jsonl and
#                           validation/evidence.md
#        ### Review         review.md
#   3. writes answer.json into the packet: {"number": N, "head": COMMIT, "comment": URL}.
#
# With --dry-run it only prints the answer and the request it would go to, and calls no gh
# (the demo's pipeline runs it so, having no GitHub repository).
#
# gh finds the repository as it always does: GH_REPO, else the git remotes of the worktree.
# GH names another gh command (default gh). Exits 1 with "answer-request.sh: what: why" when
# PACKET_REVIEW_REQUEST names no pull request, or gh is missing or fails.
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dry_run_arg "$@"
request=${PACKET_REVIEW_REQUEST:-}
v=${request#\#}
if [[ $v =~ ^[0-9]+$ ]]; then
	number=$v
elif [[ $v =~ /pull/([0-9]+)(/.*)?$ ]]; then
	number=${BASH_REMATCH[1]}
else
	die "Review request: ${request:-(none)}: not a pull request number or URL"
fi
need_gh
wt=${PACKET_WORKTREE:-}
[ -d "$wt" ] || die "PACKET_WORKTREE: not a directory (run this program as a packetfs stage)"
head=$(git -C "$wt" rev-parse HEAD)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# status_of KEY : the value of KEY in the item's status ("" when there is none).
status_of() {
	if [ -r status ]; then sed -n "s/^$1: //p" status | head -n 1; fi
}
# demoted FILE : FILE with its Markdown headings two levels down (they nest under ours).
demoted() { sed -E 's/^(#{1,4}) /\1## /' "$1"; }

if [ "$dry_run" = 0 ]; then
	view=$(gh_ pr view "$number" --json headRefOid,url) || die "gh pr view $number: $(err_text)"
	read -r now url < <(printf '%s' "$view" | python3 -c \
		'import json, sys; o = json.load(sys.stdin); print(o.get("headRefOid") or "-", o["url"])') ||
		die "gh pr view $number: unreadable JSON: $view"
	if [ "$now" != - ] && [ "$now" != "$head" ]; then
		die "pull request $number: its head moved to $now since $head was judged: the review is stale (run the adopting stage again)"
	fi
fi

registry_lines=0
[ -r validation/registry.jsonl ] && registry_lines=$(wc -l <validation/registry.jsonl)
{
	printf '## packetfs review of `%s`\n\n' "$head"
	printf 'Review request %s, judged at commit `%s` (packetfs item `%s`, iteration %s).\n\n' \
		"$request" "$head" "${PACKET_ITEM:-?}" "${PACKET_ITERATION:-1}"
	printf '### Verdict\n\n**%s** at `%s`; evidence %s.\n\n' "$(status_of verdict)" \
		"$(status_of verdict_head)" "$(status_of evidence)"
	printf '### Evidence record\n\nvalidation/registry.jsonl has %s lines.\n\n' "$registry_lines"
	if [ -s validation/evidence.md ]; then
		demoted validation/evidence.md
	else
		printf 'validation/evidence.md: none in the packet.\n'
	fi
	printf '\n### Review\n\n'
	if [ -s review.md ]; then
		demoted review.md
	else
		printf 'review.md: none in the packet.\n'
	fi
} >"$tmp/answer.md"

if [ "$dry_run" = 1 ]; then
	printf 'Answer to pull request %s (dry run: not sent)\n\n' "$number"
	cat "$tmp/answer.md"
	python3 -c 'import json, sys; print(json.dumps({"number": int(sys.argv[1]), "head": sys.argv[2], "comment": ""}))' \
		"$number" "$head" >answer.json
	exit 0
fi
comment=$(gh_ pr comment "$number" --body-file "$tmp/answer.md") || die "gh pr comment $number: $(err_text)"
comment=$(printf '%s\n' "$comment" | grep -m 1 '^https\?://' || true)
python3 -c 'import json, sys; print(json.dumps({"number": int(sys.argv[1]), "head": sys.argv[2], "comment": sys.argv[3]}))' \
	"$number" "$head" "$comment" >answer.json
say "answered on $url at $head: ${comment:-(no URL printed)}"
