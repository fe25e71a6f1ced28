#!/usr/bin/env bash
# A role given too few permissions fails its stage, and the stand-in's refusal is in the stage
# log (two stores over two repositories, side by side):
#   claude   the printer's AGENT_ALLOWED_BASH is "make" only: `git add && git commit` is refused
#            ("permission denied: Bash(git add hello.c)"), nothing is committed, print fails;
#   codex    the print stage runs with AGENT_ROLE=plan (the planner's sandbox, without the
#            repository's git dir as a writable root) and the printer's calls: the commit is
#            refused by the sandbox ("Read-only file system"), print fails.
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-60}
copy_recipes
export AGENT_STUB_SCRIPT_DIR=$AGENTS/calls AGENT_STUB_TMP_ROOTS= PACKETFS=$PFS
mkdir -p "$T/calls-codex"

declare -A MNT REPOS
for cli in claude codex; do
	make_repo "$T/repo-$cli"
	if [ "$cli" = claude ]; then
		agent_pipeline "$T/$cli.json" claude AGENT_ALLOWED_BASH=make
	else
		# The print stage plays the planner (AGENT_ROLE=plan) with the printer's calls, which
		# its own calls directory gives as plan.calls; the plan stage keeps the usual ones.
		cp "$AGENTS/calls/print.calls" "$T/calls-codex/plan.calls"
		pipeline_with "$T/$cli.json" \
			"$(agent_stage plan '"produces": ["plan.md"]' "AGENT_CMD=$AGENTS/codex")" \
			"$(agent_stage print '"produces": ["change.md"]' "AGENT_CMD=$AGENTS/codex" AGENT_ROLE=plan \
				"AGENT_STUB_SCRIPT_DIR=$T/calls-codex")"
	fi
	agent_start "$cli" "$T/$cli.json"
done

for cli in claude codex; do
	agent_use "$cli"
	assert_eq failed "$(settled fix-1)" "$cli: state"
	assert_eq print "$(status_field "$M" fix-1 stage)" "$cli: stage"
	assert_eq "$(git -C "$REPO" rev-parse main)" "$(git -C "$REPO" rev-parse packetfs/fix-1)" \
		"$cli: the item branch (nothing committed)"
	log=$(cat "$d"/stages/*-print.log)
	if [ "$cli" = claude ]; then
		assert_contains "$log" "claude: permission denied: Bash(git add hello.c)" "$cli: print log"
	else
		assert_contains "$log" "codex: ERROR: exec command rejected by the sandbox" "$cli: print log"
		assert_contains "$log" "Read-only file system" "$cli: print log"
	fi
	assert_contains "$log" "agent-stage.sh: role $([ "$cli" = claude ] && echo print || echo plan): $cli exited with status 1" \
		"$cli: print log"
done
exit 0
