#!/usr/bin/env bash
# rmdir of an item, or "archive" written to its ctl, archives it: it leaves the root and shows
# read-only under .archive/ with its documents (its ctl takes no commands, and `packetfs ctl`
# says so); nothing is deleted (branch, history).
. "$(dirname "$0")/../lib.sh"
mount_item
new_item fix-2
echo "keep me" >"$M/fix-1/notes.md"
echo "me too" >"$M/fix-2/notes.md"

rmdir "$M/fix-1" || fail "rmdir of an item failed"
[ ! -e "$M/fix-1" ] || fail "fix-1 still in the root after rmdir"
ls "$M" | grep -qx fix-1 && fail "fix-1 still listed in the root"
[ -d "$M/.archive/fix-1" ] || fail "fix-1 not under .archive: $(ls -A "$M/.archive")"
assert_file_eq "$M/.archive/fix-1/notes.md" $'keep me\n'
assert_fails_with EACCES sh_write "$M/.archive/fix-1/notes.md" "changed"
assert_fails_with EACCES sh_write "$M/.archive/fix-1/new.md" "new"
assert_file_eq "$M/.archive/fix-1/notes.md" $'keep me\n'
# Its ctl takes no commands: EACCES, and `packetfs ctl` says why.
assert_fails_with EACCES sh_write "$M/.archive/fix-1/ctl" $'advance\n'
rc=0
out=$("$PFS" ctl "$M/.archive/fix-1" advance 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status of packetfs ctl of an archived item"
assert_eq "packetfs: ctl: $M/.archive/fix-1/ctl: Permission denied (the item is archived: its files are read-only, and it takes no commands)" \
	"$out" "packetfs ctl of an archived item"
git -C "$REPO" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null ||
	fail "archiving deleted the branch"

ctl "$M" fix-2 archive
wait_for test -d "$M/.archive/fix-2"
[ ! -e "$M/fix-2" ] || fail "fix-2 still in the root after archive"
assert_file_eq "$M/.archive/fix-2/notes.md" $'me too\n'

umount_store
mount_store
assert_file_eq "$M/.archive/fix-1/notes.md" $'keep me\n'
[ ! -e "$M/fix-1" ] || fail "fix-1 back in the root after remount"
exit 0
