#!/usr/bin/env bash
# One item from brief to a settled pull request with the shipped team pipeline,
# examples/pipeline-agents.json.in, filled in as a team would (sed of its placeholders) and
# changed only where a test must (gpus 0, the fixture recipes, babysit rounds every 3 s, CI
# polled every 0.1 s, the stand-in's plumbing). Every agent stage is agent-stage.sh running the
# claude stand-in (tests/fixtures/agents, calls/*.calls); the forge is the authenticated git
# HTTP server of tests/forge.sh (apache2 + git http-backend, basic auth, a `store` credential
# helper in the daemon's HOME) and the gh stand-in (tests/fixtures/bin/gh), whose CI follows
# the server's branch.
#
#   1. brief.md and a learnings document; advance: plan, print, validate and review run, the
#      item waits at publish for approve; nothing is on the server yet;
#   2. approve: the reviewed head is pushed over HTTP, open-pr.sh opens pull request #1 (title,
#      ## Summary / ## Validation / ## Notes, the evidence comment) and writes
#      pull-request.json;
#   3. round 1: CI steady at FAILURE; the babysitter commits a fix; the engine runs the plan's
#      recipe (01-build) at the new head, pushes it, and CI restarts on the new head; the item
#      waits; the test holds it, turns CI green, adds a review thread, releases it;
#   4. round 2: CI green, one open thread: the babysitter declines it, the reply is posted,
#      nothing is committed, the item waits;
#   5. round 3: green and nothing open: settled, the item is done, round 3/6.
# The packet keeps each round's log and round file; the registry has validated engine runs
# at both heads; the server's branch is the item branch; the learnings reached every prompt.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
. "$FIXTURES/agents/lib.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-60}
# The system's python3 where there is one (a version manager's shim costs a second a call).
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
# Stage programs inherit the daemon's environment: everything below is exported before mount.
export PATH="$FIXTURES/bin:$PATH" # gh is the stand-in
GH_REPO=acme/widget
HELPER=$AGENTS/babysit-round.sh

make_repo
copy_recipes
forge_http_start
forge_home
git -C "$REPO" remote set-url origin "$FORGE_URL"

# The forge's CI: a new pull request's build check is pending, then fails; CI follows the
# server's branch (a new head there restarts every check from its first state).
export GH_STUB_STATE=$T/gh.json
gh-stub-state init --remote "$FORGE_GIT_DIR" --check build=PENDING,FAILURE
export AGENT_STUB_SCRIPT_DIR=$AGENTS/calls AGENT_STUB_LOG=$T/agents.log

# The shipped pipeline, filled in.
sed -e "s|@REPO@|$REPO|g" -e "s|@BASE@|main|g" -e "s|@RECIPES@|$RECIPES|g" \
	-e "s|@STAGES@|$ROOT/examples/stages|g" -e "s|@AGENT_CMD@|$AGENTS/claude|g" \
	-e "s|@PACKETFS@|$PFS|g" -e "s|@GH_REPO@|$GH_REPO|g" \
	"$ROOT/examples/pipeline-agents.json.in" >"$T/pipeline.json"
! grep -n '@[A-Z_]*@' "$T/pipeline.json" || fail "placeholders left in pipeline-agents.json.in"
python3 - "$T/pipeline.json" "$HELPER" <<'PY'
import json, sys
path, helper = sys.argv[1:]
p = json.load(open(path))
p["gpus"] = 0
b = [s for s in p["stages"] if s["name"] == "babysit"][0]
b["rounds"] = {"every_s": 5, "max": 6}
b["env"].update({"BABYSIT_POLL_S": "0.1", "AGENT_STUB_BABYSIT": helper,
                 # What this team's babysitter may run: its helper, make and git's commits.
                 "AGENT_ALLOWED_BASH": "git add,git commit,git diff,make," + helper})
json.dump(p, open(path, "w"), indent=1)
PY
make_store "$T/pipeline.json"
mount_store
d=$M/fix-1
r=$d/validation/registry.jsonl

# round_log N : the log of round N of the babysit stage (the Nth babysit log).
round_log()
{
	local f
	f=$(ls "$d/stages" | grep -E '^[0-9]+-babysit\.log$' | sort -n | sed -n "${1}p")
	[ -n "$f" ] || fail "no log of round $1: $(ls "$d/stages")"
	cat "$d/stages/$f"
}
# wait_round N STATE : waits until the item is in STATE after round N; a failed or blocked
# item ends the wait at once (nothing leaves those by itself) and fails the test.
wait_round()
{
	wait_for round_or_stop "$1" "$2"
	assert_eq "$1/6 $2" "$(status_field "$M" fix-1 round) $(status_field "$M" fix-1 state)" \
		"round and state (last_error: $(status_field "$M" fix-1 last_error))"
}
round_or_stop()
{
	local st
	st=$(status_field "$M" fix-1 state)
	case $st in failed | blocked) return 0 ;; esac
	[ "$(status_field "$M" fix-1 round)" = "$1/6" ] && [ "$st" = "$2" ]
}
# engine_runs_at HEAD : the validated engine runs of 01-build at HEAD.
engine_runs_at() { reg count "$r" recipe=01-build source=engine status=validated head="$1"; }

# --- 1. brief and learnings; plan, print, validate, review; publish waits for approve --------
printf 'LEARNING-e2e: CI builds with -Wall; keep hello.c free of warnings.\n' >"$M/learnings/ci.md"
new_item fix-1
printf '# Greeting says new\n\nMake the greeting say "new".\n' >"$d/brief.md"
ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state after review"
assert_eq "publish: waiting for approve" "$(status_field "$M" fix-1 last_error)" "last_error"
reviewed=$(worktree_head fix-1)
assert_eq "print (stand-in): the greeting says new" "$(git -C "$REPO" log -1 --format=%s "$reviewed")" \
	"the printer's commit"
assert_head "$reviewed" "$(status_field "$M" fix-1 assessment_head)" "assessment_head"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict"
for role in plan print validate review; do
	assert_eq 1 "$(stub_starts "$AGENT_STUB_LOG" role=$role | grep -c .)" "$role: agent runs"
done
assert_eq "" "$(remote_head "$FORGE_GIT_DIR" packetfs/fix-1)" "the branch on the server before approve"
[ ! -e "$GH_STUB_STATE.log" ] || fail "gh ran before approve: $(cat "$GH_STUB_STATE.log")"

# --- 2. approve: push over HTTP, pull request #1 ---------------------------------------------
ctl "$M" fix-1 approve
wait_round 1 waiting
# Between rounds: hold keeps the timer (every 3 s) from starting round 2 while the test acts.
ctl "$M" fix-1 hold
assert_eq "1/6 waiting" "$(status_field "$M" fix-1 round) $(status_field "$M" fix-1 state)" \
	"round and state once held"
log=$(publish_log fix-1)
assert_contains "$log" "[packetfs] pushed packetfs/fix-1 to origin" "publish log"
assert_contains "$log" "To $FORGE_URL" "publish log (git's porcelain)"
assert_contains "$log" "open-pr.sh: opened https://github.com/$GH_REPO/pull/1" "publish log"
assert_not_contains "$log" "$FORGE_PASSWORD" "publish log"
pr=$(cat "$d/pull-request.json")
assert_eq 1 "$(printf '%s' "$pr" | field number)" "pull-request.json number"
assert_eq "https://github.com/$GH_REPO/pull/1" "$(printf '%s' "$pr" | field url)" "pull-request.json url"
assert_eq "$reviewed" "$(printf '%s' "$pr" | field head)" "pull-request.json head"
create=$(gh_log pr create)
assert_eq 1 "$(printf '%s\n' "$create" | grep -c .)" "pr create calls"
assert_contains "$(printf '%s' "$create" | field argv)" \
	"'--head', 'packetfs/fix-1', '--base', 'main', '--title', 'Greeting says new'" "pr create argv"
body=$(printf '%s' "$create" | field body)
assert_contains_each "$body" "PR body" '## Summary' 'Make the greeting say "new".' 'stand-in printer' \
	'## Validation' "Verdict: **pass** at \`$reviewed\`" '| 01-build | validated |' '## Notes' \
	"Review: sound at \`$reviewed\`" '1 file changed, 1 insertion(+), 1 deletion(-)'
[ "$(printf '%s\n' "$body" | grep -nxE '## (Summary|Validation|Notes)' | cut -d' ' -f2 | tr '\n' ' ')" = \
	"Summary Validation Notes " ] || fail "PR body sections out of order: $body"
comment=$(gh_log pr comment 1)
assert_eq 1 "$(printf '%s\n' "$comment" | grep -c .)" "pr comment calls"
assert_contains "$(printf '%s' "$comment" | field body)" "### Evidence record" "evidence comment"
assert_contains "$(printf '%s' "$comment" | field body)" "Head \`$reviewed\`" "evidence comment"

# --- 3. round 1: CI fails; the babysitter's fix is validated and pushed ----------------------
fixed=$(worktree_head fix-1)
[ "$fixed" != "$reviewed" ] || fail "round 1 committed nothing"
assert_eq "babysit (stand-in): round 1: fix the failing check" \
	"$(git -C "$REPO" log -1 --format=%s packetfs/fix-1)" "round 1's commit"
assert_eq "$reviewed" "$(git -C "$REPO" rev-parse "$fixed^")" "round 1's commit's parent"
assert_contains "$(git -C "$REPO" show "$fixed:hello.c")" "/* checked in CI, round 1 */" "hello.c"
r1=$(cat "$d/rounds/round-1.md")
assert_contains "$r1" "| build | FAILURE | fail |" "round-1.md"
assert_contains "$r1" "- build (FAILURE): https://ci.example/build" "round-1.md"
assert_contains "$r1" "Committed this round: ${fixed:0:7} babysit (stand-in): round 1" "round-1.md"
assert_contains "$r1" "Outcome: not settled: 1 check failing, new commits." "round-1.md"
assert_eq "[]" "$(cat "$d/rounds/round-1-answers.json")" "round-1-answers.json"
l1=$(round_log 1)
assert_contains "$l1" "[packetfs] round 1 moved the head from ${reviewed:0:12} to ${fixed:0:12}" "round 1 log"
assert_contains "$l1" "[packetfs] queued 01-build" "round 1 log"
assert_contains "$l1" "[packetfs] every recipe the plan names validated at ${fixed:0:12}" "round 1 log"
assert_contains "$l1" "[packetfs] pushed packetfs/fix-1 to origin" "round 1 log"
assert_contains "$l1" "[packetfs] round 1: not settled (exit 75)" "round 1 log"
assert_eq "$fixed" "$(remote_head "$FORGE_GIT_DIR" packetfs/fix-1)" "the branch on the server after round 1"
# CI restarted on the new head: the build check is back at its first state.
checks=$(GH_REPO=$GH_REPO gh pr checks 1 --json name,state)
assert_contains "$checks" '"state": "PENDING"' "checks after the push"
assert_contains "$(GH_REPO=$GH_REPO gh pr view 1 --json headRefOid)" "\"headRefOid\": \"$fixed\"" \
	"the pull request's head"
assert_eq 1/6 "$(status_field "$M" fix-1 round)" "round while held"

# The forge's CI now passes, and a reviewer opens a thread; release starts round 2 at once.
gh-stub-state checks 1 build=PENDING,SUCCESS
tid=$(gh-stub-state thread 1 --path hello.c --line 6 --body 'Should the greeting not stay "old"?')
ctl "$M" fix-1 release

# --- 4, 5. round 2 answers the thread; round 3 settles ---------------------------------------
wait_state "$M" fix-1 done
assert_eq babysit "$(status_field "$M" fix-1 stage)" "stage"
assert_eq 3/6 "$(status_field "$M" fix-1 round)" "round"
assert_eq 3 "$(ls "$d/stages" | grep -cE '^[0-9]+-babysit\.log$')" "babysit logs"
for n in 1 2 3; do
	[ -s "$d/rounds/round-$n.md" ] || fail "rounds/round-$n.md is missing"
	assert_contains "$(round_log "$n")" "babysit.sh: round $n: pull request #1" "round $n log"
done
assert_eq 2 "$(grep -c '"type":"round_waiting"' "$d/events")" "round_waiting events"

r2=$(cat "$d/rounds/round-2.md")
assert_contains "$r2" "| build | SUCCESS | pass |" "round-2.md"
assert_contains "$r2" "### Thread $tid: hello.c:6 (reviewer)" "round-2.md"
assert_contains "$r2" "Thread $tid: declined; replied https://github.com/$GH_REPO/pull/1#discussion_r" "round-2.md"
assert_contains "$r2" "Outcome: not settled: 1 thread answered this round." "round-2.md"
python3 - "$d/rounds/round-2-answers.json" "$tid" <<'PY' || fail "round-2-answers.json: $(cat "$d/rounds/round-2-answers.json")"
import json, sys
a = json.load(open(sys.argv[1]))
assert [(x["thread"], x["verdict"]) for x in a] == [(int(sys.argv[2]), "declined")], a
PY
l2=$(round_log 2)
assert_not_contains "$l2" "moved the head" "round 2 log"
assert_contains "$l2" "[packetfs] round 2: not settled (exit 75)" "round 2 log"
reply=$(gh_log api -X POST "repos/{owner}/{repo}/pulls/1/comments/$tid/replies")
assert_eq 1 "$(printf '%s\n' "$reply" | grep -c .)" "replies posted"
assert_contains "$(printf '%s' "$reply" | field body)" \
	"Verdict: declined — Action: hello.c:6 keeps its greeting" "the reply"
assert_eq 1 "$(gh_log api -X POST | grep -c .)" "POST calls to gh api"

# Round 2 found the pull request at round 1's head, which had no evidence on it yet.
comments=$(gh_log pr comment 1)
assert_eq 2 "$(printf '%s\n' "$comments" | grep -c .)" "pr comment calls after round 2"
ev2=$(printf '%s\n' "$comments" | sed -n 2p | field body)
assert_contains "$ev2" "Evidence at \`$fixed\`, the head a babysitting round committed" "evidence of round 1's head"
assert_contains "$ev2" "| 01-build | validated |" "evidence of round 1's head"
assert_contains "$(cat "$d/pull-request.json")" "\"head\": \"$fixed\"" "pull-request.json's head"
assert_contains "$r2" "Posted the evidence of $fixed" "round-2.md"

r3=$(cat "$d/rounds/round-3.md")
assert_contains "$r3" "Open review threads"$'\n\nNone.' "round-3.md"
assert_contains "$r3" "Outcome: settled: every check passed, no open thread, nothing committed." "round-3.md"
[ ! -e "$d/rounds/round-3-answers.json" ] || fail "the agent ran in round 3"
assert_contains "$(round_log 3)" "[packetfs] round 3: settled" "round 3 log"

# The head: round 1's, on the item branch, on the server, in the pull request; evidence at
# both heads.
assert_eq "$fixed" "$(worktree_head fix-1)" "the final head"
assert_eq "$fixed" "$(git -C "$REPO" rev-parse packetfs/fix-1)" "the item branch"
assert_eq "$fixed" "$(remote_head "$FORGE_GIT_DIR" packetfs/fix-1)" "the branch on the server"
assert_contains "$(GH_REPO=$GH_REPO gh pr view 1 --json headRefOid)" "\"headRefOid\": \"$fixed\"" \
	"the pull request's head"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
[ "$(engine_runs_at "$reviewed")" -ge 1 ] || fail "no validated engine run at the reviewed head: $(cat "$r")"
[ "$(engine_runs_at "$fixed")" -ge 1 ] || fail "no validated engine run at round 1's head: $(cat "$r")"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict at the final head"

# The agents: one babysitter a round that needed one, each with the learnings in its prompt.
assert_eq 2 "$(stub_starts "$AGENT_STUB_LOG" role=babysit | grep -c .)" "babysit agent runs"
for role in plan print validate review babysit; do
	while IFS= read -r rec; do
		assert_contains "$(stub_field "$rec" prompt)" "LEARNING-e2e: CI builds with -Wall" "$role: prompt"
	done < <(stub_starts "$AGENT_STUB_LOG" role=$role)
done
b2=$(stub_starts "$AGENT_STUB_LOG" role=babysit | sed -n 2p)
assert_contains "$(stub_field "$b2" prompt)" "### Thread $tid: hello.c:6 (reviewer)" "round 2's agent prompt"
assert_contains "$(stub_field "$b2" permissions)" '"mode": "acceptEdits"' "the babysitter's permissions"
assert_contains "$(stub_field "$b2" permissions)" "\"Bash($HELPER:*)\"" "the babysitter's permissions"
grep -q '"refused": \[\]' <(grep '"event": "end"' "$AGENT_STUB_LOG") || fail "no agent run ended"
! grep '"event": "end"' "$AGENT_STUB_LOG" | grep -v '"refused": \[\]' ||
	fail "an agent's tool call was refused: $(grep '"refused": \["' "$AGENT_STUB_LOG")"
exit 0
