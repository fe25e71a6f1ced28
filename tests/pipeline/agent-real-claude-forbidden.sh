#!/usr/bin/env bash
# test-timeout: 240
# What each role may not do, with the real, pinned Claude Code CLI (tests/agent-clis.sh)
# against the mock model server (tests/fixtures/agents/mock_anthropic.py), each case a script
# written here. examples/stages/agent-stage.sh runs directly, with the stage environment the
# test sets over plain directories (a git worktree, a packet, learnings):
#   plan      edits the worktree and commits: both refused (REFUSED lines name them); it
#             writes plan.md and passes; without plan.md it fails;
#   review    a commit and an edit of the worktree: refused and named; `git log
#             --output=hello.o` (an allowed command writing an ignored file in the worktree):
#             caught afterwards, the stage fails naming hello.o;
#   validate  make and touch (anything but `packetfs record`) and an edit of the worktree:
#             refused and named;
#   print     an edit left uncommitted; an untracked file; a commit refused (AGENT_ALLOWED_BASH
#             without git): each fails the stage, naming what was left; a write outside the
#             working directories is refused;
#   babysit   a thread accepted, or a failing check, with nothing committed fails; all
#             threads declined and no failing check, no commit passes;
# and no request for another host reached the proxy; with AGENT_OFFLINE=0 some do (so the
# count is not blind).
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
. "$FIXTURES/agents/real.sh"
real_claude
make_repo
wt=$T/wt
git -C "$REPO" worktree add -q -b packetfs/fix-1 "$wt"
m=$T/m
pd=$m/fix-1
mkdir -p "$pd/validation" "$m/.packetfs/recipes" "$m/learnings" "$T/sc"
printf '# Greeting\n\nMake the greeting say new.\n' >"$pd/brief.md"
printf '# Plan\n\n1. hello.c\n\n```validation-recipes\n01-build\n```\n' >"$pd/plan.md"
printf 'CHANGE\n' >"$pd/change.md"
printf 'diff\n' >"$pd/change.diff"
printf '#!/bin/sh\n# summary: builds it\nmake\n' >"$m/.packetfs/recipes/01-build.sh"
mock_start "$T/sc"
while IFS= read -r kv; do export "${kv?}"; done < <(claude_env)
export PACKET_ITEM=fix-1 PACKET_DIR=$pd PACKET_WORKTREE=$wt PACKET_ITERATION=1
export PACKET_BRANCH=packetfs/fix-1 PACKET_BASE=main PACKET_LEARNINGS=$m/learnings PACKETFS=$PFS
export AGENT_CMD=$CLAUDE
unset AGENT_CLI AGENT_ROLE AGENT_ALLOWED_BASH PACKET_ROUND AGENT_OFFLINE AGENT_NETWORK

# stage ROLE SCRIPT [VAR=VALUE...] : runs agent-stage.sh as stage ROLE with the mock playing
# SCRIPT (a JSON list of steps); output in $T/out, status in RC.
stage()
{
	local role=$1
	printf '%s\n' "$2" >"$T/sc/$role.json"
	shift 2
	RC=0
	(cd "$pd" && env "$@" PACKET_STAGE="$role" bash "$AGENT_STAGE") >"$T/out" 2>&1 || RC=$?
	OUT=$(cat "$T/out")
}
# clean : the worktree back at its branch head, with nothing untracked or ignored.
clean()
{
	git -C "$wt" reset -q --hard
	git -C "$wt" clean -q -fdx
}
head0=$(git -C "$wt" rev-parse HEAD)

# --- plan: edits and commits are refused -----------------------------------------------------
rm -f "$pd/plan.md"
stage plan '[{"write": "{wt}/hello.c", "content": "int main(void) { return 1; }\n"},
 {"bash": "git commit -q --allow-empty -m sneaky"},
 {"write": "{pd}/plan.md", "content": "# Plan\n\n1. hello.c\n"}, {"final": "planned"}]'
assert_eq 0 "$RC" "plan with refused calls: status ($OUT)"
assert_contains_each "$OUT" "plan log" "REFUSED: Write: $wt/hello.c: " \
	"REFUSED: Bash: git commit -q --allow-empty -m sneaky: " "refused 2 tool call(s)" "role plan: wrote plan.md"
assert_eq "$head0" "$(git -C "$wt" rev-parse HEAD)" "plan: the head"
assert_eq "" "$(git -C "$wt" status --porcelain)" "plan: the worktree"

rm -f "$pd/plan.md"
stage plan '[{"edit": "{wt}/hello.c", "old": "old", "new": "new"}, {"final": "gave up"}]'
assert_eq 1 "$RC" "plan without plan.md: status ($OUT)"
assert_contains_each "$OUT" "plan log" "REFUSED: Edit: $wt/hello.c: " "wrote no plan.md" \
	"the refusals above may be why"
printf '# Plan\n\n```validation-recipes\n01-build\n```\n' >"$pd/plan.md"

# --- review: an allowed command that writes an ignored file is caught afterwards -------------
stage review '[{"bash": "git commit -q --allow-empty -m sneaky"},
 {"write": "{wt}/hello.c", "content": "int main(void) { return 2; }\n"},
 {"bash": "git log -1 --output=hello.o"},
 {"write": "{pd}/review.md", "content": "1. fine\n\n## Assessment: sound\n"}, {"final": "reviewed"}]'
assert_contains_each "$OUT" "review log" "REFUSED: Bash: git commit -q --allow-empty -m sneaky: " \
	"REFUSED: Write: $wt/hello.c: "
assert_eq "$head0" "$(git -C "$wt" rev-parse HEAD)" "review: the head"
if [ -e "$wt/hello.o" ]; then
	assert_eq 1 "$RC" "review that wrote an ignored file: status ($OUT)"
	assert_contains_each "$OUT" "review log" "the worktree changed while the agent ran" "!! hello.o"
else
	assert_contains "$OUT" "REFUSED: Bash: git log -1 --output=hello.o" "review log"
	note "claude refused git log --output itself"
fi
clean

# --- validate: anything but packetfs record is refused ---------------------------------------
rm -f /tmp/packetfs-forbidden-$$
stage validate '[{"bash": "make -B hello"}, {"write": "{wt}/hello.c", "content": "int x;\n"}, {"bash": "touch /tmp/packetfs-forbidden-'$$'"},
 {"write": "{pd}/change-validation.md", "content": "| 01-build | blocked |\n\n## Verdict: blocked\n"},
 {"final": "blocked"}]'
assert_eq 0 "$RC" "validate: status ($OUT)"
assert_contains_each "$OUT" "validate log" "REFUSED: Bash: make -B hello: " \
	"REFUSED: Bash: touch /tmp/packetfs-forbidden-$$: " "REFUSED: Write: $wt/hello.c: " \
	"role validate: wrote change-validation.md"
assert_eq "" "$(git -C "$wt" status --porcelain)" "validate: the worktree"
[ ! -e "/tmp/packetfs-forbidden-$$" ] || fail "validate: touch ran"
[ ! -e "$wt/hello" ] || fail "validate: make ran"

# --- print: what it leaves, and a refused commit ---------------------------------------------
stage print '[{"read": "{wt}/hello.c"}, {"edit": "{wt}/hello.c", "old": "old", "new": "new"},
 {"write": "{pd}/change.md", "content": "changed\n"}, {"final": "done, not committed"}]'
assert_eq 1 "$RC" "print without commit: status ($OUT)"
assert_contains_each "$OUT" "print log" "edit $wt/hello.c" \
	"left changes in the worktree that are not committed:" " M hello.c" "made no commit on packetfs/fix-1"
clean

stage print '[{"read": "{wt}/hello.c"}, {"edit": "{wt}/hello.c", "old": "old", "new": "new"},
 {"write": "{wt}/notes.txt", "content": "scratch\n"},
 {"write": "/tmp/packetfs-outside-'$$'.txt", "content": "x\n"},
 {"bash": "git add hello.c && git commit -q -m new"},
 {"write": "{pd}/change.md", "content": "changed\n"}, {"final": "committed"}]'
assert_eq 1 "$RC" "print with an untracked file: status ($OUT)"
assert_contains_each "$OUT" "print log" "?? notes.txt" "REFUSED: Write: /tmp/packetfs-outside-$$.txt: "
assert_not_contains "$OUT" "made no commit" "print log"
[ ! -e "/tmp/packetfs-outside-$$.txt" ] || fail "print: a write outside the working directories"
clean
git -C "$wt" reset -q --hard "$head0"

stage print '[{"read": "{wt}/hello.c"}, {"edit": "{wt}/hello.c", "old": "old", "new": "new"},
 {"bash": "git add hello.c && git commit -q -m new"},
 {"write": "{pd}/change.md", "content": "changed\n"}, {"final": "done"}]' AGENT_ALLOWED_BASH=make
assert_eq 1 "$RC" "print with its commit refused: status ($OUT)"
assert_contains_each "$OUT" "print log" "REFUSED: Bash: git add hello.c && git commit -q -m new: " \
	"made no commit on packetfs/fix-1" " M hello.c"
assert_eq "$head0" "$(git -C "$wt" rev-parse HEAD)" "print: the head after a refused commit"
clean

# --- babysit: a thread accepted but nothing committed ---------------------------------------
mkdir -p "$pd/rounds"
printf '# Round 1\n\n### Thread 17: hello.c:5 (reviewer)\n\nSay "new".\n' >"$pd/rounds/round-1.md"
stage babysit '[{"write": "{pd}/rounds/round-{round}-answers.json",
 "content": "[{\"thread\": 17, \"verdict\": \"accepted\", \"action\": \"fixed\"}]\n"},
 {"final": "answered"}]' PACKET_ROUND=1
assert_eq 1 "$RC" "babysit that accepted a thread without a commit: status ($OUT)"
assert_contains "$OUT" "role babysit: claude exited 0 but made no commit on packetfs/fix-1" "babysit log"
stage babysit '[{"write": "{pd}/rounds/round-{round}-answers.json",
 "content": "[{\"thread\": 17, \"verdict\": \"declined\", \"action\": \"the brief says old\"}]\n"},
 {"final": "answered"}]' PACKET_ROUND=1
assert_eq 0 "$RC" "babysit that declined every thread: status ($OUT)"
printf '# Round 2\n\n## Failing checks\n\n- build (FAILURE): https://ci.example/build\n\n## Review threads\n\nNone.\n' \
	>"$pd/rounds/round-2.md"
stage babysit '[{"write": "{pd}/rounds/round-{round}-answers.json", "content": "[]\n"},
 {"final": "nothing to do"}]' PACKET_ROUND=2
assert_eq 1 "$RC" "babysit that left a failing check without a commit: status ($OUT)"
assert_contains "$OUT" "role babysit: claude exited 0 but made no commit" "babysit log"

mock_outside

# --- the offline switch off: the same CLI reaches for its service host (the proxy sees it) ----
printf '# Plan\n' >"$pd/plan.md"
stage plan '[{"write": "{pd}/plan.md", "content": "# Plan\n\n1. hello.c\n"}, {"final": "planned"}]' AGENT_OFFLINE=0
assert_eq 0 "$RC" "plan with AGENT_OFFLINE=0: status ($OUT)"
assert_contains "$OUT" "offline: 0" "plan log with AGENT_OFFLINE=0"
[ -n "$(mock_requests outside)" ] || fail "AGENT_OFFLINE=0: no outside request reached the proxy (the count proves nothing)"
exit 0
