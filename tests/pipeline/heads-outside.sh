#!/usr/bin/env bash
# A branch head moved outside the engine is reported like the engine's own moves: a commit made
# by hand in the item's worktree, and a git push into the item's branch from another clone, each
# and a reset there, each reach inotifywait -m on the item as MODIFY of change.diff, status and
# status.json; status shows the new head, change.diff the new change, and a head_moved event
# names both commits.
. "$(dirname "$0")/../lib.sh"
std_item
wt=$STORE/worktrees/fix-1
ev=$T/events.txt

bg inotifywait -m -e modify,close_write --format '%e %f' "$d" >"$ev" 2>"$T/inotify.err"
wait_for grep -q 'Watches established' "$T/inotify.err"

# saw EVENT FILE : inotifywait reported EVENT (one of its comma-separated flags) for FILE.
saw()
{
	grep -Eq "^([A-Z_]+,)*$1(,[A-Z_]+)* $2\$" "$ev"
}

# moved WHAT : the watcher saw change.diff and status change, status shows head $new, and the
# events hold a head_moved from $old to $new.
moved()
{
	for f in change.diff status status.json; do
		wait_for saw MODIFY "${f//./\\.}"
	done
	assert_head "$new" "$(status_field "$M" fix-1 head)" "$1: status head"
	grep '"head_moved"' "$d/events" | grep -q "\"from\":\"$old\",\"to\":\"$new\"" ||
		fail "$1: no head_moved event from $old to $new: $(cat "$d/events")"
}

# A commit made by hand in the worktree.
old=$(worktree_head fix-1)
sed -i 's/old world/new world/' "$wt/hello.c"
git -C "$wt" commit -q -am "hand commit"
new=$(worktree_head fix-1)
moved "hand commit"
assert_contains "$(cat "$d/change.diff")" "+	printf(\"hello, new world\\n\");"

# A push into the item's branch from another clone (the worktree follows: updateInstead).
: >"$ev"
git -C "$REPO" config receive.denyCurrentBranch updateInstead
git clone -q -b packetfs/fix-1 "$REPO" "$T/other"
printf 'pushed\n' >"$T/other/PUSHED"
git -C "$T/other" add PUSHED
git -C "$T/other" commit -q -m "pushed commit"
old=$new
new=$(git -C "$T/other" rev-parse HEAD)
git -C "$T/other" push -q origin HEAD:packetfs/fix-1 2>"$T/push.err" ||
	fail "push: $(cat "$T/push.err")"
moved "push"
assert_contains "$(cat "$d/change.diff")" "+++ b/PUSHED"

# A reset in the worktree moves the head back.
: >"$ev"
old=$new
git -C "$wt" reset -q --hard HEAD~1
new=$(worktree_head fix-1)
moved "reset"
assert_not_contains "$(cat "$d/change.diff")" "PUSHED"
exit 0
