#!/usr/bin/env bash
# agent-stage.sh - runs Claude Code or Codex as a packetfs stage: plan, print, validate,
# review or babysit.
#
# What each CLI needs (its flags per role, its environment, how to read its machine-readable
# stream) lives in agent-<cli>.sh beside this script, which defines agent_cli_args,
# agent_cli_env, agent_cli_transcript and agent_cli_refusals (see agent-claude.sh). Tested
# with Claude Code 2.1.332 and Codex 0.171.0 (tests/agent-clis.sh); docs/agents.md says, per
# CLI and role, what is prevented and what is only detected afterwards.
#
# Environment (a stage's "env" object in pipeline.json, or the daemon's environment):
#   AGENT_CMD         the agent command line, split on white space (no shell quoting), with
#                     any flags of your own, e.g. "claude --model opus", "codex exec -m gpt-5".
#                     PACKET_AGENT_CMD is read when AGENT_CMD is unset. Permission flags
#                     (--permission-mode, --allowedTools, --sandbox, --full-auto, ...) are this
#                     script's business: a command line that carries one is refused.
#   AGENT_CLI         claude | codex; default: the name of AGENT_CMD's first word. With no
#                     AGENT_CMD the command is just AGENT_CLI.
#   AGENT_ROLE        plan | print | validate | review | babysit; default: PACKET_STAGE.
#   AGENT_ALLOWED_BASH  the commands a claude printer or babysitter may run: entries separated
#                     by commas (or, with no comma, by white space), each a command prefix
#                     ("git commit", "make") or a whole rule ("Bash(npm test:*)"). Default
#                     below (DEFAULT_BASH).
#   AGENT_OFFLINE     1 (default): the CLI calls nothing but its model endpoint (no
#                     telemetry, update checks, plugin syncs; the flags per CLI are in
#                     docs/agents.md); 0: the CLI's own defaults.
#   AGENT_NETWORK=1   the default of AGENT_OFFLINE becomes 0; codex printer/babysitter:
#                     network in the sandbox (-c sandbox_workspace_write.network_access=true).
#   AGENT_LEARNINGS_MAX  bytes of learnings put in the prompt whole (default 32768); the
#                     documents past it are listed by path.
#   PACKETFS          the packetfs binary the validator runs (default: packetfs on PATH).
#   and the engine's PACKET_ITEM PACKET_DIR PACKET_WORKTREE PACKET_STAGE PACKET_ITERATION
#   PACKET_BRANCH PACKET_BASE PACKET_LEARNINGS PACKET_ROUND.
#
# The agent runs with cwd = $PACKET_WORKTREE (a git worktree of the item branch); the packet
# ($PACKET_DIR) and the learnings ($PACKET_LEARNINGS) are added as writable directories (codex
# in the roles that may not change the worktree works from the packet instead, so that its
# sandbox keeps the worktree read-only: agent-codex.sh). The prompt goes on stdin (claude -p
# reads it there; codex exec reads it for the prompt "-").
#
# The CLI's standard output (its machine-readable stream) is kept in the packet as
# transcripts/<n>-<stage>.<cli>.jsonl, n the run number of the stage log
# stages/<n>-<stage>.log; the stage log gets the readable transcript (each tool call, its
# outcome, each refusal as "REFUSED: TOOL: WHAT: WHY", the final message) and the CLI's
# standard error.
#
# Checked afterwards (what the CLIs' confinement does not cover):
#   plan, review  the worktree's head and files, ignored files included, are as they were;
#   validate      the head and the tracked and untracked files (its recorded commands build
#                 in the worktree, which makes ignored outputs);
#   print         something was committed, and nothing is left uncommitted or untracked;
#   babysit       as print, but a round that lists no failing check and whose threads were
#                 all declined needs no commit;
#   every role    a refused write into the packet or the learnings fails the stage (the role
#                 needed it); other refusals are named in the log, and fail the stage when
#                 the role then lacks its product; where agent-<cli>.sh defines
#                 agent_cli_verify (codex), what the CLI ran that the role may not run.
#
# Exit status: the agent's; 1 when the agent exited 0 but its CLI reported a failed run
# (an API error), a check above failed, or it left its product (plan.md, change.md,
# change-validation.md, review.md, rounds/round-N-answers.json) missing or empty; 2 when
# misconfigured (messages read "agent-stage.sh: what: why").
set -euo pipefail

# shellcheck disable=SC2034 # read by agent-claude.sh
DEFAULT_BASH="git add,git commit,git status,git diff,git log,git show,git rm,git mv,git restore,make,meson,ninja,cmake,ctest,cc,gcc,clang,./configure,pytest,python3 -m pytest"

# shellcheck disable=SC2034 # read by die (lib.sh)
DIE_STATUS=2 # die: a misconfigured stage
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# --- the stage environment ------------------------------------------------------------------
for v in PACKET_DIR PACKET_WORKTREE PACKET_STAGE; do
	[ -n "${!v:-}" ] || die "$v is not set: run this program as a packetfs stage"
done
pd=$PACKET_DIR
wt=$PACKET_WORKTREE
[ -d "$pd" ] || die "PACKET_DIR: $pd is not a directory"
git -C "$wt" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	die "PACKET_WORKTREE: $wt is not a git worktree"
[ -s "$pd/brief.md" ] || die "brief.md: missing or empty in $pd"
learn=${PACKET_LEARNINGS:-}
if [ -z "$learn" ] && [ -d "$pd/../learnings" ]; then
	learn=$(cd "$pd/../learnings" && pwd)
fi
[ -z "$learn" ] || [ -d "$learn" ] || learn=""

role=${AGENT_ROLE:-$PACKET_STAGE}
case $role in
plan | print | validate | review | babysit) ;;
*) die "role '$role': unknown (set AGENT_ROLE to plan, print, validate, review or babysit)" ;;
esac
round=${PACKET_ROUND:-}
if [ "$role" = babysit ] && [ -z "$round" ]; then
	die "babysit: PACKET_ROUND is not set: the babysit role runs as a rounds stage"
fi

# --- the agent command line -----------------------------------------------------------------
cmdline=${AGENT_CMD:-${PACKET_AGENT_CMD:-${AGENT_CLI:-}}}
[ -n "$cmdline" ] || die "no agent: set AGENT_CLI (claude or codex) or AGENT_CMD in the stage's \"env\""
read -r -a agent <<<"$cmdline"
cli=${AGENT_CLI:-${agent[0]##*/}}
case $cli in
claude | codex) ;;
*) die "AGENT_CLI '$cli': unknown (claude or codex; for another program name set AGENT_CLI)" ;;
esac
command -v "${agent[0]}" >/dev/null 2>&1 || die "${agent[0]}: command not found (agent command \"$cmdline\")"
for w in "${agent[@]:1}"; do
	case $cli:$w in
	claude:--permission-mode* | claude:--allowedTools* | claude:--allowed-tools* | \
		claude:--dangerously-skip-permissions | claude:--output-format* | claude:--tools* | \
		claude:--permission-prompts* | claude:--add-dir* | claude:--setting-sources* | \
		claude:--settings* | claude:--permission-prompt-tool* | claude:--disallowedTools* | \
		claude:--disallowed-tools* | codex:--sandbox* | codex:-s | codex:--full-auto | \
		codex:--dangerously-bypass-approvals-and-sandbox | codex:--yolo | codex:--cd* | codex:-C)
		die "agent command \"$cmdline\": $w: permissions and the working directory are set per role by this script (so are the tools and the output format); remove it"
		;;
	codex:--approve-for-me | codex:--dangerously-bypass-hook-trust | codex:--add-dir* | codex:--worktree | \
		codex:--remote* | codex:--trust | codex:sandbox_mode=* | codex:--config=sandbox* | \
		codex:sandbox_workspace_write.* | codex:approval_policy=* | codex:--config=approval* | \
		codex:permissions.* | codex:default_permissions=* | codex:--config=*permissions*)
		die "agent command \"$cmdline\": $w: the sandbox and its writable roots are set per role by this script; remove it"
		;;
	codex:--ephemeral)
		die "agent command \"$cmdline\": $w: the session file is where the sandbox's refusals are read; remove it"
		;;
	esac
done

pfs=${PACKETFS:-packetfs}
export AGENT_ROLE=$role
# The offline switch: 1 keeps the CLI from calling anything but its model endpoint.
if [ -n "${AGENT_OFFLINE:-}" ]; then
	offline=$AGENT_OFFLINE
elif [ "${AGENT_NETWORK:-0}" = 1 ]; then
	offline=0
else
	offline=1
fi
case $offline in 0 | 1) ;; *) die "AGENT_OFFLINE '$offline': not 0 or 1" ;; esac

# --- the prompt -----------------------------------------------------------------------------
# doc FILE TITLE [CAP] : FILE (relative to the packet) under a heading, whole up to CAP bytes.
doc() {
	local f=$pd/$1 cap=${3:-32768} n
	[ -s "$f" ] || return 0
	n=$(wc -c <"$f")
	printf '\n## %s (%s)\n\n' "$2" "$f"
	head -c "$cap" "$f"
	[ "$n" -le "$cap" ] || printf '\n[... %s of %s bytes shown; read the whole file at %s]\n' "$cap" "$n" "$f"
	printf '\n'
}

recipes() {
	local r s
	for r in "$pd"/../.packetfs/recipes/*; do
		[ -f "$r" ] || continue
		s=$(head -n 30 "$r" | sed -n 's/.*# summary: *//p' | sed 's/ *-->.*//' | head -n 1)
		case $r in
		*.md) printf -- '- %s (procedure: no command of its own; record a run of it)%s\n' "$(basename "$r" .md)" "${s:+: $s}" ;;
		*) printf -- '- %s%s\n' "$(basename "${r%.*}")" "${s:+: $s}" ;;
		esac
	done
}

learnings() {
	local cap=${AGENT_LEARNINGS_MAX:-32768} used=0 f n listed=""
	printf '\n## Learnings\n\n'
	if [ -z "$learn" ]; then
		printf 'This mount has no learnings directory.\n'
		return 0
	fi
	printf 'Project-wide documents in %s: what earlier items taught. Follow them.\n' "$learn"
	printf 'When this item teaches something later items should know, add it as a new file\n'
	printf '%s/<topic>.md (one short document; do not rewrite the others).\n' "$learn"
	while IFS= read -r f; do
		n=$(wc -c <"$f")
		if [ $((used + n)) -le "$cap" ]; then
			printf '\n### %s\n\n' "$f"
			cat "$f"
			used=$((used + n))
		else
			listed+="- $f ($n bytes)"$'\n'
		fi
	done < <(find "$learn" -maxdepth 2 -type f -name '*.md' 2>/dev/null | LC_ALL=C sort)
	[ "$used" != 0 ] || [ -n "$listed" ] || printf '\n(none yet)\n'
	[ -z "$listed" ] || printf '\nMore learnings, too long to include here; read them:\n%s' "$listed"
}

named_recipes() {
	[ -s "$pd/plan.md" ] || return 0
	# shellcheck disable=SC2016 # backquotes, not an expansion
	sed -n '/^```validation-recipes/,/^```$/{/^```/d;p}' "$pd/plan.md" | sed 's/[[:space:]]//g;/^$/d'
}

writable="$pd${learn:+ and $learn}"
header="Role: $role
You are the $role agent of packetfs work item '${PACKET_ITEM:-?}' (iteration ${PACKET_ITERATION:-1}$([ -z "$round" ] || printf ', round %s' "$round")).
Your working directory, $wt, is a git worktree of branch ${PACKET_BRANCH:-?} (based on ${PACKET_BASE:-main}).
The item's packet is $pd: documents shared by every stage (brief.md is the request).
Nobody answers questions while you work: decide, do the work, and finish by writing the file named below."

case $role in
plan)
	task="## Your task

Read the request and the code. Write $pd/plan.md: a short summary of the change, its numbered
steps (files and functions), and a fenced block opened by \`\`\`validation-recipes and closed
by \`\`\` naming, one a line, the recipes (from the catalog below) that must validate the
change. If the request needs no change (already done, duplicate, not reproducible), write a
line 'Disposition: WORD' instead of the steps.

You may read anything. Write only in $writable. Do not edit, create or commit anything
in the worktree: the print stage does that."
	product=plan.md
	;;
print)
	task="## Your task

Carry out the plan in the worktree: edit the code, build it and run its tests, then commit
every change on the current branch with git (git add, git commit; leave nothing uncommitted
or untracked that is not ignored). Then write $pd/change.md: what changed and why, file by
file."
	if [ "${PACKET_ITERATION:-1}" -gt 1 ] && [ -s "$pd/review.md" ]; then
		task+="

This is iteration ${PACKET_ITERATION}: review.md below holds the reviewer's findings on the
previous change. Address each of them and say how in change.md."
	fi
	product=change.md
	;;
validate)
	names=$(named_recipes | tr '\n' ' ')
	task="## Your task

The engine has run the plan's script recipes; validation/evidence.md below shows their
results. Validate the change at the worktree's head, $(git -C "$wt" rev-parse HEAD):
for each recipe the plan names (${names:-none}) that is a procedure, or whose latest engine
run is not validated and needs a command of your choosing, have the engine run a command
that proves it, from the worktree:

    $pfs record RECIPE -- COMMAND [ARG...]

(packetfs runs COMMAND in the worktree, records it in $pd/validation/registry.jsonl and
prints its output; its exit status is COMMAND's). That is the only command you may run. Do
not change the worktree: evidence counts only for its committed head.

Then write $pd/change-validation.md: a table of every named recipe with the status, command
and log (validation/logs/...) of its latest engine run (read $pd/validation/registry.jsonl),
and as its last line exactly one of
    ## Verdict: pass        every named recipe validated
    ## Verdict: fail        one failed or timed out
    ## Verdict: blocked     otherwise"
	product=change-validation.md
	;;
review)
	task="## Your task

Review the change: $pd/change.diff (the diff of the branch against its base), change.md,
the plan and the evidence below. Write $pd/review.md with your findings, numbered, each
naming file and line; its last line must be exactly
    ## Assessment: sound            the change does what the brief asks and every named recipe validated
    ## Assessment: needs_changes    otherwise (the print stage gets your findings)

You may read anything. Write only in $writable. Do not edit, create or commit anything
in the worktree."
	product=review.md
	;;
babysit)
	task="## Your task

The item's branch is published. $pd/rounds/round-$round.md (below) lists the failing CI
checks and the unanswered review threads, each with its id. Fix what should be fixed in the
worktree (build, test, git add, git commit; leave nothing uncommitted), then write
$pd/rounds/round-$round-answers.json: a JSON array with one object per review thread,
    {\"thread\": ID, \"verdict\": \"accepted\" | \"declined\", \"action\": \"what you did, or why not\"}
where ID is the thread's id as the round file gives it. Write [] when there is no thread."
	product=rounds/round-$round-answers.json
	;;
esac

prompt_file=$(mktemp "${TMPDIR:-/tmp}/agent-prompt.XXXXXX")
trap 'rm -f "$prompt_file"' EXIT
{
	printf '%s\n\n%s\n' "$header" "$task"
	doc brief.md "The request: brief.md"
	case $role in
	print | validate | review | babysit) doc plan.md "The plan: plan.md" ;;
	esac
	case $role in
	print) [ "${PACKET_ITERATION:-1}" -le 1 ] || doc review.md "The previous review: review.md" ;;
	review | babysit) doc change.md "The change: change.md" ;;
	esac
	case $role in
	validate | review) doc validation/evidence.md "The evidence: validation/evidence.md" ;;
	esac
	[ "$role" = review ] && doc change-validation.md "The validator's report: change-validation.md"
	[ "$role" = babysit ] && doc "rounds/round-$round.md" "This round: rounds/round-$round.md"
	printf '\n## The recipe catalog (%s)\n\n' "$(cd "$pd/../.packetfs/recipes" 2>/dev/null && pwd || echo none)"
	recipes
	learnings
} >"$prompt_file"

# --- the command line -----------------------------------------------------------------------
dirs=("$pd")
[ -z "$learn" ] || dirs+=("$learn")
# shellcheck disable=SC2034 # read by agent_cli_args
gitdir=$(git -C "$wt" rev-parse --path-format=absolute --git-common-dir)
args=("${agent[@]}")
here=$(dirname "${BASH_SOURCE[0]}")

case $cli in
claude)
	# shellcheck source=agent-claude.sh
	. "$here/agent-claude.sh"
	;;
codex)
	# shellcheck source=agent-codex.sh
	. "$here/agent-codex.sh"
	;;
esac
agent_cli_args
# The CLI's own environment (NAME=VALUE lines), for its process alone.
mapfile -t cli_env < <(agent_cli_env | grep -E '^[A-Za-z_][A-Za-z0-9_]*=' || true)

# --- where the raw stream goes --------------------------------------------------------------
# The raw machine-readable stream is kept in the packet as transcripts/<n>-<stage>.<cli>.jsonl,
# beside the stage log stages/<n>-<stage>.log whose run number n it shares (the engine opens
# the log before the stage starts). It is written to a scratch file while the agent runs and
# copied into the packet once, at the end.
n=$(find "$pd/stages" -maxdepth 1 -name "*-$PACKET_STAGE.log" 2>/dev/null |
	sed 's|.*/||;s|-.*||' | grep -E '^[0-9]+$' | sort -n | tail -n 1 || true)
raw_name=transcripts/${n:-0}-$PACKET_STAGE.$cli.jsonl
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agent-stage.XXXXXX")
trap 'rm -f "$prompt_file"; rm -rf "$scratch"' EXIT
raw=$scratch/raw.jsonl

# --- run it ---------------------------------------------------------------------------------
# state [--ignored] : the worktree's head and the porcelain status of every file in it
# (ignored ones too with --ignored), which the roles that may not change it compare.
state() {
	git -C "$wt" rev-parse HEAD
	git -C "$wt" status --porcelain --untracked-files=all "$@"
}
# Ignored files count for plan and review; the validator's recorded commands build in the
# worktree, which makes ignored outputs.
ign=()
case $role in plan | review) ign=(--ignored) ;; esac
before=$(state "${ign[@]}")
head_before=$(git -C "$wt" rev-parse HEAD)
say "role $role: $cli in $wt (prompt: $(wc -c <"$prompt_file") bytes; offline: $offline)"
say "\$ ${args[*]} < prompt"
say "raw stream: $pd/$raw_name"
rc=0
if [ "${agent_cli_live:-1}" = 1 ]; then
	set +e
	# The transcript is written as the stream grows; should its reader stop early, cat drains
	# the rest so that the CLI never writes into a closed pipe.
	(cd "$wt" && exec env "${cli_env[@]}" "${args[@]}" <"$prompt_file") | tee "$raw" | {
		agent_cli_transcript /dev/stdin
		cat >/dev/null
	}
	st=("${PIPESTATUS[@]}")
	set -e
	rc=${st[0]}
else
	# A CLI whose whole record is read after the run (codex: its session file).
	(cd "$wt" && exec env "${cli_env[@]}" "${args[@]}" <"$prompt_file" >"$raw") || rc=$?
	agent_cli_transcript "$raw"
fi
! declare -F agent_cli_cleanup >/dev/null || agent_cli_cleanup
mkdir -p "$pd/transcripts"
cp "$raw" "$pd/$raw_name" || say "role $role: could not keep the raw stream as $pd/$raw_name" >&2
# A CLI's own record of the session, where its reader copied one beside the raw stream.
if [ -f "${raw%.jsonl}.session.jsonl" ]; then
	cp "${raw%.jsonl}.session.jsonl" "$pd/${raw_name%.jsonl}.session.jsonl" ||
		say "role $role: could not keep the session file in $pd/transcripts" >&2
fi

mapfile -t refused < <(agent_cli_refusals "$raw")
if [ "${#refused[@]}" -gt 0 ]; then
	say "role $role: $cli refused ${#refused[@]} tool call(s):"
	for r in "${refused[@]}"; do
		IFS=$'\t' read -r r_tool r_what r_why <<<"$r"
		say "  REFUSED: $r_tool: $r_what: $r_why"
	done
fi
if [ "$rc" != 0 ]; then
	say "role $role: $cli exited with status $rc"
	exit "$rc"
fi
if declare -F agent_cli_failed >/dev/null && why=$(agent_cli_failed "$raw"); then
	say "role $role: $cli exited 0 but reports a failed run: $why" >&2
	exit 1
fi
# What the CLI's confinement cannot prevent for this role, found in its record afterwards.
if declare -F agent_cli_verify >/dev/null; then
	broke=$(agent_cli_verify "$raw")
	if [ -n "$broke" ]; then
		say "role $role: the agent ran commands this role may not run:" >&2
		printf '%s\n' "$broke" | sed 's/^/  /' >&2
		exit 1
	fi
fi

fail=0
# A refused write into the packet or the learnings (the role's own product area) is a
# refusal of what the product needed.
for r in "${refused[@]}"; do
	IFS=$'\t' read -r r_tool r_what r_why <<<"$r"
	case $r_tool in Bash) continue ;; esac
	for d in "${dirs[@]}"; do
		case $r_what in "$d"/*)
			say "role $role: $cli was refused $r_tool of $r_what, in the packet: the role needed it" >&2
			fail=1
			;;
		esac
	done
done

case $role in
plan | review | validate)
	after=$(state "${ign[@]}")
	if [ "$after" != "$before" ]; then
		say "role $role: the worktree changed while the agent ran, which this role may not do:" >&2
		diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed -n 's/^[<>] /  /p' >&2 || true
		fail=1
	fi
	;;
print | babysit)
	left=$(git -C "$wt" status --porcelain --untracked-files=all)
	if [ -n "$left" ]; then
		say "role $role: $cli exited 0 but left changes in the worktree that are not committed:" >&2
		printf '%s\n' "$left" | sed 's/^/  /' >&2
		fail=1
	fi
	need_commit=1
	if [ "$role" = babysit ]; then
		# A round with no failing check whose threads were all declined may need no commit.
		failing=$(sed -n '/^## Failing checks$/,/^## /{/^- /p}' "$pd/rounds/round-$round.md" 2>/dev/null || true)
		if [ -z "$failing" ] &&
			! grep -q '"verdict"[[:space:]]*:[[:space:]]*"accepted"' "$pd/$product" 2>/dev/null; then
			need_commit=0
		fi
	fi
	if [ "$need_commit" = 1 ] && [ "$(git -C "$wt" rev-parse HEAD)" = "$head_before" ]; then
		say "role $role: $cli exited 0 but made no commit on ${PACKET_BRANCH:-the item branch} (head still $head_before)" >&2
		fail=1
	fi
	;;
esac
if [ ! -s "$pd/$product" ]; then
	say "role $role: $cli exited 0 but wrote no $product in $pd" >&2
	fail=1
fi
if [ "$fail" = 1 ]; then
	[ "${#refused[@]}" = 0 ] || say "role $role: the refusals above may be why" >&2
	exit 1
fi
say "role $role: wrote $product"
