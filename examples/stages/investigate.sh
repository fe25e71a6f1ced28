#!/usr/bin/env bash
# investigate.sh - the example stage of an investigation path (the debug-investigation
# template of examples/pipeline.json.in): its product is a report, not a change.
#
# Runs with cwd = the item directory on the mount, after the validate stage ran the plan's
# recipes on the item's head, which no print moved: the base, where the bug is. Reads brief.md,
# status and validation/evidence.md and writes report.md:
#
#   ## Hypotheses   the brief's lines under a "## Hypotheses" heading, else its request
#   ## What ran     the head and validation/evidence.md: every recipe the engine ran or
#                   recorded (packetfs record) there, with its status and log
#   ## Outcome      "reproduced" when a named recipe failed at the head, "not reproduced"
#                   when all validated, "inconclusive" otherwise; and what comes next
#
# The item ends here without a branch of its own; to print a fix, change the plan's
# "Template:" line and run plan again (packetfs sends it down that path).
# Backquotes in single-quoted strings are Markdown, not command substitution.
# shellcheck disable=SC2016
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -s brief.md ] || die "brief.md: missing or empty in $PWD"
# status_of KEY : the value of KEY in the item's status ("" when there is none).
status_of() {
	if [ -r status ]; then sed -n "s/^$1: //p" status | head -n 1; fi
}
# demoted FILE : FILE with its Markdown headings two levels down (they nest under ours).
demoted() { sed -E 's/^(#{1,4}) /\1## /' "$1"; }

title=$(sed -n 's/^#[[:space:]]\{1,\}//p' brief.md | head -n 1)
hypotheses=$(sed -n '/^## Hypotheses/,/^## /{/^## /d;p}' brief.md | sed '/^[[:space:]]*$/d')
if [ -z "$hypotheses" ]; then
	hypotheses="- $(grep -v -E '^(#|[A-Z][a-z]+( [a-z]+)?: )' brief.md | sed '/^[[:space:]]*$/d' |
		head -n 1)"
fi
evidence=$(status_of evidence)
total=${evidence#*/}
total=${total%% *}
valid=${evidence%%/*}
failing=0
[ -r validation/evidence.md ] && failing=$(grep -c '| failing |' validation/evidence.md || true)
if [ "${failing:-0}" -gt 0 ]; then
	outcome="reproduced: $failing of the named recipes fail at the head"
elif [ -n "$total" ] && [ "$total" != 0 ] && [ "$valid" = "$total" ]; then
	outcome="not reproduced: every named recipe validates at the head ($evidence)"
else
	outcome="inconclusive: the evidence is ${evidence:-missing}"
fi
{
	printf '# Investigation: %s\n\n' "${title:-${PACKET_ITEM:-?}}"
	printf 'Item `%s` on template `%s`' "${PACKET_ITEM:-?}" "${PACKET_TEMPLATE:-}"
	[ -z "${PACKET_ENGINE:-}" ] || printf ', engine `%s`' "$PACKET_ENGINE"
	printf '.\n\n## Hypotheses\n\n%s\n\n' "$hypotheses"
	printf '## What ran\n\nAt `%s`:\n\n' "$(status_of head)"
	if [ -s validation/evidence.md ]; then
		demoted validation/evidence.md
	else
		printf 'validation/evidence.md: none in the packet.\n'
	fi
	printf '\n## Outcome\n\n%s.\n\n' "$outcome"
	printf 'To print a fix: put `Template: change-build-deploy-measure` in plan.md\n'
	printf '(or the brief) and run plan again.\n'
} >report.md
say "wrote report.md: $outcome"
