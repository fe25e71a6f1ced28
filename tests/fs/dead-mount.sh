#!/usr/bin/env bash
# A mount whose daemon died (kill -9) is recognised: `packetfs status` says so and how to
# recover, `packetfs mount` replaces the dead mount (one mount at the mount point, not two
# stacked), and `packetfs umount` clears it at once. A live mount is not stacked on either.
. "$(dirname "$0")/../lib.sh"
mount_item
echo "kept" >"$d/notes.md"

# mounts_at DIR : how many mounts the mount table has at DIR.
mounts_at()
{
	awk -v dir="$1" '$5 == dir' /proc/self/mountinfo | wc -l
}

# dead : kill -9 of the daemon of $M, leaving its mount behind.
dead()
{
	local old=$DAEMON
	kill -9 "$old"
	wait_gone "$old"
	forget_daemon "$old"
	assert_eq 1 "$(mounts_at "$M")" "mounts at $M after kill -9"
}

out=$("$PFS" mount "$STORE" "$M" 2>&1) && fail "a second mount on a live mount succeeded"
assert_contains "$out" "packetfs: mount: $M: already mounted (store $STORE)"
assert_eq 1 "$(mounts_at "$M")" "mounts at $M after the refused mount"

# status
dead
out=$("$PFS" status "$M" 2>&1) && fail "status of a dead mount succeeded: $out"
assert_contains "$out" "packetfs: status: $M: the daemon of this mount (store $STORE) is gone"
assert_contains "$out" "packetfs mount $STORE $M"
assert_contains "$out" "packetfs umount $M"
out=$("$PFS" status "$M" fix-1 2>&1) && fail "status of an item of a dead mount succeeded"
assert_contains "$out" "is gone"

# mount replaces it
out=$("$PFS" mount "$STORE" "$M" 2>&1 </dev/null) || fail "mount over a dead mount failed: $out"
assert_contains "$out" "packetfs: mount: $M: replaced the dead mount of $STORE"
assert_eq 1 "$(mounts_at "$M")" "mounts at $M after the new mount"
DAEMON=$(find_daemon "$STORE" "$M")
[ -n "$DAEMON" ] || fail "no daemon after the mount over the dead one"
DAEMON_PIDS+=("$DAEMON")
assert_file_eq "$d/notes.md" $'kept\n'
out=$("$PFS" status "$M" fix-1) || fail "status after the new mount failed: $out"
assert_contains "$out" "state: new"

# umount clears it, without waiting on anything
dead
start=$(date +%s%N)
out=$("$PFS" umount "$M" 2>&1) || fail "umount of a dead mount failed: $out"
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$took" -lt 5000 ] || fail "umount of a dead mount took ${took} ms"
assert_eq 0 "$(mounts_at "$M")" "mounts at $M after umount"
out=$("$PFS" umount "$M" 2>&1) && fail "a second umount succeeded"

# and the store mounts again as usual
mount_store "$M"
assert_file_eq "$d/notes.md" $'kept\n'

# umount of a dead mount of a store now mounted elsewhere leaves that other daemon alone.
dead
mnt1=$M
mount_store "$T/mnt2"
out=$("$PFS" umount "$mnt1" 2>&1) || fail "umount of the dead mount failed: $out"
assert_eq 0 "$(mounts_at "$mnt1")" "mounts at $mnt1 after umount"
pid_alive "$DAEMON" || fail "umount of the dead $mnt1 ended the daemon of $M"
assert_file_eq "$M/fix-1/notes.md" $'kept\n'
out=$("$PFS" umount "$M" 2>&1) || fail "umount failed: $out"
pid_alive "$DAEMON" && fail "the daemon $DAEMON still runs after umount"
exit 0
