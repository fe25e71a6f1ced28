#!/usr/bin/env bash
# Item names must match [a-z0-9][a-z0-9._-]{0,63}: anything else is EINVAL, names the root uses
# are EEXIST, and a refused mkdir creates nothing (no directory, no branch, no worktree).
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store

before=$(ls -A "$M")
long65=$(printf 'a%.0s' $(seq 65))
for name in "Bad Name" UPPER Fix-1 "-lead" "_under" ".hidden" "tab	name" "$long65" "semi;colon" \
	"ümlaut"; do
	assert_fails_with EINVAL mkdir "$M/$name"
done
assert_fails_with EEXIST mkdir "$M/events"
assert_fails_with EEXIST mkdir "$M/.packetfs"
assert_fails_with EEXIST mkdir "$M/.archive"
assert_fails_with EEXIST mkdir "$M/index.html"
rc=0
err=$("$PFS" new "$M" "Bad Name" 2>&1 </dev/null) || rc=$?
[ "$rc" = 1 ] || fail "packetfs new with a bad name exited $rc, expected 1: $err"
assert_contains "$err" "packetfs: " "error of packetfs new with a bad name"

assert_eq "$before" "$(ls -A "$M")" "mount root after refused mkdirs"
assert_eq "" "$(git -C "$REPO" for-each-ref refs/heads/packetfs/)" "packetfs branches"
assert_eq "" "$(ls -A "$STORE/worktrees")" "worktrees after refused mkdirs"

# The longest legal name (64) and the other legal characters are accepted.
long64=$(printf 'b%.0s' $(seq 64))
mkdir "$M/$long64" || fail "mkdir of a 64-character name failed"
mkdir "$M/0.fix_it-now" || fail "mkdir of 0.fix_it-now failed"
git -C "$REPO" rev-parse -q --verify "refs/heads/packetfs/$long64" >/dev/null ||
	fail "no branch for the 64-character item"
# Inside an item, directories are plain documents: any name goes.
mkdir "$M/0.fix_it-now/Notes Dir" || fail "mkdir of a directory inside an item failed"
exit 0
