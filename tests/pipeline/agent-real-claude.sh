#!/usr/bin/env bash
# test-timeout: 300
# One item from brief to a pull request with the real, pinned Claude Code CLI
# (tests/agent-clis.sh) in every agent role of the shipped team pipeline
# (examples/pipeline-agents.json.in): plan, print, validate, review, then publish (gate
# approve; the gh stand-in opens the pull request) and one babysit round. The model is the
# mock server tests/fixtures/agents/mock_anthropic.py, which plays the scripts of
# tests/fixtures/agents/scenarios/claude/; it is also every proxy the CLI sees, and counts
# any attempt to reach another host. AGENT_OFFLINE is left at its default (on).
#   1. advance: plan, print (the printer's commit), validate (its `packetfs record` is an
#      engine run at the head), review (sound); publish waits for approve; nothing pushed;
#   2. each stage log shows the agent's tool calls, their outcome and its final message; the
#      raw stream of each run is in the packet (transcripts/N-STAGE.claude.jsonl);
#   3. approve: the head is pushed, the pull request is opened; round 1 (CI failing): the
#      babysitter commits a fix;
#   4. no request left for another host over the whole item.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
. "$FIXTURES/agents/lib.sh"
. "$FIXTURES/agents/real.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-90}
real_claude
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
export PATH="$FIXTURES/bin:$PATH" # gh is the stand-in
GH_REPO=acme/widget

make_repo
copy_recipes
mock_start "$AGENTS/scenarios/claude"
export GH_STUB_STATE=$T/gh.json
gh-stub-state init --remote "$ORIGIN" --check build=FAILURE

team_pipeline "$CLAUDE" 3 6
with_claude_env "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store
d=$M/fix-1
r=$d/validation/registry.jsonl

# --- 1. plan, print, validate, review; publish waits for approve ------------------------------
new_item fix-1
printf '# Greeting says new\n\nMake the greeting say "new".\n' >"$d/brief.md"
ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state after review (last_error: $(status_field "$M" fix-1 last_error))"
assert_eq "publish: waiting for approve" "$(status_field "$M" fix-1 last_error)" "last_error"
reviewed=$(worktree_head fix-1)
assert_eq "print (mock): the greeting says new" "$(git -C "$REPO" log -1 --format=%s "$reviewed")" \
	"the printer's commit"
assert_contains "$(git -C "$REPO" show "$reviewed:hello.c")" "hello, new world" "hello.c at the head"
assert_contains "$(cat "$d/plan.md")" "mock planner" "plan.md"
assert_contains "$(cat "$d/change.md")" "mock printer" "change.md"
assert_reviewed "$reviewed"
assert_eq "" "$(remote_head "$ORIGIN" packetfs/fix-1)" "the branch on the remote before approve"

# --- 2. the stage logs and the raw streams ---------------------------------------------------
wt=$(cd "$STORE/worktrees/fix-1" && pwd)
declare -A CALLS=(
	[plan]="\$ git log --oneline -3|read $wt/hello.c|write $d/plan.md"
	[print]="edit $wt/hello.c|\$ make hello|\$ git add hello.c && git commit -q|write $d/change.md"
	[validate]="\$ $PFS record 01-build -- make -B hello|write $d/change-validation.md"
	[review]="\$ git diff main...HEAD|write $d/review.md"
)
declare -A FINAL=([plan]="Wrote plan.md (mock planner)." [print]="Committed the change and wrote change.md (mock printer)."
	[validate]="Verdict: pass (mock validator)." [review]="Assessment: sound (mock reviewer).")
for role in plan print validate review; do
	log=$(stage_log "$role" first)
	assert_contains "$log" "claude 2.1.332: model" "$role log: the CLI's init line"
	IFS='|' read -r -a want <<<"${CALLS[$role]}"
	assert_contains_each "$log" "$role log: tool calls" "${want[@]}" "  -> exit 0" "final:" \
		"  ${FINAL[$role]}"
	assert_not_contains "$log" "REFUSED" "$role log"
	n=$(stage_log_name "$role" first | cut -d- -f1)
	raw=$d/transcripts/$n-$role.claude.jsonl
	[ -s "$raw" ] || fail "$role: no raw stream $raw: $(ls "$d/transcripts" 2>&1)"
	assert_contains "$log" "raw stream: $raw" "$role log"
	python3 - "$raw" <<'PY' || fail "$role: the raw stream lacks its result: $(tail -c 600 "$raw")"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
assert res["type"] == "result" and not res["is_error"] and res["permission_denials"] == [], res
PY
	assert_eq 1 "$(mock_requests messages "$role" | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if json.loads(l)["step"] == 0))')" "$role: runs of the mock's script"
done
# What the printer's build reported back to the model: in the log, and in the next request.
assert_contains "$(stage_log print first)" "cc -Wall -o hello hello.c" "print log: make's output"
assert_contains "$(mock_requests messages print | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["step"] == 3:
        print(json.dumps(o["results"]))')" "cc -Wall -o hello hello.c" "the tool result the model got for make"

# --- 3. approve: push, pull request, babysit round 1 -----------------------------------------
ctl "$M" fix-1 approve
# babysit_done : true once the round's agent has finished (its product written).
babysit_done() { cat "$d"/stages/*-babysit.log 2>/dev/null | grep -q 'agent-stage.sh: role babysit: wrote'; }
wait_for babysit_done
ctl "$M" fix-1 hold
assert_contains "$(cat "$d/pull-request.json")" '"number": 1' "pull-request.json"
log=$(publish_log fix-1)
assert_contains_each "$log" "publish log" "[packetfs] pushed packetfs/fix-1 to origin" \
	"open-pr.sh: opened https://github.com/$GH_REPO/pull/1"
assert_eq 1 "$(gh_log pr create | grep -c .)" "pull requests opened"
assert_eq "[]" "$(cat "$d/rounds/round-1-answers.json")" "round-1-answers.json"
fixed=$(git -C "$REPO" rev-parse packetfs/fix-1)
assert_eq "babysit (mock): round 1 fix" "$(git -C "$REPO" log -1 --format=%s "$fixed")" "round 1's commit"
assert_eq "$reviewed" "$(git -C "$REPO" rev-parse "$fixed^")" "round 1's commit's parent"
assert_contains "$(git -C "$REPO" show "$fixed:hello.c")" "/* checked in CI, round 1 */" "hello.c after round 1"
blog=$(cat "$d"/stages/*-babysit.log)
n=$(stage_log_name babysit first | cut -d- -f1)
[ -s "$d/transcripts/$n-babysit.claude.jsonl" ] || fail "no raw stream of round 1 beside its log $n-babysit.log: $(ls "$d/transcripts")"
assert_contains_each "$blog" "babysit log" "read $d/rounds/round-1.md" "edit $wt/hello.c" \
	"\$ make hello && git add hello.c && git commit -q" "  Fixed the failing check (mock babysitter)."

# --- 4. offline: nothing but the model endpoint -----------------------------------------------
mock_outside
# The engine validates the round's head, then pushes it.
wait_for sh -c "[ \"\$(git --git-dir='$ORIGIN' rev-parse -q --verify refs/heads/packetfs/fix-1)\" = $fixed ]"
[ -n "$(mock_requests messages babysit)" ] || fail "the babysitter never reached the mock"
exit 0
