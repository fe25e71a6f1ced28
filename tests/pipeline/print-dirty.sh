#!/usr/bin/env bash
# Uncommitted changes a print stage leaves in the worktree are reported in last_error, never
# committed silently.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 02-lint)" "$(print_stage dirty)"

ctl "$M" fix-1 advance
settled()
{
	case "$(status_field "$M" fix-1 state)" in
	done | failed | blocked | waiting) return 0 ;;
	esac
	return 1
}
wait_for settled
last_error=$(status_field "$M" fix-1 last_error)
[ -n "$last_error" ] || fail "uncommitted changes were not reported: $(cat "$d/status")"
wt=$STORE/worktrees/fix-1
git -C "$wt" diff --quiet HEAD -- README.md && fail "the uncommitted change is gone from the worktree"
git -C "$wt" show --name-only --format= HEAD | grep -qx README.md &&
	fail "the uncommitted change was committed"
assert_not_contains "$(cat "$d/change.diff")" "README.md" "change.diff"
exit 0
