#!/usr/bin/env bash
# Publish pushes with git's own idea of the remote: an origin configured as a path relative to
# the repository (`git remote add origin ../origin.git`, which libgit2 could not push to) and an
# origin whose URL a `url.<base>.insteadOf` rewrite turns into a path both receive the item
# branch at the head review judged, and the publish program runs after the push.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
make_repo
git -C "$REPO" remote set-url origin ../origin.git
push_item

# A relative path, resolved from the repository as for a `git push` typed there.
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
head=$(worktree_head fix-1)
[ "$head" != "$(git -C "$REPO" rev-parse main)" ] || fail "fix-1: the item branch did not move"
assert_eq "$head" "$(remote_head "$ORIGIN" packetfs/fix-1)" "fix-1: the branch in ../origin.git"
log=$(publish_log fix-1)
assert_contains "$log" "git push --porcelain -- origin $head:refs/heads/packetfs/fix-1" "publish log"
assert_contains "$log" "[new branch]" "publish log (git's porcelain output)"
assert_contains "$log" "[packetfs] pushed packetfs/fix-1 to origin" "publish log"
assert_contains "$log" "pull request opened for packetfs/fix-1 onto main" "publish log (program)"
assert_eq "" "$(status_field "$M" fix-1 last_error)" "fix-1: last_error"

# url.<base>.insteadOf: origin's URL names no real place until git rewrites it.
git -C "$REPO" config "url.$T/repo/.insteadOf" "mirror:"
git -C "$REPO" remote set-url origin mirror:origin.git
new_item fix-2
ctl "$M" fix-2 advance
wait_state "$M" fix-2 done
assert_eq "$(worktree_head fix-2)" "$(remote_head "$ORIGIN" packetfs/fix-2)" \
	"fix-2: the branch in the insteadOf target"
assert_contains "$(publish_log fix-2)" "[packetfs] pushed packetfs/fix-2 to origin" "fix-2 publish log"
# Only the item branches were pushed, each once.
assert_eq "$(git -C "$REPO" rev-parse main)" "$(remote_head "$ORIGIN" main)" "main in the remote"
assert_eq 2 "$(git --git-dir="$ORIGIN" for-each-ref refs/heads/packetfs | wc -l)" "item branches in the remote"
