#!/usr/bin/env bash
# A second daemon on the same store is refused with a clear error; the first keeps working.
. "$(dirname "$0")/../lib.sh"
mount_item
echo "first daemon" >"$M/fix-1/notes.md"

mkdir -p "$T/mnt2"
MOUNTS+=("$T/mnt2")
DAEMON_PIDS+=("")
rc=0
err=$("$PFS" mount "$STORE" "$T/mnt2" 2>&1 </dev/null) || rc=$?
[ "$rc" = 1 ] || fail "second mount exited $rc, expected 1: $err"
assert_contains "$err" "packetfs: " "error of the second mount"
assert_contains "$err" "in use" "error of the second mount"
mountpoint -q "$T/mnt2" && fail "the refused second mount is mounted"
[ -z "$(find_daemon "$STORE" "$T/mnt2")" ] || fail "a second daemon is running"

# Also with -f (foreground): refused, not mounted.
rc=0
err=$(timeout 30 "$PFS" mount "$STORE" "$T/mnt2" -f 2>&1 </dev/null) || rc=$?
[ "$rc" = 1 ] || fail "second mount -f exited $rc, expected 1: $err"
mountpoint -q "$T/mnt2" && fail "the refused second mount -f is mounted"

pid_alive "$DAEMON" || fail "the first daemon died"
assert_file_eq "$M/fix-1/notes.md" $'first daemon\n'
echo "still writable" >"$M/fix-1/more.md"
assert_file_eq "$M/fix-1/more.md" $'still writable\n'
mkdir "$M/fix-2" || fail "the first daemon cannot create items any more"
exit 0
