#!/usr/bin/env bash
# One item through plan -> print -> validate -> review with examples/stages/agent-stage.sh as
# every stage's program, once with the claude stand-in and once with the codex stand-in (two
# stores over two repositories, side by side). The stages choose the agent through their "env" (AGENT_CMD; the
# validate stage also sets AGENT_ROLE). The stand-ins run the scripted calls of
# tests/fixtures/agents/calls/ under the permissions agent-stage.sh gives each role:
#   - the printer's commit is on the item branch; plan.md, change.md, change-validation.md and
#     review.md are the stand-ins';
#   - the validator's `packetfs record 01-build -- make -B hello` is an engine run recorded by
#     the validate stage, and the verdict and assessment hold at the head;
#   - each agent ran in the item's worktree (codex's planner, validator and reviewer: in the
#     packet), with the role agent-stage.sh gave it, and the
#     learnings written to MNT/learnings/ were in every prompt.
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/agents/lib.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-60}
copy_recipes
# Stage programs inherit the daemon's environment: the stand-ins' plumbing and the packetfs
# binary the validator records with.
export AGENT_STUB_SCRIPT_DIR=$AGENTS/calls AGENT_STUB_TMP_ROOTS= PACKETFS=$PFS

declare -A MNT REPOS
for cli in claude codex; do
	make_repo "$T/repo-$cli" # the item branches of both stores would clash in one repository
	agent_pipeline "$T/$cli.json" "$cli"
	agent_start "$cli" "$T/$cli.json" "LEARNING-$cli: keep the greeting short."
done

for cli in claude codex; do
	agent_use "$cli"
	log=$T/$cli.log
	assert_eq done "$(settled fix-1)" "$cli: state after review"
	check_status "$M" fix-1

	head=$(worktree_head fix-1)
	assert_eq "print (stand-in): the greeting says new" "$(git -C "$REPO" log -1 --format=%s packetfs/fix-1)" \
		"$cli: the commit on the item branch"
	assert_eq "$head" "$(git -C "$REPO" rev-parse packetfs/fix-1)" "$cli: the branch head"
	assert_contains "$(git -C "$REPO" show packetfs/fix-1:hello.c)" "hello, new world" "$cli: hello.c"
	assert_contains "$(cat "$d/plan.md")" "stand-in planner" "$cli: plan.md"
	assert_contains "$(cat "$d/change.md")" "stand-in printer" "$cli: change.md"
	assert_eq "## Verdict: pass" "$(last_line "$d/change-validation.md")" "$cli: change-validation.md"
	assert_contains "$(cat "$d/change-validation.md")" "stand-in validator" "$cli: change-validation.md"
	assert_eq "## Assessment: sound" "$(last_line "$d/review.md")" "$cli: review.md"
	assert_contains "$(cat "$d/review.md")" "stand-in reviewer" "$cli: review.md"
	assert_eq pass "$(status_field "$M" fix-1 verdict)" "$cli: verdict"
	assert_eq sound "$(status_field "$M" fix-1 assessment)" "$cli: assessment"
	assert_head "$head" "$(status_field "$M" fix-1 assessment_head)" "$cli: assessment_head"

	# The engine's catalog run of 01-build, then the validator's recorded run.
	reg check "$r" "$d" || fail "$cli: registry lines are incomplete or logs do not match"
	assert_eq 2 "$(reg count "$r" recipe=01-build source=engine status=validated)" "$cli: 01-build runs"
	python3 - "$r" "$head" <<'PY' || fail "$cli: no recorded run of the validate stage: $(cat "$r")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
rec = [o for o in lines if (o.get("recorded_by") or {}).get("stage") == "validate"]
assert len(rec) == 1, rec
o = rec[0]
assert o["command"] == "make -B hello", o["command"]
assert o["source"] == "engine" and o["status"] == "validated" and o["head"] == sys.argv[2], o
PY
	assert_contains "$(cat "$d"/stages/*-validate.log)" "record 01-build -- make -B hello" "$cli: validate log"

	# What the stand-ins were given.
	wt=$(cd "$STORE/worktrees/fix-1" && pwd -P)
	for role in plan print validate review; do
		rec=$(stub_starts "$log" role="$role")
		[ "$(printf '%s\n' "$rec" | grep -c .)" = 1 ] || fail "$cli: $role: logged runs: $rec"
		# codex's planner, validator and reviewer run in the packet, so that the worktree is
		# no writable root of their sandbox.
		want=$wt add="\"--add-dir\", \"$d\""
		case $cli:$role in
		codex:plan | codex:validate | codex:review) want=$(cd "$d" && pwd -P) add="\"--cd\", \"$d\"" ;;
		esac
		assert_eq "$want" "$(cd "$(stub_field "$rec" cwd)" && pwd -P)" "$cli: $role: cwd"
		prompt=$(stub_field "$rec" prompt)
		assert_contains "$prompt" 'Make the greeting say "new".' "$cli: $role: prompt"
		assert_contains "$prompt" "$d/" "$cli: $role: prompt"
		assert_contains "$prompt" "LEARNING-$cli: keep the greeting short." "$cli: $role: prompt"
		assert_contains "$(stub_field "$rec" argv)" "$add" "$cli: $role: argv"
	done
	assert_contains "$(stub_field "$(stub_starts "$log" role=print)" permissions)" \
		"$([ "$cli" = claude ] && echo '"mode": "acceptEdits"' || echo '"sandbox": "workspace-write"')" \
		"$cli: the printer's permissions"
done
exit 0
