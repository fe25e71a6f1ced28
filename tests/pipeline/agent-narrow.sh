#!/usr/bin/env bash
# A role given too few permissions fails its stage, and the stand-in's refusal is in the stage
# log (two stores over two repositories, side by side):
#   claude   the printer's AGENT_ALLOWED_BASH is "make" only: `git add && git commit` is refused
#            ("permission denied: Bash(git add hello.c)"), nothing is committed, print fails;
#   codex    the print stage runs with AGENT_ROLE=plan (the planner's sandbox: the packet is
#            the cwd, neither the worktree nor the repository's git dir is a writable root) and
#            a printer's calls: the edit and the commit are refused by the sandbox ("patch
#            rejected", "Read-only file system"), print fails.
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
		# The print stage plays the planner (AGENT_ROLE=plan) with a printer's calls on the
		# worktree, which its own calls directory gives as plan.calls; the plan stage keeps
		# the usual ones.
		cat >"$T/calls-codex/plan.calls" <<'CALLS'
write $PACKET_WORKTREE/hello.c <<EOF
int main(void) { return 0; }
EOF
bash git -C $PACKET_WORKTREE commit -q --allow-empty -m "print (stand-in): nothing"
write $PACKET_DIR/change.md <<EOF
hello.c: the greeting says "new" (stand-in printer).
EOF
CALLS
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
