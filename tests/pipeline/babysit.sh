#!/usr/bin/env bash
# examples/stages/babysit.sh, round by round, against the gh stand-in (tests/fixtures/bin/gh)
# and a stand-in agent (tests/fixtures/stages/babysit-agent.sh), in a directory laid out like
# a packet (no mount needed): CI pending -> 75; threads answered and a commit -> replies, 75;
# CI passing and nothing open -> 0; a failing check -> the agent runs, 75; CI that never holds
# still -> 75; a thread the agent leaves unanswered -> 1, naming it.
. "$(dirname "$0")/../lib.sh"
BABYSIT=$ROOT/examples/stages/babysit.sh
export GH_STUB_STATE=$T/gh.json GH_REPO=acme/widget
export BABYSIT_POLL_S=0.1 BABYSIT_AGENT="$FIXTURES/stages/babysit-agent.sh"
export FIXTURE_AGENT_LOG=$T/agent.log BABYSIT_LOGIN=maintainer
# The system's python3 where there is one (a version manager's shim costs a second a call).
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
export PATH="$FIXTURES/bin:$PATH"
: >"$FIXTURE_AGENT_LOG"
gh-stub-state init --check build=PENDING

make_repo
git -C "$REPO" checkout -q -b packetfs/fix-1
P=$T/fix-1
mkdir -p "$P"
url=$(gh pr create --title "Fix" --body "b" --base main --head packetfs/fix-1)
assert_eq https://github.com/acme/widget/pull/1 "$url" "PR url"
printf '{"number": 1, "url": "%s"}\n' "$url" >"$P/pull-request.json"

# round N [VAR=VALUE...] : runs babysit.sh as round N; its status in $rc, output in $T/out.
round() {
	local n=$1
	shift
	rc=0
	(cd "$P" && env PACKET_ITEM=fix-1 PACKET_DIR="$P" PACKET_WORKTREE="$REPO" \
		PACKET_STAGE=babysit PACKET_ITERATION=1 PACKET_BRANCH=packetfs/fix-1 PACKET_BASE=main \
		PACKET_ROUND="$n" "$@" bash "$BABYSIT") >"$T/out" 2>&1 || rc=$?
}
agent_runs() { wc -l <"$FIXTURE_AGENT_LOG"; }
# replies_to ID : the bodies of the replies posted to review comment ID, one a line.
replies_to() {
	gh api "repos/{owner}/{repo}/pulls/1/comments" | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    if c.get("in_reply_to_id") == int(sys.argv[1]):
        print(c["body"].replace("\n", "\\n"))' "$1"
}

# --- round 1: CI pending and holding still -> 75, no agent -------------------------------------
round 1
assert_eq 75 "$rc" "round 1 status ($(cat "$T/out"))"
r1=$(cat "$P/rounds/round-1.md")
assert_contains "$r1" "CI polled 3 times: the same for the last 3 polls" "round-1.md"
assert_contains "$r1" "| build | PENDING | pending | https://ci.example/build |" "round-1.md"
assert_contains "$r1" "Outcome: not settled: 1 check pending." "round-1.md"
assert_eq 0 "$(agent_runs)" "agent runs after round 1"

# --- round 2: CI pending for 2 polls then pass; two threads -> agent, replies, commit, 75 ----
gh-stub-state checks 1 build=PENDING,PENDING,SUCCESS
t1=$(gh-stub-state thread 1 --path hello.c --line 5 --body "Please check the return value.")
t2=$(gh-stub-state thread 1 --path Makefile --line 2 --body $'Use -Wextra too?\nIt finds more.')
head1=$(git -C "$REPO" rev-parse HEAD)
round 2 FIXTURE_COMMIT=1 FIXTURE_DECLINE="$t2"
assert_eq 75 "$rc" "round 2 status ($(cat "$T/out"))"
r2=$(cat "$P/rounds/round-2.md")
assert_contains "$r2" "CI polled 5 times: the same for the last 3 polls" "round-2.md"
assert_contains "$r2" "| build | SUCCESS | pass |" "round-2.md"
assert_contains "$r2" "### Thread $t1: hello.c:5 (reviewer)" "round-2.md"
assert_contains "$r2" "> Please check the return value." "round-2.md"
assert_contains "$r2" "### Thread $t2: Makefile:2 (reviewer)" "round-2.md"
assert_contains "$r2" $'> Use -Wextra too?\n> It finds more.' "round-2.md"
assert_contains "$r2" "Thread $t1: accepted; replied https://github.com/acme/widget/pull/1#discussion_r" "round-2.md"
assert_contains "$r2" "Committed this round: $(git -C "$REPO" log -1 --format='%h babysit: round 2')" "round-2.md"
assert_contains "$r2" "Outcome: not settled: 2 threads answered this round, new commits." "round-2.md"
[ "$(git -C "$REPO" rev-parse HEAD)" != "$head1" ] || fail "the agent's commit is missing"
assert_eq "AGENT_ROLE=babysit PACKET_ROUND=2 ROUND_FILE=rounds/round-2.md ANSWERS=rounds/round-2-answers.json PR=1 URL=$url CWD=$P" \
	"$(cat "$FIXTURE_AGENT_LOG")" "agent environment"
[ -s "$P/rounds/round-2-answers.json" ] || fail "no answers file"
assert_eq '<!-- packetfs-babysit -->\nVerdict: accepted — Action: fixed in round 2' "$(replies_to "$t1")" "reply to $t1"
assert_eq '<!-- packetfs-babysit -->\nVerdict: declined — Action: the code is right as it is' "$(replies_to "$t2")" "reply to $t2"

# --- round 3: the push restarts CI (pending, then pass); every thread answered -> 0 ---------
# A thread whose last reply comes from $BABYSIT_LOGIN (maintainer) counts as answered too.
gh-stub-state push 1 "$(git -C "$REPO" rev-parse HEAD)"
t3=$(gh-stub-state thread 1 --path hello.c --line 1 --body "Nit: header order.")
gh-stub-state reply "$t3" --user maintainer --body "Answered by hand: fine as is." >/dev/null
round 3
assert_eq 0 "$rc" "round 3 status ($(cat "$T/out"))"
r3=$(cat "$P/rounds/round-3.md")
assert_contains "$r3" "CI polled 5 times" "round-3.md"
assert_contains "$r3" $'## Open review threads\n\nNone.' "round-3.md"
assert_contains "$r3" "Outcome: settled: every check passed, no open thread, nothing committed." "round-3.md"
assert_eq 1 "$(agent_runs)" "agent runs after round 3"
assert_contains "$(cat "$T/out")" "babysit.sh: round 3: settled" "round 3 output"

# --- round 4: a failing check -> the agent runs, 75 -------------------------------------------
gh-stub-state checks 1 build=SUCCESS lint=FAILURE
round 4
assert_eq 75 "$rc" "round 4 status ($(cat "$T/out"))"
r4=$(cat "$P/rounds/round-4.md")
assert_contains "$r4" $'## Failing checks\n\n- lint (FAILURE): https://ci.example/lint' "round-4.md"
assert_contains "$r4" "Outcome: not settled: 1 check failing." "round-4.md"
assert_eq 2 "$(agent_runs)" "agent runs after round 4"

# --- round 5: CI that does not hold still within BABYSIT_MAX_POLLS -> 75, no agent ------------
gh-stub-state checks 1 build=PENDING,SUCCESS,PENDING,SUCCESS,PENDING
round 5 BABYSIT_MAX_POLLS=4
assert_eq 75 "$rc" "round 5 status ($(cat "$T/out"))"
assert_contains "$(cat "$P/rounds/round-5.md")" "CI polled 4 times: not steady after 4 polls" "round-5.md"
assert_contains "$(cat "$P/rounds/round-5.md")" "Outcome: not settled: CI is not steady" "round-5.md"
assert_eq 2 "$(agent_runs)" "agent runs after round 5"

# --- round 6: the reviewer answers back on t1 and opens t4; the agent skips t4 -> 1 -----------
gh-stub-state checks 1 build=SUCCESS
gh-stub-state reply "$t1" --body "Not quite: the second call too." >/dev/null
t4=$(gh-stub-state thread 1 --path README.md --line 3 --body "Typo.")
round 6 FIXTURE_SKIP="$t4"
assert_eq 1 "$rc" "round 6 status ($(cat "$T/out"))"
assert_contains "$(cat "$T/out")" "babysit.sh: rounds/round-6-answers.json: no answer for thread $t4 (README.md:3)" \
	"round 6 error"
r6=$(cat "$P/rounds/round-6.md")
assert_contains "$r6" "### Thread $t1: hello.c:5 (reviewer)" "round-6.md (reopened thread)"
assert_contains "$r6" "- reply by reviewer: Not quite: the second call too." "round-6.md"
assert_not_contains "$r6" "### Thread $t2" "round-6.md"
[ -z "$(replies_to "$t4")" ] || fail "a reply was posted to the unanswered thread"

# --- errors ------------------------------------------------------------------------------------
rm "$P/pull-request.json"
round 7
assert_eq 1 "$rc" "status without pull-request.json"
assert_contains "$(cat "$T/out")" "babysit.sh: pull-request.json: not readable" "no pull-request.json"
printf '{"number": 1, "url": "%s"}\n' "$url" >"$P/pull-request.json"
round 7 GH_STUB_STATE=
assert_eq 1 "$rc" "status with gh unauthenticated"
assert_contains "$(cat "$T/out")" "babysit.sh: gh pr checks 1: To get started with GitHub CLI" "gh failing"
exit 0
