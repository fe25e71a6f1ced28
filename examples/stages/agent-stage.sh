#!/usr/bin/env bash
# agent-stage.sh - run an AI agent command line as a packetfs stage.
#
# Usage in pipeline.json (one wrapper serves every stage; it reads
# PACKET_STAGE to know which one it is):
#
#   {"name": "plan",  "run": ["/abs/examples/stages/agent-stage.sh"], "produces": ["plan.md"]},
#   {"name": "print", "run": ["/abs/examples/stages/agent-stage.sh"], "produces": ["change.md"]},
#   {"name": "review","run": ["/abs/examples/stages/agent-stage.sh"], "produces": ["review.md"],
#    "on_needs_changes": "print"}
#
# The agent command comes from PACKET_AGENT_CMD in the daemon's environment
# (export it before `packetfs mount`), split on white space (no shell
# quoting), with the prompt appended as its last argument:
#
#   PACKET_AGENT_CMD="claude -p --permission-mode acceptEdits"
#   PACKET_AGENT_CMD="codex exec --full-auto"
#
# The agent runs with cwd = the item directory on the mount, so it reads
# and writes the packet's files (brief.md, plan.md, change.md, review.md)
# with its ordinary file tools, and the item's worktree is ./worktree.
# Its output goes to the stage log (stages/<n>-<stage>.log). packetfs
# checks afterwards that the stage's "produces" files exist and are not
# empty; this wrapper only builds the prompt and passes on the agent's
# exit status. When PACKET_AGENT_CMD is not set it fails (exit 2) and says
# so, rather than pretending the stage ran.
set -euo pipefail

die() {
	printf 'agent-stage.sh: %s\n' "$*" >&2
	exit 2
}

[ -n "${PACKET_AGENT_CMD:-}" ] ||
	die "PACKET_AGENT_CMD is not set: export the agent command (e.g. PACKET_AGENT_CMD=\"claude -p\") before 'packetfs mount'"
read -r -a agent <<<"$PACKET_AGENT_CMD"
command -v "${agent[0]}" >/dev/null 2>&1 ||
	die "${agent[0]}: command not found (PACKET_AGENT_CMD=\"$PACKET_AGENT_CMD\")"
stage=${PACKET_STAGE:-}
[ -n "$stage" ] || die "PACKET_STAGE is not set: run this program as a packetfs stage"
[ -s brief.md ] || die "brief.md: missing or empty in $PWD"

recipes=""
for r in ../.packetfs/recipes/*; do
	[ -e "$r" ] || continue
	r=${r##*/}
	recipes="$recipes${recipes:+ }${r%.*}"
done

context="You are the $stage stage of packetfs work item '${PACKET_ITEM:-?}' (iteration \
${PACKET_ITERATION:-1}). The current directory is the item's packet: brief.md is the \
request; plan.md, change.md, review.md and validation/evidence.md are the other stages' \
documents. The code is in ${PACKET_WORKTREE:-./worktree}, on branch ${PACKET_BRANCH:-?} \
from ${PACKET_BASE:-main}."

case $stage in
plan)
	task="Read brief.md and the code in the worktree. Write plan.md: a summary, the \
numbered steps of the change, and a fenced block opened by \`\`\`validation-recipes that \
names, one a line, the recipes that must validate the change, chosen from: ${recipes:-none}. \
Do not change any code."
	;;
print)
	task="Carry out plan.md in the worktree. Commit every change on the current branch \
with git (leave nothing uncommitted). Then write change.md: what changed and why, file by \
file."
	if [ -s review.md ]; then
		task="$task This is a later iteration: review.md holds the reviewer's problems \
with the previous change; address each of them."
	fi
	;;
review)
	task="Review the change: read change.diff, change.md, plan.md and \
validation/evidence.md. Write review.md with your findings; its last line must be exactly \
'## Assessment: sound' when the change does what the brief asks and the evidence shows every \
named recipe validated, else '## Assessment: needs_changes'. Do not change any code."
	;;
*)
	task="Do the work of the '$stage' stage for this item, as the packet's documents \
describe it, and write your results into the packet."
	;;
esac

printf 'agent-stage.sh: stage %s: running %s\n' "$stage" "$PACKET_AGENT_CMD"
exec "${agent[@]}" "$context

$task"
