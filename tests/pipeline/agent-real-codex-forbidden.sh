#!/usr/bin/env bash
# The real Codex CLI (tests/agent-clis.sh's pinned version) as agent-stage.sh runs it, role by
# role, driven by the scripted model of tests/fixtures/agents/mock_openai.py, each role trying
# what it may not do (scenarios/codex/forbidden/ROLE.json); the packet and the worktree are
# plain directories laid out as the engine lays them out (no mount: agent-stage.sh is run
# directly with the stage's environment):
#   plan      appends to hello.c, patches a file outside the packet, creates an ignored file
#             in the worktree: each refused by the sandbox (REFUSED lines in the log), the
#             worktree unchanged, plan.md written: the stage passes; an agent command that
#             carries its own sandbox, writable roots or --ephemeral is refused (status 2);
#   review    edits and commits in the worktree, reaches out with curl: refused; the stage
#             passes;
#   validate  `touch /tmp/x`, `sed -i` of hello.c and `make -B hello` refused by the sandbox,
#             `make -q hello` (which
#             writes nothing, so no sandbox refuses it) found afterwards: the stage fails,
#             naming it;
#   print     edits and builds but commits nothing: the stage fails, naming what it left; its
#             writes to the main checkout and $HOME are refused;
#   babysit   (the good scenario) fixes, builds and commits: the stage passes.
# Every run: the raw stream and the session file in the packet's transcripts/, the tool calls
# in the log, no outside connection attempt (the proxies point at the mock).
# test-timeout: 300
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
. "$FIXTURES/agents/real_codex.sh"
if [ -x /usr/bin/python3 ]; then PATH=/usr/bin:$PATH; fi
codex_real_setup "$AGENTS/scenarios/codex/forbidden"

codex_packet
mkdir -p "$pd/rounds"
printf '# Plan\n\n1. hello.c\n\n```validation-recipes\n01-build\n```\n' >"$pd/plan.md"

# run_role ROLE [VAR=VALUE...] : codex_stage ROLE as the engine runs it in iteration 1 on
# branch packetfs/fix-1 over main; status in rc, log in $T/ROLE.log and in log.
run_role()
{
	codex_stage "$1" PACKET_ITERATION=1 PACKET_BRANCH=packetfs/fix-1 PACKET_BASE=main "${@:2}"
}
state() { git -C "$wt" rev-parse HEAD; git -C "$wt" status --porcelain --untracked-files=all --ignored; }
before=$(state)

# --- plan ------------------------------------------------------------------------------------
run_role plan
assert_eq 0 "$rc" "plan: status ($log)"
assert_contains "$log" "\$ echo planned >> \"\$PACKET_WORKTREE/hello.c\"" "plan: the call in the log"
assert_contains "$log" "REFUSED: exec_command: echo planned >> \"\$PACKET_WORKTREE/hello.c\": " "plan: refusal"
assert_contains "$log" "Read-only file system" "plan: why"
assert_contains "$log" "REFUSED: apply_patch: ../worktree-note.md: patch rejected" "plan: patch refusal"
assert_contains "$log" "REFUSED: exec_command: touch \"\$PACKET_WORKTREE/.plan-ignored.o\"" "plan: ignored file"
assert_contains "$log" "edit plan.md (add)" "plan: the product's edit"
assert_contains "$log" $'final:\n  planned' "plan: final message"
assert_eq "$before" "$(state)" "plan: the worktree (ignored files included)"
[ ! -e "$T/worktree-note.md" ] || fail "plan: wrote outside the packet"
raw=$pd/transcripts/0-plan.codex.jsonl
grep -q '"type":"thread.started"' "$raw" || fail "plan: no raw stream in the packet"
grep -q '"function_call"' "$pd/transcripts/0-plan.codex.session.jsonl" || fail "plan: no session file in the packet"
# Codex 0.171 sometimes leaves a call its sandbox refused out of the --json stream; the
# session file has every call, which is why the transcript is read from it.
assert_contains "$(cat "$pd/transcripts/0-plan.codex.session.jsonl")" "echo planned" "plan: the session file"

# --- what an agent command may not carry -----------------------------------------------------
for extra in --ephemeral "-c sandbox_mode=danger-full-access" --add-dir=/ --approve-for-me \
	"-c sandbox_workspace_write.writable_roots=[\"/\"]"; do
	run_role plan AGENT_CMD="$CODEX exec $extra"
	assert_eq 2 "$rc" "plan with \"$extra\": status ($log)"
	assert_contains "$log" "agent-stage.sh: agent command \"$CODEX exec $extra\": ${extra#-c }: " "plan with \"$extra\""
done

# --- review ----------------------------------------------------------------------------------
run_role review
assert_eq 0 "$rc" "review: status ($log)"
assert_contains "$log" "REFUSED: exec_command: printf 'reviewed\\n' >> \"\$PACKET_WORKTREE/README.md\": " "review: edit refused"
assert_contains "$log" "REFUSED: exec_command: git -C \"\$PACKET_WORKTREE\" commit" "review: commit refused"
assert_contains "$log" "\$ curl -sS -m 5 http://example.com/ -o /dev/null" "review: curl in the log"
assert_contains "$log" "REFUSED: exec_command: curl -sS -m 5 http://example.com/ -o /dev/null: curl: (7)" "review: curl refused"
assert_eq "$before" "$(state)" "review: the worktree"

# --- validate --------------------------------------------------------------------------------
run_role validate
assert_eq 1 "$rc" "validate: status ($log)"
assert_contains "$log" "REFUSED: exec_command: touch /tmp/x: " "validate: touch /tmp/x refused"
[ ! -e /tmp/x ] || [ /tmp/x -ot "$raw" ] || fail "validate: /tmp/x was made"
assert_contains "$log" "REFUSED: exec_command: sed -i 's/old/new/' \"\$PACKET_WORKTREE/hello.c\": " "validate: edit refused"
assert_contains "$log" "REFUSED: exec_command: cd \"\$PACKET_WORKTREE\" && make -B hello" "validate: make refused"
assert_contains "$log" "the agent ran commands this role may not run:" "validate: verdict"
assert_contains "$log" "cd \"\$PACKET_WORKTREE\" && make -q hello || true (exit 0): not \`packetfs record\`" \
	"validate: make -q found"
assert_eq "$before" "$(state)" "validate: the worktree"

# --- print that commits nothing --------------------------------------------------------------
run_role print
assert_eq 1 "$rc" "print: status ($log)"
assert_contains "$log" "exited 0 but left changes in the worktree that are not committed:" "print: verdict"
assert_contains "$log" " M hello.c" "print: what it left"
assert_contains "$log" "REFUSED: exec_command: printf 'x\\n' >> \"\$PACKET_WORKTREE/../repo/work/README.md\": " \
	"print: the main checkout refused"
assert_contains "$log" "REFUSED: exec_command: touch \"\$HOME/print-was-here\": " "print: \$HOME refused"
assert_eq "" "$(git -C "$REPO" status --porcelain)" "print: the main checkout"
[ ! -e "$HOME/print-was-here" ] || fail "print: wrote in \$HOME"
git -C "$wt" checkout -q -- hello.c

# --- babysit (the good scenario): fixes and commits ------------------------------------------
kill "${BG_PIDS[-1]}"
rm -f "$T/mock.port"
codex_real_setup "$AGENTS/scenarios/codex"
printf '# Round 1\n\n## Failing checks\n\n- build (FAILURE)\n' >"$pd/rounds/round-1.md"
head=$(git -C "$wt" rev-parse HEAD)
run_role babysit PACKET_ROUND=1 PACKET_STAGE=babysit
assert_eq 0 "$rc" "babysit: status ($log)"
assert_contains "$(git -C "$wt" log -1 --format=%s)" "babysit (codex): fix the failing check" "babysit: commit"
assert_eq "$head" "$(git -C "$wt" rev-parse HEAD~1)" "babysit: one commit"
assert_eq "[]" "$(cat "$pd/rounds/round-1-answers.json")" "babysit: answers"
assert_contains "$log" "\$ sed -i" "babysit: the call in the log"
assert_eq "" "$(git -C "$wt" status --porcelain)" "babysit: nothing left"

assert_eq "" "$(mock_outside)" "outside connection attempts"
exit 0
