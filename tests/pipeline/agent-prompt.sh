#!/usr/bin/env bash
# examples/stages/agent-stage.sh run directly (the stage environment set by the test, plain
# directories for the packet, the catalog and the learnings), with each stand-in CLI in each
# role:
#   - the agent runs in the worktree; the packet and the learnings are --add-dir directories;
#     codex's planner, validator and reviewer run in the packet instead (--skip-git-repo-check,
#     /tmp excluded), its printer and babysitter get the git common dir and the worktree's own
#     git dir as well, every codex run has --json (its stream in the packet's transcripts/, its
#     transcript in the output) and the offline flags; claude's permission
#     mode and rules are the role's (AGENT_ALLOWED_BASH replaces the printer's commands);
#   - the prompt carries the role line, the brief, the plan, the previous review (print,
#     iteration 2), the evidence, the round (babysit), the catalog's summaries and the text of
#     every learning;
#   - the agent's status is the stage's; a planner that changes the worktree, a printer (claude
#     or codex) that makes no commit, or an agent that writes no product, fails the stage;
#     misconfiguration exits 2 with "agent-stage.sh: ".
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
make_repo
wt=$T/wt
git -C "$REPO" worktree add -q -b packetfs/fix-1 "$wt"
common=$(git -C "$wt" rev-parse --path-format=absolute --git-common-dir)
m=$T/m
pd=$m/fix-1
mkdir -p "$pd/validation" "$pd/rounds" "$m/.packetfs/recipes" "$m/learnings" "$T/calls"
printf '# Greeting\n\nBRIEF-TEXT: make the greeting say new.\n' >"$pd/brief.md"
printf '# Plan\n\nPLAN-TEXT\n\n```validation-recipes\n01-build\n```\n' >"$pd/plan.md"
printf 'REVIEW-TEXT: say why\n\n## Assessment: needs_changes\n' >"$pd/review.md"
printf 'CHANGE-TEXT\n' >"$pd/change.md"
printf '# Evidence [1/1 validated]\nEVIDENCE-TEXT\n' >"$pd/validation/evidence.md"
printf '# Round 2\n\nROUND-TEXT: thread 17 asks for a test\n' >"$pd/rounds/round-2.md"
printf '#!/bin/sh\n# summary: SUMMARY-BUILD builds it\nmake\n' >"$m/.packetfs/recipes/01-build.sh"
printf '<!-- # summary: SUMMARY-PROC the change reads well -->\nProse.\n' >"$m/.packetfs/recipes/06-review.md"
printf 'LEARNING-TEXT: tabs, not spaces.\n' >"$m/learnings/style.md"

export AGENT_STUB_SCRIPT_DIR=$T/calls AGENT_STUB_LOG=$T/stub.log AGENT_STUB_TMP_ROOTS=
export PACKET_ITEM=fix-1 PACKET_DIR=$pd PACKET_WORKTREE=$wt PACKET_ITERATION=1
export PACKET_BRANCH=packetfs/fix-1 PACKET_BASE=main PACKET_LEARNINGS=$m/learnings PACKETFS=$PFS
unset AGENT_CMD PACKET_AGENT_CMD AGENT_CLI AGENT_ROLE AGENT_ALLOWED_BASH PACKET_ROUND
# Each role's product keeps the marker text later roles look for in their prompts.
for pair in plan:plan.md:PLAN print:change.md:CHANGE validate:change-validation.md:VALIDATION review:review.md:REVIEW; do
	IFS=: read -r role file mark <<<"$pair"
	printf 'write $PACKET_DIR/%s <<X\n%s-TEXT by the stand-in\nX\n' "$file" "$mark" >"$T/calls/$role.calls"
done
# The printer commits (agent-stage.sh fails a printer that made no commit).
printf 'bash git commit -q --allow-empty -m "print (stand-in)"\n' >>"$T/calls/print.calls"
printf 'write $PACKET_DIR/rounds/round-$PACKET_ROUND-answers.json <<X\n[{"thread": 17, "verdict": "declined", "action": "none (stand-in)"}]\nX\n' \
	>"$T/calls/babysit.calls"

# stage ROLE [-u VAR...] [VAR=VALUE...] : runs agent-stage.sh as stage ROLE from the packet directory, with
# the extra environment; output in $T/out, status in RC, the stand-in's log record in REC.
stage()
{
	local role=$1
	shift
	RC=0
	(cd "$pd" && env "$@" PACKET_STAGE="$role" bash "$AGENT_STAGE") >"$T/out" 2>&1 || RC=$?
	REC=$(stub_starts "$T/stub.log" | tail -n 1)
}

for cli in claude codex; do
	for role in plan print validate review babysit; do
		extra=()
		[ "$role" != babysit ] || extra=(PACKET_ROUND=2)
		[ "$role" != print ] || extra=(PACKET_ITERATION=2)
		: >"$T/stub.log"
		stage "$role" "AGENT_CMD=$AGENTS/$cli" "${extra[@]}"
		[ "$RC" = 0 ] || fail "$cli as $role: status $RC: $(cat "$T/out")"
		[ -n "$REC" ] || fail "$cli as $role: the stand-in did not run: $(cat "$T/out")"
		what="$cli as $role"
		# codex's planner, validator and reviewer run in the packet (no writable worktree).
		case $cli:$role in
		codex:plan | codex:validate | codex:review) assert_eq "$pd" "$(stub_field "$REC" cwd)" "$what: cwd" ;;
		*) assert_eq "$wt" "$(stub_field "$REC" cwd)" "$what: cwd" ;;
		esac
		assert_eq "$role" "$(stub_field "$REC" role)" "$what: role"
		prompt=$(stub_field "$REC" prompt)
		argv=$(stub_field "$REC" argv)
		assert_eq "Role: $role" "$(printf '%s\n' "$prompt" | head -n 1)" "$what: first prompt line"
		assert_contains_each "$prompt" "$what: prompt" BRIEF-TEXT LEARNING-TEXT "$m/learnings/style.md" \
			"- 01-build: SUMMARY-BUILD builds it" \
			"- 06-review (procedure: no command of its own; record a run of it): SUMMARY-PROC the change reads well"
		case $role in
		plan) assert_not_contains "$prompt" PLAN-TEXT "$what: prompt" ;;
		*) assert_contains "$prompt" PLAN-TEXT "$what: prompt" ;;
		esac
		case $role in
		validate | review) assert_contains "$prompt" EVIDENCE-TEXT "$what: prompt" ;;
		*) assert_not_contains "$prompt" EVIDENCE-TEXT "$what: prompt" ;;
		esac
		case $role in
		print) assert_contains "$prompt" REVIEW-TEXT "$what: prompt (iteration 2)" ;;
		babysit) assert_contains "$prompt" ROUND-TEXT "$what: prompt" ;;
		esac
		case $role in
		plan) product=$pd/plan.md ;; print) product=$pd/change.md ;;
		validate) product=$pd/change-validation.md ;; review) product=$pd/review.md ;;
		babysit) product=$pd/rounds/round-2-answers.json ;;
		esac
		assert_contains "$prompt" "$product" "$what: prompt names the product"
		assert_contains "$(cat "$product")" "stand-in" "$what: product"
		assert_contains "$argv" "\"--add-dir\", \"$m/learnings\"" "$what: argv"
		if [ "$cli" = codex ]; then
			assert_contains "$argv" "\"exec\", \"--json\", \"--sandbox\", \"workspace-write\"" "$what: argv"
			assert_eq '"-"' "$(stub_field "$REC" argv | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[-1]))')" \
				"$what: the prompt comes from stdin"
			assert_contains "$argv" '"--disable", "plugins", "-c", "analytics.enabled=false"' "$what: argv (offline)"
			case $role in
			print | babysit)
				assert_contains "$argv" "\"--cd\", \"$wt\"" "$what: argv"
				assert_contains "$argv" "\"--add-dir\", \"$pd\"" "$what: argv"
				assert_contains "$argv" "\"--add-dir\", \"$common\"" "$what: argv"
				assert_contains "$argv" "\"--add-dir\", \"$(git -C "$wt" rev-parse --absolute-git-dir)\"" "$what: argv"
				assert_not_contains "$argv" "--skip-git-repo-check" "$what: argv"
				;;
			*)
				assert_contains "$argv" "\"--cd\", \"$pd\", \"--skip-git-repo-check\"" "$what: argv"
				assert_contains "$argv" '"sandbox_workspace_write.exclude_slash_tmp=true"' "$what: argv"
				assert_not_contains "$argv" "\"$common\"" "$what: argv"
				assert_not_contains "$argv" "\"$wt\"" "$what: argv"
				;;
			esac
			compgen -G "$pd/transcripts/*-$role.codex.jsonl" >/dev/null || fail "$what: no raw stream in the packet"
			assert_contains "$(cat "$T/out")" "final:" "$what: the transcript in the log"
		else
			assert_contains "$argv" "\"--add-dir\", \"$pd\"" "$what: argv"
			assert_contains "$argv" '"-p"' "$what: argv"
			assert_not_contains "$argv" "\"$common\"" "$what: argv"
			case $role in
			print | babysit)
				assert_contains "$argv" '"--permission-mode", "acceptEdits"' "$what: argv"
				for r in "Bash(git add:*)" "Bash(git commit:*)" "Bash(make:*)"; do
					assert_contains "$argv" "\"$r\"" "$what: argv"
				done
				;;
			*)
				assert_contains "$argv" '"--permission-mode", "dontAsk"' "$what: argv"
				assert_contains "$argv" "\"Edit(/$pd/**)\"" "$what: argv"
				assert_not_contains "$argv" "git commit" "$what: argv"
				assert_not_contains "$argv" "Bash(make" "$what: argv"
				;;
			esac
			case $role in
			validate)
				assert_contains "$argv" "\"Bash($PFS record:*)\"" "$what: argv"
				assert_not_contains "$argv" "Bash(git" "$what: argv"
				;;
			plan | review) assert_contains "$argv" '"Bash(git log:*)"' "$what: argv" ;;
			esac
		fi
	done
done

# AGENT_ALLOWED_BASH replaces the printer's commands: comma separated, or white space separated.
stage print AGENT_CLI=claude "AGENT_CMD=$AGENTS/claude --model opus" "AGENT_ALLOWED_BASH=make check, npm test,Bash(ls)"
# (git commit is then not among them: the stand-in's commit is refused and the stage fails.)
assert_eq 1 "$RC" "claude printer with AGENT_ALLOWED_BASH: status"
assert_contains "$(cat "$T/out")" 'permission denied: Bash(git commit' "claude printer with AGENT_ALLOWED_BASH"
argv=$(stub_field "$REC" argv)
assert_contains "$argv" '"--model", "opus", "-p"' "argv with the user's flags"
for r in "Bash(make check:*)" "Bash(npm test:*)" "Bash(ls)"; do
	assert_contains "$argv" "\"$r\"" "argv with AGENT_ALLOWED_BASH"
done
assert_not_contains "$argv" "git commit" "argv with AGENT_ALLOWED_BASH"
stage print "AGENT_CMD=$AGENTS/claude" "AGENT_ALLOWED_BASH=make ninja"
assert_contains "$(stub_field "$REC" argv)" '"Bash(make:*)", "Bash(ninja:*)"' "argv with AGENT_ALLOWED_BASH of words"

# Without PACKET_LEARNINGS the learnings next to the item are found.
stage review -u PACKET_LEARNINGS "AGENT_CMD=$AGENTS/codex"
[ "$RC" = 0 ] || fail "review without PACKET_LEARNINGS: $(cat "$T/out")"
assert_contains "$(stub_field "$REC" prompt)" LEARNING-TEXT "prompt without PACKET_LEARNINGS"

# The agent's status is the stage's.
printf 'exit 3\n' >"$T/calls/review.calls"
stage review "AGENT_CMD=$AGENTS/claude"
assert_eq 3 "$RC" "status of a failing agent"
assert_contains "$(cat "$T/out")" "agent-stage.sh: role review: claude exited with status 3" "output"

# An agent that writes no product fails the stage.
rm -f "$pd/review.md"
printf 'bash git log -1\n' >"$T/calls/review.calls"
stage review "AGENT_CMD=$AGENTS/claude"
assert_eq 1 "$RC" "status when the product is missing"
assert_contains "$(cat "$T/out")" "claude exited 0 but wrote no review.md" "output"

# A codex printer that exits 0 without a commit fails the stage.
cp "$T/calls/print.calls" "$T/print.calls.saved"
sed -i '/git commit/d' "$T/calls/print.calls"
stage print "AGENT_CMD=$AGENTS/codex"
assert_eq 1 "$RC" "status of a codex printer without a commit"
assert_contains "$(cat "$T/out")" "agent-stage.sh: role print: codex exited 0 but made no commit" "output"
mv "$T/print.calls.saved" "$T/calls/print.calls"

# A planner that changes the worktree fails the stage (the rule is checked afterwards too:
# here by a write the stand-in cannot see as one).
printf 'bash python3 -c "open(\x27$PACKET_WORKTREE/hello.c\x27, \x27w\x27).write(\x27int main(void) { return 1; }\\\\n\x27)"\nwrite $PACKET_DIR/plan.md <<X\nplan\nX\n' >"$T/calls/plan.calls"
stage plan "AGENT_CMD=$AGENTS/codex"
assert_eq 1 "$RC" "status of a planner that edited the code"
assert_contains "$(cat "$T/out")" "the worktree changed while the agent ran" "output"
assert_contains "$(cat "$T/out")" " M hello.c" "output"
git -C "$wt" checkout -q hello.c

# Misconfiguration: exit 2, "agent-stage.sh: what: why".
misconfigured()
{
	local why=$1
	shift
	stage "$@"
	assert_eq 2 "$RC" "status ($why)"
	assert_contains "$(cat "$T/out")" "agent-stage.sh: " "output ($why)"
	assert_contains "$(cat "$T/out")" "$why" "output"
}
misconfigured "no agent: set AGENT_CLI" plan
misconfigured "AGENT_CLI 'gemini': unknown" plan AGENT_CLI=gemini
misconfigured "/nonexistent/claude: command not found" plan AGENT_CMD=/nonexistent/claude
misconfigured "role 'deploy': unknown" deploy "AGENT_CMD=$AGENTS/claude"
misconfigured "--permission-mode: permissions and the working directory are set per role" plan \
	"AGENT_CMD=$AGENTS/claude -p --permission-mode acceptEdits"
misconfigured "--output-format: permissions and the working directory are set per role" plan \
	"AGENT_CMD=$AGENTS/claude --output-format text"
misconfigured "--full-auto: permissions" plan "AGENT_CMD=$AGENTS/codex exec --full-auto"
misconfigured "--add-dir: permissions and the working directory are set per role" plan \
	"AGENT_CMD=$AGENTS/claude --add-dir /"
misconfigured "--settings: permissions and the working directory are set per role" plan \
	"AGENT_CMD=$AGENTS/claude --settings /tmp/s.json"
misconfigured "babysit: PACKET_ROUND is not set" babysit "AGENT_CMD=$AGENTS/codex"
misconfigured "PACKET_WORKTREE is not set: run this program as a packetfs stage" plan \
	-u PACKET_WORKTREE "AGENT_CMD=$AGENTS/codex"
exit 0
