# shellcheck shell=bash
# tests/loopfs.sh - a small file system of its own for the disk-full tests (tests/bad/disk-full-*),
# sourced after tests/lib.sh:
#
#	. "$(dirname "$0")/../lib.sh"
#	. "$(dirname "$0")/../loopfs.sh"
#	loopfs_make 64                 # DISK: a 64 MiB ext4 file system mounted at $T/disk
#	loopfs_store PIPELINE_FILE     # repository and store on it, mounted on $M
#	loopfs_fill                    # no free block left on DISK
#	loopfs_squeeze $M/learnings/pad.md   # no room left in the store's own files either
#	loopfs_free                    # the blocks back
#
# Design: the file system is an ext4 image $T/disk.img made with no blocks reserved for root
# (mkfs.ext4 -m 0), so that a test running as root meets ENOSPC exactly as any user does, and
# mounted through a loop device. Filling it is a file $DISK/filler: fallocate of what df says
# is free, then appends of 4 KiB blocks until the kernel refuses one, then of single bytes
# (an inode's last partial block). Freeing it removes the file. lib.sh's cleanup runs
# loopfs_cleanup (CLEANUP_HOOKS) after it has unmounted the packetfs mounts and ended every
# process under $T, and before it removes $T: the file system is unmounted and its loop device
# released. Where a loop device cannot be made (no root, no loop driver, no mkfs.ext4) the test
# is skipped (exit 77) with the reason.

DISK=""
LOOPFS_DEV=""

# loopfs_skip WHY : ends the test as skipped.
loopfs_skip()
{
	echo "SKIP: $*" >&2
	exit 77
}

# loopfs_make SIZE_MIB : makes and mounts the file system; sets DISK to its mount point.
loopfs_make()
{
	local img=$T/disk.img out c
	[ "$(id -u)" = 0 ] || loopfs_skip "needs root to mount a loop device"
	for c in losetup mkfs.ext4 fallocate; do
		command -v "$c" >/dev/null 2>&1 || loopfs_skip "$c is missing"
	done
	truncate -s "${1}M" "$img"
	mkfs.ext4 -q -F -m 0 "$img" >/dev/null 2>&1 || fail "mkfs.ext4 of $img failed"
	out=$(losetup --find --show "$img" 2>&1) || loopfs_skip "no loop device: $out"
	LOOPFS_DEV=$out
	DISK=$T/disk
	mkdir -p "$DISK"
	out=$(mount -t ext4 "$LOOPFS_DEV" "$DISK" 2>&1) || {
		losetup -d "$LOOPFS_DEV"
		LOOPFS_DEV=""
		loopfs_skip "cannot mount a loop device: $out"
	}
	CLEANUP_HOOKS+=(loopfs_cleanup)
}

# loopfs_cleanup : unmounts DISK and releases its loop device (lib.sh's cleanup calls it).
loopfs_cleanup()
{
	if [ -n "$DISK" ] && mountpoint -q "$DISK"; then
		umount "$DISK" 2>/dev/null || umount -l "$DISK"
	fi
	[ -z "$LOOPFS_DEV" ] || losetup -d "$LOOPFS_DEV" 2>/dev/null || true
	LOOPFS_DEV=""
}

# loopfs_store [PIPELINE_FILE] : a store on DISK over $REPO (made on DISK by make_repo
# "$DISK/repo" when there is none yet: a pipeline names it first), mounted on $T/mnt
# (mount_store). Sets STORE and M.
loopfs_store()
{
	local out
	[ -n "$REPO" ] || make_repo "$DISK/repo"
	STORE=$DISK/store
	if [ $# -gt 0 ]; then
		out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$1" 2>&1) ||
			fail "packetfs init failed: $out"
	else
		out=$("$PFS" init "$STORE" --repo "$REPO" 2>&1) || fail "packetfs init failed: $out"
	fi
	mount_store "$T/mnt"
}

# loopfs_pipeline_store MB : a loop filesystem of MB MiB (loopfs_make) with a repository
# (make_repo "$DISK/repo") and a store on it, mounted, with the standard pipeline over the
# fixture recipes (copy_recipes, std_pipeline, loopfs_store). Sets DISK, REPO, RECIPES, STORE
# and M.
loopfs_pipeline_store()
{
	loopfs_make "$1"
	make_repo "$DISK/repo"
	copy_recipes
	std_pipeline "$T/pipeline.json"
	loopfs_store "$T/pipeline.json"
}

# loopfs_fill : takes every free block of DISK (the file $DISK/filler).
loopfs_fill()
{
	local avail
	sync -f "$DISK"
	avail=$(df -B1 --output=avail "$DISK" | tail -n 1 | tr -d ' ')
	[ "$avail" -le 65536 ] || fallocate -l $((avail - 65536)) "$DISK/filler.0"
	while dd if=/dev/zero bs=4096 count=16 status=none >>"$DISK/filler.1" 2>/dev/null; do :; done
	while dd if=/dev/zero bs=4096 count=1 status=none >>"$DISK/filler.2" 2>/dev/null; do :; done
	while printf x >>"$DISK/filler.3" 2>/dev/null; do :; done
	sync -f "$DISK"
	printf x >>"$DISK/filler.3" 2>/dev/null && fail "$DISK still takes writes after loopfs_fill"
	return 0
}

# loopfs_squeeze FILE : after loopfs_fill, appends to FILE (a document on the mount, e.g.
# $M/learnings/pad.md) blocks of 1 MiB, then 64 KiB, 4 KiB, 256 bytes and 1 byte, each size until
# its close fails with ENOSPC: SQLite's files may hold room a commit can use without a new
# block (the WAL file keeps its size), and this takes that room too, so that the next write to
# the store meets a full disk. Any other error fails the test.
loopfs_squeeze()
{
	python3 - "$1" <<'PY' || fail "loopfs_squeeze $1 failed"
import errno, os, sys
for size in (1 << 20, 1 << 16, 1 << 12, 1 << 8, 1):
    while True:
        try:
            fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            break
        try:
            os.write(fd, b"p" * size)
            os.close(fd)
        except OSError as e:
            try:
                os.close(fd)
            except OSError:
                pass
            if e.errno != errno.ENOSPC:
                raise
            break
PY
}

# loopfs_full PAD : loopfs_fill, then loopfs_squeeze PAD.
loopfs_full()
{
	loopfs_fill
	loopfs_squeeze "$1"
}

# loopfs_free : gives back what loopfs_fill took.
loopfs_free()
{
	rm -f "$DISK"/filler.*
	sync -f "$DISK"
}
