#!/usr/bin/env bash
# open-pr.sh - the example publish program: opens the pull request with GitHub CLI.
#
# Runs with cwd = the item directory on the mount, after packetfs has pushed the item branch
# to the configured remote. It
#
#   1. opens the pull request:
#        gh pr create --head "$PACKET_BRANCH" --base "$PACKET_BASE" --title TITLE --body-file BODY
#      TITLE is the brief's first heading; BODY has the sections
#        ## Summary     the brief's request and change.md
#        ## Validation  the verdict and the head it was made at (from status), and
#                       validation/evidence.md (the evidence table)
#        ## Notes       the review's assessment, the item, iteration and diffstat
#      When the branch has an open pull request already (a re-publish), it reuses that one
#      (gh pr view BRANCH --json number,url) and posts BODY as a comment instead;
#   2. posts the evidence record as a comment (gh pr comment N --body-file): the head, the
#      number of lines of validation/registry.jsonl, and validation/evidence.md;
#   3. writes pull-request.json into the packet, {"number": N, "url": "...", "head": "...",
#      "branch": "...", "base": "..."}, for later stages (babysit.sh reads it).
#
# With --dry-run it only prints the pull request and the evidence comment it would send
# (title, head, base, body) and calls no gh; the demo's pipeline (pipeline.json.in) runs it
# so, having no GitHub repository.
#
# gh finds the repository as it always does: GH_REPO (e.g. set in the publish stage's "env"
# in pipeline.json), else the git remotes of $PACKET_WORKTREE, where gh runs. GH names
# another gh command (default gh). Exits 1 with "open-pr.sh: what: why" when gh is missing
# or fails, or the packet lacks brief.md.
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dry_run_arg "$@"
need_gh
[ -r brief.md ] || die "brief.md: not readable in $PWD"
branch=${PACKET_BRANCH:-}
[ -n "$branch" ] || die "PACKET_BRANCH: not set (run this program as a packetfs stage)"
base=${PACKET_BASE:-main}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# status_of KEY : the value of KEY in the item's status ("" when there is none).
status_of() {
	if [ -r status ]; then sed -n "s/^$1: //p" status | head -n 1; fi
}
# demoted FILE : FILE with its Markdown headings two levels down (they nest under ours).
demoted() { sed -E 's/^(#{1,4}) /\1## /' "$1"; }

title=$(sed -n 's/^#\{1,6\}[[:space:]]\{1,\}//p' brief.md | head -n 1)
[ -n "$title" ] || title=$(grep -m 1 -v '^[[:space:]]*$' brief.md || true)
[ -n "$title" ] || title="packetfs item ${PACKET_ITEM:-?}"

head=$(status_of head)
if [ -z "$head" ] && [ -d "${PACKET_WORKTREE:-}" ]; then
	head=$(git -C "$PACKET_WORKTREE" rev-parse HEAD 2>/dev/null || true)
fi
verdict=$(status_of verdict)
verdict_head=$(status_of verdict_head)
assessment=$(status_of assessment)
if [ -z "$assessment" ] && [ -s review.md ]; then
	assessment=$(tail -n 1 review.md | sed 's/^## Assessment: //')
fi
registry_lines=0
[ -r validation/registry.jsonl ] && registry_lines=$(wc -l <validation/registry.jsonl)

# --- the body ---------------------------------------------------------------------------
{
	printf '## Summary\n\n'
	grep -v '^#' brief.md | sed '/./,$!d'
	if [ -s change.md ]; then
		printf '\n'
		demoted change.md
	fi
	printf '\n## Validation\n\n'
	printf 'Verdict: **%s** at `%s`' "${verdict:-unknown}" "${verdict_head:-?}"
	if [ -n "$head" ] && [ -n "$verdict_head" ] && [ "$head" != "$verdict_head" ]; then
		printf ' (stale: the head is `%s`)' "$head"
	fi
	printf '; head `%s`; evidence %s.\n\n' "${head:-?}" "$(status_of evidence)"
	if [ -s validation/evidence.md ]; then
		demoted validation/evidence.md
	else
		printf 'validation/evidence.md: none in the packet.\n'
	fi
	printf '\n## Notes\n\n'
	printf -- '- Review: %s' "${assessment:-none}"
	[ -z "$(status_of assessment_head)" ] || printf ' at `%s`' "$(status_of assessment_head)"
	printf '\n- packetfs item `%s`, iteration %s: `%s` onto `%s`.\n' "${PACKET_ITEM:-?}" \
		"${PACKET_ITERATION:-1}" "$branch" "$base"
	if [ -s change.diff ]; then
		printf -- '- Diffstat:\n\n```\n'
		git apply --stat <change.diff || true
		printf '```\n'
	fi
} >"$tmp/body.md"

{
	printf '### Evidence record\n\n'
	printf 'Head `%s`; validation/registry.jsonl has %s lines.\n\n' "${head:-?}" "$registry_lines"
	if [ -s validation/evidence.md ]; then
		demoted validation/evidence.md
	else
		printf 'validation/evidence.md: none in the packet.\n'
	fi
} >"$tmp/evidence.md"

if [ "$dry_run" = 1 ]; then
	printf 'Pull request (dry run: not sent)\n\n'
	printf 'title:  %s\nhead:   %s\nbase:   %s\n\n--- body ---\n' "$title" "$branch" "$base"
	cat "$tmp/body.md"
	printf -- '--- evidence comment ---\n'
	cat "$tmp/evidence.md"
	exit 0
fi

# --- open or reuse the pull request ---------------------------------------------------------
if url=$(gh_ pr create --head "$branch" --base "$base" --title "$title" --body-file "$tmp/body.md"); then
	url=$(printf '%s\n' "$url" | grep -m 1 '^https\?://' || true)
	[ -n "$url" ] || die "gh pr create: printed no pull request URL"
	number=${url##*/}
	printf 'open-pr.sh: opened %s\n' "$url"
	reused=0
elif grep -q 'already exists' "$tmp/err"; then
	view=$(gh_ pr view "$branch" --json number,url) || die "gh pr view $branch: $(err_text)"
	read -r number url < <(printf '%s' "$view" | python3 -c \
		'import json, sys; o = json.load(sys.stdin); print(o["number"], o["url"])') ||
		die "gh pr view $branch: unreadable JSON: $view"
	printf 'open-pr.sh: %s has pull request %s already; commenting there\n' "$branch" "$url"
	reused=1
else
	die "gh pr create: $(err_text)"
fi
[[ $number =~ ^[0-9]+$ ]] || die "gh: $url: no pull request number in it"

if [ "$reused" = 1 ]; then
	{
		printf '### Published again at `%s`\n\n' "${head:-?}"
		sed -E 's/^## /#### /' "$tmp/body.md"
	} >"$tmp/again.md"
	gh_ pr comment "$number" --body-file "$tmp/again.md" >/dev/null ||
		die "gh pr comment $number: $(err_text)"
fi
comment=$(gh_ pr comment "$number" --body-file "$tmp/evidence.md") ||
	die "gh pr comment $number: $(err_text)"
printf 'open-pr.sh: evidence record posted: %s\n' "$comment"

python3 -c 'import json, sys
print(json.dumps({"number": int(sys.argv[1]), "url": sys.argv[2], "head": sys.argv[3],
                  "branch": sys.argv[4], "base": sys.argv[5]}))' \
	"$number" "$url" "$head" "$branch" "$base" >"$tmp/pr.json"
# One write: a document on the mount gains a revision at every close of its file.
cat "$tmp/pr.json" >pull-request.json
printf 'open-pr.sh: wrote pull-request.json (#%s)\n' "$number"
