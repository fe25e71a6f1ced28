#!/usr/bin/env bash
# A write, truncate or fallocate by another user clears a document's set-user-ID bit, and its
# set-group-ID bit where it has group execute, as on a local disk; one by root does not. The
# kernel leaves this to packetfs when it agrees FUSE_HANDLE_KILLPRIV_V2 (fs/fs_io.c), so every
# case runs on the mount and on a directory of the local disk, and the modes must match:
# `>>` (twice: the second write comes after the kernel has stopped asking for the file's
# security.capability), a `>` that truncates, truncate(1) by path, ftruncate through an open
# handle, fallocate(1), a set-group-ID bit without group execute (kept), and root's own
# append. (chown's clearing: pjdfstest's chown/00.t.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
make_group TEAM
make_user A "$TEAM"
make_user B "$TEAM"
team_store "$TEAM"
mount_team
run_as "$A" mkdir "$M/fix-1" || fail "A cannot make an item"
run_as "$A" chmod 0775 "$M/fix-1"
disk=$TEAM_DIR/disk
mkdir "$disk"
chown "$A:$TEAM" "$disk"
chmod 2775 "$disk"

# prepare DIR NAME MODE : A makes DIR/NAME with a line in it, in group TEAM, with MODE.
prepare()
{
	run_as "$A" sh -c "printf 'first line\n' > '$1/$2' && chgrp '$TEAM' '$1/$2' && chmod $3 '$1/$2'" ||
		fail "A cannot prepare $1/$2"
}

# case NAME MODE WHO CMD : on the mount and on the disk, a file NAME with MODE, then CMD run by
# WHO (a user, or root) with F naming the file; the two modes afterwards must be equal.
case_of()
{
	local name=$1 mode=$2 who=$3 cmd=$4 dir got want
	for dir in "$M/fix-1" "$disk"; do
		prepare "$dir" "$name" "$mode"
		if [ "$who" = root ]; then
			F="$dir/$name" sh -c "$cmd" || fail "$name: root's command failed in $dir"
		else
			run_as "$who" env F="$dir/$name" sh -c "$cmd" || fail "$name: $who's command failed in $dir"
		fi
	done
	got=$(stat -c %a "$M/fix-1/$name")
	want=$(stat -c %a "$disk/$name")
	assert_eq "$want" "$got" "mode of $name after: $cmd ($who; set $mode)"
}

case_of append 6775 "$B" 'printf "more\n" >> "$F"'
case_of append-sgid 2775 "$B" 'printf "more\n" >> "$F"'
case_of sgid-no-exec 2664 "$B" 'printf "more\n" >> "$F"'
case_of redirect 4775 "$B" 'printf "new\n" > "$F"'
case_of truncate 6775 "$B" 'truncate -s 3 "$F"'
case_of ftruncate 6775 "$B" 'python3 -c "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.ftruncate(fd, 4); os.close(fd)" "$F"'
case_of fallocate 6775 "$B" 'fallocate -l 8192 "$F"'
case_of root-append 6775 root 'printf "more\n" >> "$F"'

# A second write after the bits came back: the kernel asked for nothing on this inode since the
# first write, yet the bits go.
for dir in "$M/fix-1" "$disk"; do
	prepare "$dir" again 0775
	run_as "$B" sh -c "printf 'one\n' >> '$dir/again'" || fail "B cannot append to $dir/again"
	run_as "$A" chmod 6775 "$dir/again"
	run_as "$B" sh -c "printf 'two\n' >> '$dir/again'" || fail "B cannot append to $dir/again"
done
assert_eq "$(stat -c %a "$disk/again")" "$(stat -c %a "$M/fix-1/again")" \
	"mode after a second append once the bits were set again"
assert_eq 775 "$(stat -c %a "$M/fix-1/again")" "mode after the second append"

# Durable: the cleared modes are the store's after a remount.
for f in append redirect truncate fallocate root-append; do
	echo "$f $(stat -c %a "$M/fix-1/$f")"
done >"$T/before"
umount_store
mount_team
for f in append redirect truncate fallocate root-append; do
	echo "$f $(stat -c %a "$M/fix-1/$f")"
done >"$T/after"
diff "$T/before" "$T/after" >/dev/null || fail "modes changed across a remount: $(diff "$T/before" "$T/after")"
exit 0
