# shellcheck shell=bash
# recipes/lib/merge-base.sh - the item's merge base, for recipes that judge
# the change (03-lint, 04-diff-integrity); sourced, never run as a recipe.
#
# Needs say/fail/blocked from the recipe. Sets base (PACKET_BASE, default
# main), baserev (the commit it names, as a local branch, origin's branch or
# any revision) and mb (merge-base of baserev and HEAD). Blocked when the
# base names no commit; failing when HEAD shares no history with it.

base=${PACKET_BASE:-main}
baserev=""
for ref in "refs/heads/$base" "refs/remotes/origin/$base" "$base"; do
	if baserev=$(git rev-parse -q --verify "$ref^{commit}" 2>/dev/null); then
		break
	fi
	baserev=""
done
[ -n "$baserev" ] || blocked "base '$base' does not name a commit in this repository"
# shellcheck disable=SC2034 # used by the recipe that sources this
mb=$(git merge-base "$baserev" HEAD) || fail "HEAD shares no history with base '$base'"
