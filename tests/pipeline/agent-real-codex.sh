#!/usr/bin/env bash
# One item from brief to the publish gate, and through it to a pull request and a babysit
# round, with the shipped team pipeline (examples/pipeline-agents.json.in) and the real Codex
# CLI (tests/agent-clis.sh's pinned version) as the agent of every role, driven by the scripted
# model of tests/fixtures/agents/mock_openai.py (scenarios/codex/ROLE.json). The remote is the
# repository's bare origin; gh is the stand-in (tests/fixtures/bin/gh).
#   1. advance: plan (apply_patch writes plan.md), print (edits hello.c, builds, commits),
#      validate (`packetfs record 01-build -- make -B hello` from the sandbox: an engine run at
#      the head), review (sound); the item waits at publish for approve;
#   2. approve: the branch is pushed, open-pr.sh opens pull request #1, CI fails; babysit round
#      1: the babysitter commits a fix.
# Every agent stage's log shows its tool calls, their outcomes and the final message; the raw
# `codex exec --json` stream and the session file are in the packet's transcripts/; the mock
# saw no outside connection attempt (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY point at it).
# test-timeout: 300
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
. "$FIXTURES/agents/real_codex.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-120}
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
export PATH="$FIXTURES/bin:$PATH" # gh is the stand-in
GH_REPO=acme/widget
codex_real_setup

make_repo
copy_recipes
export GH_STUB_STATE=$T/gh.json
gh-stub-state init --remote "$ORIGIN" --check build=FAILURE
team_pipeline "$CODEX" 600 2
make_store "$T/pipeline.json"
mount_store
d=$M/fix-1
r=$d/validation/registry.jsonl

# --- 1. brief -> plan, print, validate, review -> the publish gate ---------------------------
new_item fix-1
base=$(git -C "$REPO" rev-parse main)
printf '# Greeting says new\n\nMake the greeting say "new".\n' >"$d/brief.md"
ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state after review (last_error: $(status_field "$M" fix-1 last_error))"
assert_eq "publish: waiting for approve" "$(status_field "$M" fix-1 last_error)" "last_error"
head=$(worktree_head fix-1)
assert_eq "print (codex): the greeting says new" "$(git -C "$REPO" log -1 --format=%s "$head")" "the printer's commit"
assert_eq "$base" "$(git -C "$REPO" rev-parse "$head~1")" "one commit on the base"
assert_contains "$(git -C "$REPO" show "$head:hello.c")" "hello, new world" "hello.c at the head"
assert_contains "$(cat "$d/plan.md")" "scripted codex planner" "plan.md"
assert_contains "$(cat "$d/change.md")" "scripted codex printer" "change.md"
assert_reviewed "$head"

log=$(stage_log plan)
assert_contains "$log" "\$ git -C \"\$PACKET_WORKTREE\" log --oneline -3" "plan log: the command"
assert_contains "$log" "initial commit" "plan log: its output"
assert_contains "$log" "edit plan.md (add)" "plan log: the edit"
assert_contains "$log" $'final:\n  Wrote plan.md' "plan log: the final message"
log=$(stage_log print)
assert_contains "$log" "\$ git add hello.c && git commit -q -m 'print (codex): the greeting says new'" "print log"
assert_contains "$log" "$(git -C "$REPO" log -1 --format=%h "$head") print (codex)" "print log: git's output"
assert_not_contains "$log" "REFUSED" "print log"
log=$(stage_log validate)
assert_contains "$log" "\$ cd \"\$PACKET_WORKTREE\" && \"\$PACKETFS\" record 01-build -- make -B hello" "validate log"
assert_contains "$log" "cc -Wall -o hello hello.c" "validate log: the run's output"
assert_not_contains "$log" "REFUSED" "validate log"
log=$(stage_log review)
assert_contains "$log" "\$ cat change.diff" "review log"
assert_contains "$log" "--- a/hello.c" "review log: the diff"
for role in plan print validate review; do
	# transcripts/<n>-<stage>.codex.jsonl, beside stages/<n>-<stage>.log
	f=$(find "$d/transcripts" -name "*$role*.codex.jsonl" ! -name '*.session.jsonl' | head -n 1)
	[ -s "$f" ] || fail "$role: no raw stream in transcripts/: $(ls "$d/transcripts")"
	grep -q '"type":"turn.completed"' "$f" || fail "$role: raw stream: $(cat "$f")"
	[ -s "${f%.jsonl}.session.jsonl" ] || fail "$role: no session file beside $f"
	[ "$(mock_requests "$role")" -ge 2 ] || fail "$role: the mock answered $(mock_requests "$role") requests"
done

# --- 2. approve: push, pull request, babysit round 1 -----------------------------------------
ctl "$M" fix-1 approve
wait_for test -s "$d/rounds/round-1-answers.json"
wait_for test "$(git -C "$REPO" log -1 --format=%s "$(worktree_head fix-1)")" = "babysit (codex): fix the failing check"
assert_eq "$head" "$(git -C "$REPO" rev-parse "$(worktree_head fix-1)~1")" "the babysitter's commit on the reviewed head"
assert_eq "https://github.com/$GH_REPO/pull/1" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$d/pull-request.json")" "pull request"
# (conditions looked at anew on each try: the raw stream is copied in when the round ends)
babysit_raw() { [ -n "$(find "$d/transcripts" -name '*-babysit.codex.jsonl' 2>/dev/null)" ]; }
babysit_log() { [ -n "$(stage_log_name babysit)" ]; }
wait_for babysit_raw
wait_for babysit_log
wait_for grep -q "babysit (codex): fix the failing check" "$d/stages/$(stage_log_name babysit)"
log=$(stage_log babysit)
assert_contains "$log" "\$ cat \"\$PACKET_DIR/rounds/round-\$PACKET_ROUND.md\"" "babysit log"
assert_contains "$log" "| build | FAILURE | fail |" "babysit log: the round file"
assert_contains "$log" $'final:\n  Fixed the failing check' "babysit log: the final message"
assert_eq "" "$(mock_outside)" "outside connection attempts"
exit 0
