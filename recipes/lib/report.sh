# shellcheck shell=bash
# recipes/lib/report.sh - what the shipped script recipes print; sourced, never run as a
# recipe (the catalog lists only NN-name files).
#
# Before sourcing, the recipe sets RECIPE (its name, for messages). Defines:
#   say ARG...      prints the ARGs as one line on stdout (the recipe's log)
#   run CMD...      says "$ CMD", then runs CMD; returns CMD's status
#   fail WHY...     says "RECIPE: FAILING: WHY" and exits 1
#   blocked WHY...  says "RECIPE: BLOCKED: WHY" and exits 77

say() { printf '%s\n' "$*"; }
fail() { say "$RECIPE: FAILING: $*"; exit 1; }
blocked() { say "$RECIPE: BLOCKED: $*"; exit 77; }
run() {
	say "\$ $*"
	"$@"
}
