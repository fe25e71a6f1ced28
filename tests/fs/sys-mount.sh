#!/usr/bin/env bash
# The system's own mounting: `mount -t fuse.packetfs STORE MNT -o OPTS` and an fstab line
# (`mount --fstab FILE MNT`) mount a store through mount.fuse3, which runs `packetfs STORE MNT
# -o OPTS` found on mount(8)'s PATH. The test runs in a private mount namespace where
# /usr/local/bin is a directory holding only the built packetfs, so nothing of the machine's
# changes. Options mount(8) passes are taken; unknown ones are refused by name.
if [ -z "${PFS_SYSMOUNT_NS:-}" ]; then
	command -v unshare >/dev/null && command -v mount.fuse3 >/dev/null || {
		echo "# needs unshare and mount.fuse3"
		exit 77
	}
	PFS_SYSMOUNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
make_store
mkdir -p "$T/bin" "$T/mnt"
ln -s "$PFS" "$T/bin/packetfs"
mount --bind "$T/bin" /usr/local/bin || fail "cannot bind $T/bin on /usr/local/bin"
MOUNTS+=("$T/mnt")
M=$T/mnt

# fstype MNT : the type and source the mount table has for MNT ("" when none).
fstype()
{
	findmnt -n -o FSTYPE,SOURCE --mountpoint "$1" || true
}

# umount_daemon : packetfs umount $M, checked.
umount_daemon()
{
	local out
	out=$("$PFS" umount "$M" 2>&1) || fail "packetfs umount failed: $out"
	assert_eq "" "$(fstype "$M")" "mount table after umount"
}

out=$(mount -t fuse.packetfs "$STORE" "$M" -o rw,nosuid,nodev,noexec,allow_other,default_permissions 2>&1) ||
	fail "mount -t fuse.packetfs failed: $out"
assert_eq "fuse.packetfs $STORE" "$(fstype "$M")" "mount table"
opts=$(findmnt -n -o OPTIONS --mountpoint "$M")
for o in nosuid nodev noexec allow_other default_permissions; do
	assert_contains "$opts" "$o"
done
new_item fix-1
echo hello >"$M/fix-1/notes.md"
assert_file_eq "$M/fix-1/notes.md" $'hello\n'
umount_daemon

# fstab: mount(8)'s own options (nofail, _netdev, noauto, x-...) are dropped on the way.
printf '%s %s fuse.packetfs allow_other,default_permissions,nofail,_netdev,noauto,x-systemd.automount 0 0\n' \
	"$STORE" "$M" >"$T/fstab"
out=$(mount --fstab "$T/fstab" "$M" 2>&1) || fail "mount --fstab failed: $out"
assert_eq "fuse.packetfs $STORE" "$(fstype "$M")" "mount table after the fstab mount"
assert_file_eq "$M/fix-1/notes.md" $'hello\n'
umount_daemon

# The form mount.fuse3 runs, directly.
out=$("$PFS" "$STORE" "$M" -o nosuid,nodev 2>&1) || fail "packetfs STORE MNT failed: $out"
assert_eq "fuse.packetfs $STORE" "$(fstype "$M")" "mount table after packetfs STORE MNT"
umount_daemon

# Refused options, by name and why; nothing mounted.
for o in bogus ro fsname=x subtype=y log; do
	out=$(mount -t fuse.packetfs "$STORE" "$M" -o "nosuid,$o" 2>&1) && fail "mount -o $o succeeded"
	assert_contains "$out" "packetfs: mount: $o: "
	assert_eq "" "$(fstype "$M")" "mount table after -o $o"
done
out=$("$PFS" "$STORE" "$M" -o allow_other,nonsense=1 2>&1) && fail "packetfs -o nonsense=1 succeeded"
assert_contains "$out" "packetfs: mount: nonsense=1: unknown mount option"
out=$("$PFS" mount "$STORE" "$M" -o max_read=x,default_permissions,bad 2>&1) && fail "-o bad succeeded"
assert_contains "$out" "packetfs: mount: bad: unknown mount option"
# A first argument that is no directory is still an unknown command.
out=$("$PFS" nosuchthing "$M" 2>&1) && fail "packetfs nosuchthing succeeded"
assert_contains "$out" "packetfs: nosuchthing: unknown command"
exit 0
