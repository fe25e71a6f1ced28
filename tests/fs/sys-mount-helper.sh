#!/usr/bin/env bash
# mount(8) runs the helper /sbin/mount.fuse.packetfs for `mount -t fuse.packetfs` and fstab
# lines, and that helper runs packetfs by the absolute path of its installation, so a packetfs
# installed under a prefix that is not on the PATH mount gives its helpers
# (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) still mounts. And what a
# person sees when the binary was moved (the helper says so), or when the helper is missing
# (mount falls back to mount.fuse3, whose shell does not find packetfs).
#
# The source tree is configured with meson setup --prefix=/opt/packetfs (no build: the helper
# is made at configure time) and meson says where it installs the helper. In a private mount
# namespace, a directory of $T is bound on /opt holding the built packetfs as
# /opt/packetfs/bin/packetfs, and the helper is laid on /usr/sbin through an overlay whose
# upper layer is in $T: nothing of the machine changes, and nothing of it is mounted under $T.
if [ -z "${PFS_HELPER_NS:-}" ]; then
	command -v unshare >/dev/null && command -v mount.fuse3 >/dev/null && command -v meson >/dev/null || {
		echo "# needs unshare, mount.fuse3 and meson"
		exit 77
	}
	PFS_HELPER_NS=$(readlink /proc/self/ns/mnt) exec unshare -m --propagation private bash "$0" "$@"
fi
# What follows mounts over /opt and /usr/sbin: only ever in the namespace made above.
[ "$(readlink /proc/self/ns/mnt)" != "$PFS_HELPER_NS" ] || {
	echo "FAIL: not in a mount namespace of its own" >&2
	exit 1
}
. "$(dirname "$0")/../lib.sh"
HELPER_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
prefix=/opt/packetfs

# installed_at BUILD : where meson install puts the helper of BUILD ("" when nowhere).
installed_at()
{
	meson introspect "$1" --installed |
		python3 -c 'import json,sys; print(" ".join(v for k, v in json.load(sys.stdin).items() if k.endswith("/mount.fuse.packetfs")))'
}

out=$(meson setup "$T/build" "$ROOT" --prefix="$prefix" 2>&1) || fail "meson setup failed: $out"
helper=$T/build/mount.fuse.packetfs
assert_eq /sbin/mount.fuse.packetfs "$(installed_at "$T/build")" "where the helper is installed by default"
grep -qx "PACKETFS='$prefix/bin/packetfs'" "$helper" || fail "the helper runs $(grep '^PACKETFS=' "$helper")"
out=$(meson setup --reconfigure "$T/build" "$ROOT" -Dmounthelperdir=/usr/sbin 2>&1) || fail "meson setup --reconfigure failed: $out"
assert_eq /usr/sbin/mount.fuse.packetfs "$(installed_at "$T/build")" "-Dmounthelperdir=/usr/sbin"
out=$(meson setup --reconfigure "$T/build" "$ROOT" -Dmounthelperdir= 2>&1) || fail "meson setup --reconfigure failed: $out"
assert_eq "" "$(installed_at "$T/build")" "-Dmounthelperdir= (not installed)"

sbin=$(realpath /usr/sbin)
undo_mounts()
{
	umount -l "$sbin" 2>/dev/null
	umount -l /opt 2>/dev/null
	return 0
}
CLEANUP_HOOKS+=(undo_mounts)
mkdir -p "$T/opt${prefix#/opt}/bin" "$T/sbin-upper" "$T/sbin-work"
ln -s "$PFS" "$T/opt${prefix#/opt}/bin/packetfs"
mount --bind "$T/opt" /opt || fail "cannot bind $T/opt on /opt"
mount -t overlay overlay -o "lowerdir=$sbin,upperdir=$T/sbin-upper,workdir=$T/sbin-work" "$sbin" ||
	fail "cannot lay an overlay on $sbin"
install -m 755 "$helper" /sbin/mount.fuse.packetfs || fail "cannot install the helper in the overlay"

make_store
mkdir -p "$T/mnt"
MOUNTS+=("$T/mnt")
M=$T/mnt

# sysmount ARG... : mount ARG... (from a PATH without the prefix); its output and status.
sysmount()
{
	env PATH=/usr/sbin:/usr/bin:/sbin:/bin mount "$@" 2>&1
}

# mounted : the type and source the mount table has for $M ("" when none).
mounted()
{
	findmnt -n -o FSTYPE,SOURCE --mountpoint "$M" || true
}

# umount_daemon : packetfs umount $M, checked.
umount_daemon()
{
	local out
	out=$("$PFS" umount "$M" 2>&1) || fail "packetfs umount failed: $out"
	assert_eq "" "$(mounted)" "mount table after umount"
}

out=$(sysmount -t fuse.packetfs "$STORE" "$M" -o nosuid,nodev) || fail "mount -t fuse.packetfs failed: $out"
assert_eq "fuse.packetfs $STORE" "$(mounted)" "mount table"
new_item fix-1
echo hello >"$M/fix-1/notes.md"
umount_daemon

# An fstab line (mount -T FILE MOUNTPOINT), with mount(8)'s own options.
printf '%s %s fuse.packetfs allow_other,nofail,noauto 0 0\n' "$STORE" "$M" >"$T/fstab"
out=$(sysmount -T "$T/fstab" "$M") || fail "mount -T fstab failed: $out"
assert_eq "fuse.packetfs $STORE" "$(mounted)" "mount table after the fstab mount"
assert_file_eq "$M/fix-1/notes.md" $'hello\n'
umount_daemon

# -f (fake) mounts nothing.
out=$(sysmount -f -t fuse.packetfs "$STORE" "$M") || fail "mount -f failed: $out"
assert_eq "" "$(mounted)" "mount table after mount -f"

# The installed binary moved away: the helper names it and says why; nothing mounted.
mv "$T/opt${prefix#/opt}/bin/packetfs" "$T/opt${prefix#/opt}/bin/packetfs.moved"
out=$(sysmount -t fuse.packetfs "$STORE" "$M") && fail "mount without the binary succeeded: $out"
assert_contains "$out" "mount.fuse.packetfs: $prefix/bin/packetfs: not found: packetfs was moved or removed"
assert_eq "" "$(mounted)" "mount table without the binary"
mv "$T/opt${prefix#/opt}/bin/packetfs.moved" "$T/opt${prefix#/opt}/bin/packetfs"

# Without the helper, mount runs mount.fuse3, whose shell looks for packetfs on mount's PATH.
rm /sbin/mount.fuse.packetfs
if found=$(env PATH=$HELPER_PATH sh -c 'command -v packetfs'); then
	note "a packetfs at $found is on mount's PATH: the case without the helper is left out"
else
	out=$(sysmount -t fuse.packetfs "$STORE" "$M") && fail "mount without the helper succeeded: $out"
	assert_contains "$out" "packetfs: not found"
	assert_eq "" "$(mounted)" "mount table without the helper"
fi
exit 0
