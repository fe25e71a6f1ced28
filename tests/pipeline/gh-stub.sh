#!/usr/bin/env bash
# The gh stand-in itself (tests/fixtures/bin/gh, gh-stub-state): pr create and the duplicate
# refusal, pr view, checks that advance poll by poll (and restart on a push), pr comment,
# review threads and replies through gh api, the log, and the failures real gh has (no
# credentials, no repository, unknown JSON field, unknown pull request).
. "$(dirname "$0")/../lib.sh"
# The system's python3 where there is one (a version manager's shim costs a second a call).
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
export PATH="$FIXTURES/bin:$PATH" GH_STUB_STATE=$T/gh.json GH_REPO=acme/widget
cd "$T" || exit 1

# run CMD... : runs CMD; status in $rc, stdout in $out, stderr in $err.
run() {
	rc=0
	"$@" >"$T/o" 2>"$T/e" || rc=$?
	out=$(cat "$T/o")
	err=$(cat "$T/e")
}
# json EXPR : EXPR evaluated in python on the JSON of $out (as o).
json() { python3 -c 'import json, sys; o = json.loads(sys.argv[2]); print(eval(sys.argv[1]))' "$1" "$out"; }

# --- no state file named: gh's "not logged in" --------------------------------------------
run env GH_STUB_STATE= gh pr view 1
assert_eq 4 "$rc" "status without GH_STUB_STATE"
assert_contains "$err" "To get started with GitHub CLI, please run:  gh auth login" "auth error"

gh-stub-state init --check build=PENDING,PENDING,SUCCESS --check lint=QUEUED,FAILURE
printf 'The body.\n' >"$T/body.md"

# --- pr create, duplicate refusal ------------------------------------------------------------
run gh pr create --title "First" --body-file "$T/body.md" --base main --head packetfs/a
assert_eq 0 "$rc" "pr create ($err)"
assert_eq https://github.com/acme/widget/pull/1 "$out" "pr create output"
run gh pr create --title "Again" --body x --base main --head packetfs/a
assert_eq 1 "$rc" "duplicate pr create"
assert_contains "$err" 'a pull request for branch "packetfs/a" into branch "main" already exists:' "duplicate"
assert_contains "$err" https://github.com/acme/widget/pull/1 "duplicate"
run gh pr create -t "Second" -b "Other body" -B main -H packetfs/b --draft
assert_eq https://github.com/acme/widget/pull/2 "$out" "second pr create"
run gh pr create --title "No body" --head packetfs/c
assert_eq 1 "$rc" "pr create without a body"
# -R names another repository: numbers start again there.
run gh pr create -R other/repo --title T --body B --head packetfs/a
assert_eq https://github.com/other/repo/pull/1 "$out" "pr create in another repo"

# --- pr view ---------------------------------------------------------------------------------
run gh pr view packetfs/a --json number,url,state,headRefName,baseRefName,title,body,isDraft
assert_eq 0 "$rc" "pr view ($err)"
assert_eq "1 https://github.com/acme/widget/pull/1 OPEN packetfs/a main First False" \
	"$(json '" ".join(str(o[k]) for k in ("number", "url", "state", "headRefName", "baseRefName", "title", "isDraft"))')" "pr view fields"
assert_eq $'The body.\n' "$(json 'o["body"]')"$'\n' "pr view body"
run gh pr view '#2' --json isDraft,reviewDecision,comments
assert_eq "True  []" "$(json '"%s %s %s" % (o["isDraft"], o["reviewDecision"], o["comments"])')" "pr view #2"
run gh pr view 1 --json number,nosuchfield
assert_eq 1 "$rc" "unknown field"
assert_contains "$err" 'Unknown JSON field: "nosuchfield"' "unknown field"
run gh pr view 1 --json number --jq .number
assert_eq 1 "$rc" "--jq is refused"
run gh pr view 9 --json number
assert_eq 1 "$rc" "unknown pull request"
assert_contains "$err" "Could not resolve to a PullRequest with the number of 9" "unknown pull request"
run gh pr view packetfs/none --json number
assert_contains "$err" 'no pull requests found for branch "packetfs/none"' "unknown branch"

# --- checks advance a poll at a time ---------------------------------------------------------
run gh pr checks 1
assert_eq 8 "$rc" "checks pending (plain)"
assert_eq $'build\tpending\t0\thttps://ci.example/build\nlint\tpending\t0\thttps://ci.example/lint' "$out" "checks, plain"
run gh pr checks 1 --json name,state,bucket,link
assert_eq 0 "$rc" "checks --json"
assert_eq "build:PENDING:pending lint:FAILURE:fail https://ci.example/lint" \
	"$(json '" ".join("%s:%s:%s" % (c["name"], c["state"], c["bucket"]) for c in o) + " " + o[1]["link"]')" "second poll"
run gh pr checks packetfs/a
assert_eq 1 "$rc" "a failing check (plain)"
assert_eq $'build\tpass\t0\thttps://ci.example/build\nlint\tfail\t0\thttps://ci.example/lint' "$out" "third poll"
# pr view's statusCheckRollup reads (and polls) the same checks.
run gh pr view 1 --json statusCheckRollup
assert_eq "build:COMPLETED:SUCCESS lint:COMPLETED:FAILURE" \
	"$(json '" ".join("%s:%s:%s" % (c["name"], c["status"], c["conclusion"]) for c in o["statusCheckRollup"])')" "rollup"
# A push restarts them; new scripts replace them.
gh-stub-state push 1
run gh pr checks 1 --json name,bucket
assert_eq "pending pending" "$(json '" ".join(c["bucket"] for c in o)')" "checks after a push"
gh-stub-state checks 1 build=SKIPPED lint=CANCELLED
run gh pr checks 1 --json bucket
assert_eq "skipping cancel" "$(json '" ".join(c["bucket"] for c in o)')" "skipping and cancel"
gh-stub-state checks 1
run gh pr checks 1 --json name
assert_eq 1 "$rc" "no checks"
assert_contains "$err" "no checks reported on the 'packetfs/a' branch" "no checks"
# With "remote" set, a branch head that moves there restarts the checks.
git init -q --bare "$T/origin.git"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s["remote"] = sys.argv[2]; json.dump(s, open(sys.argv[1], "w"))' \
	"$GH_STUB_STATE" "$T/origin.git"
gh-stub-state checks 1 build=PENDING,SUCCESS
run gh pr checks 1 --json bucket
run gh pr checks 1 --json bucket
assert_eq pass "$(json 'o[0]["bucket"]')" "before the push"
make_repo "$T/r"
git -C "$REPO" push -q "$T/origin.git" main:packetfs/a
run gh pr checks 1 --json bucket
assert_eq pending "$(json 'o[0]["bucket"]')" "after a push to the remote"
run gh pr view 1 --json headRefOid
assert_eq "$(git -C "$REPO" rev-parse HEAD)" "$(json 'o["headRefOid"]')" "headRefOid follows the remote"

# --- pr comment --------------------------------------------------------------------------------
run gh pr comment 1 --body "First comment"
assert_eq https://github.com/acme/widget/pull/1#issuecomment-1001 "$out" "pr comment"
printf 'From stdin\n' | gh pr comment 1 --body-file - >/dev/null
run gh pr view 1 --json comments
assert_eq "First comment|From stdin
|packetfs-bot" "$(json '"|".join(c["body"] for c in o["comments"]) + "|" + o["comments"][0]["author"]["login"]')" "comments"

# --- review threads through gh api ---------------------------------------------------------------
t=$(gh-stub-state thread 1 --path src/a.c --line 7 --body "Why?")
assert_eq 1003 "$t" "thread id"
run gh api "repos/{owner}/{repo}/pulls/1/comments/$t/replies" -f body="Because."
assert_eq 0 "$rc" "reply ($err)"
assert_eq "1004 $t src/a.c 7 packetfs-bot" \
	"$(json '"%s %s %s %s %s" % (o["id"], o["in_reply_to_id"], o["path"], o["line"], o["user"]["login"])')" "reply"
gh-stub-state reply "$t" --body "Thanks." >/dev/null
run gh api -X GET repos/acme/widget/pulls/1/comments
assert_eq "1003:None:reviewer:Why? 1004:1003:packetfs-bot:Because. 1005:1003:reviewer:Thanks." \
	"$(json '" ".join("%s:%s:%s:%s" % (c["id"], c.get("in_reply_to_id"), c["user"]["login"], c["body"]) for c in o)')" \
	"review comments"
run gh api repos/acme/widget/issues/1/comments
assert_eq "First comment" "$(json 'o[0]["body"]')" "issue comments"
run gh api -X POST "repos/{owner}/{repo}/pulls/1/comments/999/replies" -f body=x
assert_eq 1 "$rc" "reply to an unknown comment"
assert_contains "$err" "gh: Not Found (HTTP 404)" "404"
run gh api repos/acme/widget/pulls/7/comments
assert_eq 1 "$rc" "comments of an unknown pull request"

# --- the repository: GH_REPO, -R, else the git remotes of the current directory ---------------
run env GH_REPO= gh pr view 1 --json number
assert_eq 1 "$rc" "outside a git repository"
assert_contains "$err" "failed to determine base repo" "no repository"
run env -C "$REPO" GH_REPO= gh pr view 1 --json number
assert_contains "$err" "failed to determine base repo: none of the git remotes" "no github remote"
git -C "$REPO" remote add gh git@github.com:acme/widget.git
run env -C "$REPO" GH_REPO= gh pr view 1 --json url
assert_eq https://github.com/acme/widget/pull/1 "$(json 'o["url"]')" "repository from the remote"

# --- the log: one line a call --------------------------------------------------------------------
last=$(tail -n 1 "$GH_STUB_STATE.log")
assert_contains "$last" '"argv": ["pr", "view", "1", "--json", "url"]' "log argv"
assert_contains "$last" "\"cwd\": \"$REPO\"" "log cwd"
assert_contains "$last" '"exit": 0' "log exit"
stdin_line=$(grep -F '"--body-file", "-"' "$GH_STUB_STATE.log")
assert_contains "$stdin_line" '"stdin": "From stdin\n"' "log stdin"
create_line=$(grep -F '"First"' "$GH_STUB_STATE.log")
assert_contains "$create_line" '"body": "The body.\n"' "log body from --body-file"
calls=$(grep -c . "$GH_STUB_STATE.log")
[ "$calls" -ge 30 ] || fail "expected a log line per gh call, got $calls"
exit 0
