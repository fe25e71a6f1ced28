#!/usr/bin/env bash
# examples/stages/open-pr.sh against the gh stand-in (tests/fixtures/bin/gh), run in a
# directory laid out like a packet (no mount needed): the pull request's title and body
# sections, the evidence comment, pull-request.json; a second run reuses the pull request;
# gh missing or failing ends it with "open-pr.sh: what: why".
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
OPEN_PR=$ROOT/examples/stages/open-pr.sh
export GH_STUB_STATE=$T/gh.json GH_REPO=acme/widget
# The system's python3 where there is one (a version manager's shim costs a second a call).
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
export PATH="$FIXTURES/bin:$PATH"
gh-stub-state init --check build=PENDING,SUCCESS

make_repo
git -C "$REPO" checkout -q -b packetfs/fix-1
echo 'int x;' >"$REPO/x.c"
git -C "$REPO" add x.c
git -C "$REPO" commit -qm "add x"
HEAD_SHA=$(git -C "$REPO" rev-parse HEAD)

P=$T/fix-1
mkdir -p "$P/validation"
printf '# Add x to hello\n\nThe project needs a global x.\n' >"$P/brief.md"
printf '# Change\n\nx.c declares x.\n' >"$P/change.md"
git -C "$REPO" diff main...HEAD >"$P/change.diff"
printf '## Assessment: sound\n' >"$P/review.md"
cat >"$P/validation/evidence.md" <<'EOF'
# Evidence [1/1 validated]

| Recipe | Status | Command | Evidence | Note |
|---|---|---|---|---|
| 01-build | validated | make | validation/logs/x-01-build-1.log | |

Generated from validation/registry.jsonl — do not edit by hand.
EOF
for i in 1 2 3; do echo "{\"run\":$i}"; done >"$P/validation/registry.jsonl"
cat >"$P/status" <<EOF
item: fix-1
state: running
head: $HEAD_SHA
verdict: pass
verdict_head: $HEAD_SHA
assessment: sound
assessment_head: $HEAD_SHA
evidence: 1/1 validated
EOF

# run_open_pr [ARG] : open-pr.sh as the publish stage runs it; output in $T/out.
run_open_pr() {
	(cd "$P" && PACKET_ITEM=fix-1 PACKET_DIR=$P PACKET_WORKTREE=$REPO PACKET_STAGE=publish \
		PACKET_ITERATION=1 PACKET_BRANCH=packetfs/fix-1 PACKET_BASE=main \
		bash "$OPEN_PR" "$@") >"$T/out" 2>&1
}


# --dry-run prints what it would send and needs no gh.
GH=no-such-gh run_open_pr --dry-run || fail "open-pr.sh --dry-run failed: $(cat "$T/out")"
assert_contains_each "$(cat "$T/out")" "dry run" "head:   packetfs/fix-1" "title:  Add x to hello" \
	"## Validation" "Evidence record"
[ ! -e "$P/pull-request.json" ] || fail "a dry run wrote pull-request.json"
[ ! -e "$GH_STUB_STATE.log" ] || fail "a dry run called gh"

run_open_pr || fail "open-pr.sh failed: $(cat "$T/out")"
assert_contains "$(cat "$T/out")" "opened https://github.com/acme/widget/pull/1" "output"
assert_eq '{"number": 1, "url": "https://github.com/acme/widget/pull/1", "head": "'"$HEAD_SHA"'", "branch": "packetfs/fix-1", "base": "main"}' \
	"$(cat "$P/pull-request.json")" "pull-request.json"

create=$(gh_log pr create)
[ "$(printf '%s\n' "$create" | wc -l)" = 1 ] || fail "expected one pr create: $create"
argv=$(printf '%s\n' "$create" | field argv)
assert_contains "$argv" "'--head', 'packetfs/fix-1', '--base', 'main', '--title', 'Add x to hello'" "pr create argv"
body=$(printf '%s\n' "$create" | field body)
assert_contains_each "$body" "PR body" "## Summary" "The project needs a global x." "x.c declares x." \
	"## Validation" "Verdict: **pass** at \`$HEAD_SHA\`" "| 01-build | validated | make |" "## Notes" \
	"Review: sound at \`$HEAD_SHA\`" "1 file changed, 1 insertion(+)"
# The packet's own headings nest under the body's sections.
assert_contains "$body" "### Change" "PR body"
assert_not_contains "$body" $'\n# ' "PR body"
summary_at=$(printf '%s\n' "$body" | grep -n '^## Summary$' | cut -d: -f1)
validation_at=$(printf '%s\n' "$body" | grep -n '^## Validation$' | cut -d: -f1)
notes_at=$(printf '%s\n' "$body" | grep -n '^## Notes$' | cut -d: -f1)
if [ "$summary_at" -ge "$validation_at" ] || [ "$validation_at" -ge "$notes_at" ]; then
	fail "sections out of order: $summary_at $validation_at $notes_at"
fi

comment=$(gh_log pr comment 1)
[ "$(printf '%s\n' "$comment" | wc -l)" = 1 ] || fail "expected one comment: $comment"
cbody=$(printf '%s\n' "$comment" | field body)
assert_contains "$cbody" "Evidence record" "evidence comment"
assert_contains "$cbody" "Head \`$HEAD_SHA\`; validation/registry.jsonl has 3 lines." "evidence comment"
assert_contains "$cbody" "| 01-build | validated | make |" "evidence comment"
# The state holds the comment on pull request 1 (gh pr view sees it).
assert_contains "$(gh pr view 1 --json comments)" "Evidence record" "pr view comments"

# --- a re-publish reuses the pull request and comments ------------------------------------
git -C "$REPO" commit -q --allow-empty -m "again"
HEAD2=$(git -C "$REPO" rev-parse HEAD)
sed -i "s/^head: .*/head: $HEAD2/" "$P/status"
run_open_pr || fail "second open-pr.sh failed: $(cat "$T/out")"
assert_contains "$(cat "$T/out")" "has pull request https://github.com/acme/widget/pull/1 already" "output"
[ "$(gh_log pr view packetfs/fix-1 | wc -l)" = 1 ] || fail "expected one pr view of the branch"
assert_eq 1 "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["prs"]))' "$GH_STUB_STATE")" \
	"pull requests after a re-publish"
comments=$(gh_log pr comment 1)
[ "$(printf '%s\n' "$comments" | wc -l)" = 3 ] || fail "expected 3 comments in all: $comments"
assert_contains "$(printf '%s\n' "$comments" | sed -n 2p | field body)" "Published again at \`$HEAD2\`" "re-publish comment"
assert_contains "$(printf '%s\n' "$comments" | sed -n 3p | field body)" "Head \`$HEAD2\`" "second evidence comment"
assert_contains "$(cat "$P/pull-request.json")" "\"number\": 1, \"url\": \"https://github.com/acme/widget/pull/1\", \"head\": \"$HEAD2\"" \
	"pull-request.json after a re-publish"

# --- gh missing or failing -------------------------------------------------------------------
rm "$P/pull-request.json"
if GH=no-such-gh run_open_pr; then fail "open-pr.sh succeeded without gh"; fi
assert_contains "$(cat "$T/out")" "open-pr.sh: no-such-gh: not found" "gh missing"
if GH_STUB_STATE="" run_open_pr; then fail "open-pr.sh succeeded with gh unauthenticated"; fi
assert_contains "$(cat "$T/out")" "open-pr.sh: gh pr create: To get started with GitHub CLI" "gh failing"
# Without GH_REPO gh looks at the worktree's remotes; this one has none on github.com.
if GH_REPO="" run_open_pr; then fail "open-pr.sh succeeded without a GitHub repository"; fi
assert_contains "$(cat "$T/out")" "open-pr.sh: gh pr create: failed to determine base repo" "no repo"
[ ! -e "$P/pull-request.json" ] || fail "a failed run wrote pull-request.json"
# With a github.com remote in the worktree it finds the repository there.
git -C "$REPO" remote add upstream https://github.com/acme/widget.git
GH_REPO="" run_open_pr || fail "open-pr.sh with the worktree's remote failed: $(cat "$T/out")"
assert_contains "$(cat "$T/out")" "has pull request https://github.com/acme/widget/pull/1 already" "output"
assert_eq "$REPO" "$(gh_log pr create | tail -n 1 | field cwd)" "gh's cwd"
exit 0
