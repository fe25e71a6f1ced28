#!/usr/bin/env bash
# mkdir on the mount creates a work item: the branch packetfs/NAME from the base in the repo,
# a worktree with that branch checked out, and the item's status; `packetfs new` does the same.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store

mkdir "$M/fix-1"
[ -d "$M/fix-1" ] || fail "item directory missing after mkdir"
ls "$M" | grep -qx fix-1 || fail "fix-1 not listed in the mount root: $(ls "$M")"

git -C "$REPO" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null ||
	fail "branch packetfs/fix-1 missing in the repository"
assert_eq "$(git -C "$REPO" rev-parse main)" "$(git -C "$REPO" rev-parse packetfs/fix-1)" \
	"start of the item branch"

[ -L "$M/fix-1/worktree" ] || fail "worktree is not a symlink"
assert_eq "$(readlink -f "$STORE/worktrees/fix-1")" "$(readlink -f "$M/fix-1/worktree")" \
	"worktree link target"
[ -d "$M/fix-1/worktree/" ] || fail "worktree link does not lead to a directory"
assert_eq packetfs/fix-1 "$(git -C "$M/fix-1/worktree" symbolic-ref --short HEAD)" \
	"branch checked out in the worktree"
cmp "$REPO/hello.c" "$M/fix-1/worktree/hello.c" || fail "worktree hello.c differs from main"
[ -z "$(git -C "$M/fix-1/worktree" status --porcelain)" ] || fail "new worktree is not clean"

assert_eq new "$(status_field "$M" fix-1 state)" "state of a new item"
assert_eq fix-1 "$(status_field "$M" fix-1 item)" "status item"
assert_eq packetfs/fix-1 "$(status_field "$M" fix-1 branch)" "status branch"
assert_eq main "$(status_field "$M" fix-1 base)" "status base"

# The same name again is refused.
assert_fails_with EEXIST mkdir "$M/fix-1"

# `packetfs new` from the shell, with the brief on stdin.
out=$(printf 'Make the greeting friendlier.\n' | "$PFS" new "$M" fix-2 --brief - 2>&1) ||
	fail "packetfs new failed: $out"
[ -d "$M/fix-2" ] || fail "packetfs new made no item directory"
assert_file_eq "$M/fix-2/brief.md" $'Make the greeting friendlier.\n'
git -C "$REPO" rev-parse -q --verify refs/heads/packetfs/fix-2 >/dev/null ||
	fail "branch packetfs/fix-2 missing after packetfs new"

# A brief from a file.
printf 'Second brief.\n' >"$T/brief.txt"
out=$("$PFS" new "$M" fix-3 --brief "$T/brief.txt" 2>&1) || fail "packetfs new --brief FILE: $out"
assert_file_eq "$M/fix-3/brief.md" $'Second brief.\n'

# Items survive a remount.
umount_store
mount_store
for i in fix-1 fix-2 fix-3; do
	[ -d "$M/$i" ] || fail "$i gone after remount"
done
assert_file_eq "$M/fix-2/brief.md" $'Make the greeting friendlier.\n'
exit 0
