#!/usr/bin/env bash
# A stage program runs with cwd = the item directory on the mount, stdin /dev/null, its output
# in stages/<n>-<stage>.log, and the PACKET_* environment of SPEC §5: the daemon's environment
# (less the variables packetfs sets), the stage's own "env" over it, then packetfs's variables.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(stage_run env.sh "$T/env.out"), \"produces\": [\"plan.md\"],
	  \"env\": {\"PACKET_AGENT_CMD\": \"codex exec --model o4\", \"PACKET_REPLACED\": \"by the stage\"}}"
make_store "$T/pipeline.json"
PACKET_FROM_DAEMON=kept PACKET_REPLACED=daemon PACKET_STAGE=bogus PACKET_ROUND=9 mount_store
new_item fix-1

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
[ -s "$T/env.out" ] || fail "the stage wrote no environment"
env_out=$(cat "$T/env.out")
val()
{
	printf '%s\n' "$env_out" | sed -n "s/^$1=//p"
}
assert_eq "$(cd "$M/fix-1" && pwd -P)" "$(val CWD)" "stage cwd"
assert_eq /dev/null "$(val STDIN)" "stage stdin"
assert_eq fix-1 "$(val PACKET_ITEM)" PACKET_ITEM
assert_eq "$M/fix-1" "$(val PACKET_DIR)" PACKET_DIR
assert_eq "$(readlink -f "$STORE/worktrees/fix-1")" "$(readlink -f "$(val PACKET_WORKTREE)")" \
	PACKET_WORKTREE
assert_eq plan "$(val PACKET_STAGE)" PACKET_STAGE
assert_eq 1 "$(val PACKET_ITERATION)" PACKET_ITERATION
assert_eq packetfs/fix-1 "$(val PACKET_BRANCH)" PACKET_BRANCH
assert_eq main "$(val PACKET_BASE)" PACKET_BASE
assert_eq "$M/learnings" "$(val PACKET_LEARNINGS)" PACKET_LEARNINGS
assert_eq "codex exec --model o4" "$(val PACKET_AGENT_CMD)" "the stage's env"
assert_eq "by the stage" "$(val PACKET_REPLACED)" "the stage's env over the daemon's"
assert_eq kept "$(val PACKET_FROM_DAEMON)" "the daemon's environment"
assert_eq "" "$(val PACKET_ROUND)" "PACKET_ROUND outside a rounds stage"

logs=$(ls "$M/fix-1/stages")
assert_eq 1 "$(printf '%s\n' "$logs" | grep -Ecx '[0-9]+-plan\.log')" "plan logs"
assert_contains "$(cat "$M"/fix-1/stages/*-plan.log)" "env stage output line" "stage log"
exit 0
