#!/usr/bin/env bash
# FIFOs, sockets and device nodes in a packet as on a local disk: mkfifo and a reader/writer
# pair through the FIFO; a unix socket bound in the packet by python3, connected to and
# answered; mknod c and b as root with their major:minor (not opened: the mount is nodev); stat -c %F, ls -l, find's type
# (readdir's d_type); chmod, chown, touch, rename and unlink of them; .history and `packetfs
# log` name their kind. Another user makes a FIFO (owned by it) but not a device (EPERM). A
# remount keeps every node with its type, mode, owner and device number; an archived item
# shows them read-only.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
make_group TEAM
make_user A "$TEAM"
team_store "$TEAM"
mount_team
mkdir "$M/fix-1"
d=$M/fix-1
mkdir "$d/sub"

# A FIFO: a writer and a reader meet in it.
mkfifo -m 0640 "$d/pipe" || fail "mkfifo in a packet"
assert_eq "fifo 640" "$(stat -c '%F %a' "$d/pipe")" "type and mode of a FIFO"
cat "$d/pipe" >"$T/read.out" &
reader=$!
printf 'through the pipe\n' >"$d/pipe"
wait "$reader" || fail "the FIFO's reader failed"
assert_file_eq "$T/read.out" $'through the pipe\n'
mkfifo "$d/sub/pipe2" || fail "mkfifo in a subdirectory"

# A unix socket bound in the packet, then connected to through its path.
python3 - "$d/sock" <<'PY' || fail "a unix socket in a packet"
import os, socket, stat, sys, threading
path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
assert stat.S_ISSOCK(os.lstat(path).st_mode), "not a socket after bind"
def serve():
    c, _ = srv.accept()
    c.sendall(c.recv(64).upper())
    c.close()
t = threading.Thread(target=serve)
t.start()
cli = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
cli.connect(path)
cli.sendall(b"hello")
got = cli.recv(64)
t.join()
assert got == b"HELLO", got
PY
assert_eq socket "$(stat -c %F "$d/sock")" "type of a bound socket"

# Devices, as root.
mknod -m 0666 "$d/null" c 1 3 || fail "mknod c as root"
mknod -m 0600 "$d/loop" b 7 200 || fail "mknod b as root"
assert_eq "character special file 1:3 666" "$(stat -c '%F %Hr:%Lr %a' "$d/null")" "char device"
assert_eq "block special file 7:200 600" "$(stat -c '%F %Hr:%Lr %a' "$d/loop")" "block device"
# The mount is nodev: a device node in a store never opens a device of this machine.
assert_fails_with EACCES sh_write "$d/null" "into the void"
assert_eq "crw-rw-rw- 1, 3" "$(ls -l "$d/null" | awk '{print $1, $5, $6}')" "ls -l of a char device"
assert_eq "p s c b" "$(for n in pipe sock null loop; do find "$d" -maxdepth 1 -name "$n" -printf '%y\n'; done | tr '\n' ' ' | sed 's/ $//')" "find's types (readdir d_type)"

# Another user: a FIFO of its own, no device.
chmod 1777 "$d"
run_as "$A" mkfifo "$d/a-pipe" || fail "another user's mkfifo"
assert_eq "$A:$TEAM" "$(stat -c '%U:%G' "$d/a-pipe")" "owner of another user's FIFO"
assert_fails_with EPERM run_as "$A" mknod "$d/a-null" c 1 3
[ -e "$d/a-null" ] && fail "a refused mknod left an entry"

# chmod, chown, touch, rename, unlink.
chmod 0604 "$d/pipe" && assert_eq 604 "$(stat -c %a "$d/pipe")" "chmod of a FIFO"
chown "$A" "$d/loop" && assert_eq "$A" "$(stat -c %U "$d/loop")" "chown of a device"
touch -m -d '2020-01-02 03:04:05Z' "$d/sock"
assert_eq 1577934245 "$(stat -c %Y "$d/sock")" "touch of a socket"
mv "$d/null" "$d/sub/null2" || fail "mv of a device"
assert_eq "character special file 1:3" "$(stat -c '%F %Hr:%Lr' "$d/sub/null2")" "renamed device"
mv "$d/sub/null2" "$d/null"
mkfifo "$d/gone"
rm "$d/gone" || fail "rm of a FIFO"
[ -e "$d/gone" ] && fail "rm left the FIFO"
assert_fails_with EEXIST mkfifo "$d/pipe"

# .history and packetfs log name the kind.
assert_eq fifo "$(stat -c %F "$d/.history/pipe@1")" ".history of a FIFO"
assert_eq "character special file 1:3" "$(stat -c '%F %Hr:%Lr' "$d/.history/null@1")" ".history of a device"
log=$("$PFS" log "$STORE" fix-1 2>&1) || fail "packetfs log: $log"
assert_contains_each "$log" "pipe@1" "kind=fifo" "kind=socket" "kind=char 1:3" "kind=block 7:200"

check_nodes()
{
	assert_eq "fifo 604 root" "$(stat -c '%F %a %U' "$d/pipe")" "FIFO ($1)"
	assert_eq "socket" "$(stat -c '%F' "$d/sock")" "socket ($1)"
	assert_eq 1577934245 "$(stat -c %Y "$d/sock")" "socket's mtime ($1)"
	assert_eq "character special file 1:3" "$(stat -c '%F %Hr:%Lr' "$d/null")" "char device ($1)"
	assert_eq "block special file 7:200 $A" "$(stat -c '%F %Hr:%Lr %U' "$d/loop")" "block device ($1)"
	assert_eq fifo "$(stat -c %F "$d/sub/pipe2")" "FIFO in sub/ ($1)"
	assert_eq "$A" "$(stat -c %U "$d/a-pipe")" "another user's FIFO ($1)"
}
check_nodes "made"
umount_store
mount_team
check_nodes "after a remount"
cat "$d/pipe" >"$T/read2.out" &
reader=$!
printf 'again\n' >"$d/pipe"
wait "$reader" || fail "the FIFO's reader failed after a remount"
assert_file_eq "$T/read2.out" $'again\n'

# Archived: read-only, still what they were.
rmdir "$d" || fail "archiving fix-1"
a=$M/.archive/fix-1
assert_eq "fifo" "$(stat -c %F "$a/pipe")" "an archived FIFO"
assert_eq "character special file 1:3" "$(stat -c '%F %Hr:%Lr' "$a/null")" "an archived device"
assert_fails_with EACCES mkfifo "$a/new-pipe"
assert_fails_with EACCES rm "$a/pipe"
echo ok
