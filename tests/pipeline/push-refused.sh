#!/usr/bin/env bash
# A refused or failed push fails the publish stage with one precise reason in last_error, git's
# own words in the stage log, and nothing else of the item lost: the branch stays where review
# judged it, and `run publish` pushes it once the remote is right again.
#   non-fast-forward  someone pushed another commit to the remote's item branch first
#   unreachable       a URL nothing listens on, and a path with no repository
#   no such remote    the pipeline's remote is not configured
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
make_repo
push_item

# failed_publish WHAT NEEDLE : the item's publish failed, last_error names NEEDLE, the branch is
# untouched, and the stage log ends with the reason.
failed_publish()
{
	assert_eq failed "$(settled fix-1)" "state after a $1"
	local why
	why=$(status_field "$M" fix-1 last_error)
	assert_contains "$why" "publish: push to origin " "last_error after a $1"
	assert_contains "$why" "$2" "last_error after a $1"
	assert_eq publish "$(status_field "$M" fix-1 stage)" "stage after a $1"
	assert_eq "$head" "$(git -C "$REPO" rev-parse packetfs/fix-1)" "the item branch after a $1"
	assert_eq "$head" "$(worktree_head fix-1)" "the worktree after a $1"
	assert_head "$head" "$(status_field "$M" fix-1 head)" "status head after a $1"
	assert_eq sound "$(status_field "$M" fix-1 assessment)" "assessment after a $1"
	assert_contains "$(publish_log fix-1)" "[packetfs] ${why#publish: }" "publish log after a $1"
	assert_not_contains "$(publish_log fix-1)" "pull request opened" "publish log after a $1"
}

# Someone else pushed a commit to the remote's packetfs/fix-1 from a clone of their own before
# the item is published.
git clone -q "$ORIGIN" "$T/other"
git -C "$T/other" commit -q --allow-empty -m "someone else's change"
git -C "$T/other" push -q origin HEAD:refs/heads/packetfs/fix-1
theirs=$(git -C "$T/other" rev-parse HEAD)
ctl "$M" fix-1 advance
wait_for bash -c '[ "$(sed -n "s/^stage: *//p" "$1")" = publish ]' _ "$M/fix-1/status"
head=$(worktree_head fix-1)
failed_publish "non-fast-forward push" \
	"refused: non-fast-forward (the remote's packetfs/fix-1 has commits the item branch lacks)"
assert_contains "$(publish_log fix-1)" "[rejected] (fetch first)" "publish log (git's porcelain)"
assert_eq "$theirs" "$(remote_head "$ORIGIN" packetfs/fix-1)" "the remote's branch after the refusal"

# Nothing listens there.
git -C "$REPO" remote set-url origin "http://127.0.0.1:1/origin.git"
ctl "$M" fix-1 "run publish"
failed_publish "push to a closed port" "failed: remote unreachable ("
assert_contains "$(status_field "$M" fix-1 last_error)" "127.0.0.1 port 1" "last_error"
assert_contains "$(publish_log fix-1)" "fatal: unable to access 'http://127.0.0.1:1/origin.git/'" \
	"publish log (git's message)"

# No repository at that path.
git -C "$REPO" remote set-url origin ../nowhere.git
ctl "$M" fix-1 "run publish"
failed_publish "push to a path without a repository" \
	"failed: remote unreachable (no git repository at ../nowhere.git)"

# No remote of that name.
git -C "$REPO" remote remove origin
ctl "$M" fix-1 "run publish"
failed_publish "push to a remote that is not configured" "failed: no such remote"
assert_eq "publish: push to origin failed: no such remote" "$(status_field "$M" fix-1 last_error)" \
	"last_error"

# Put right, the same item publishes the head review judged.
git -C "$REPO" remote add origin "$ORIGIN"
git --git-dir="$ORIGIN" update-ref -d refs/heads/packetfs/fix-1
ctl "$M" fix-1 "run publish"
wait_state "$M" fix-1 done
assert_eq "$head" "$(remote_head "$ORIGIN" packetfs/fix-1)" "the branch in the remote"
assert_eq "" "$(status_field "$M" fix-1 last_error)" "last_error after the push"
assert_contains "$(publish_log fix-1)" "pull request opened for packetfs/fix-1" "publish log"
