#!/usr/bin/env bash
# fsync and fdatasync on documents succeed as on a local disk: after writes, after appends, on a
# read-only descriptor, on a directory, through dd conv=fsync/fdatasync and sync(1); the content
# is exact and survives umount + mount. What fsync acknowledged is durable before close: with
# the descriptor still open, kill -9 of the daemon loses none of it.
. "$(dirname "$0")/../lib.sh"
mount_item

python3 - "$d" <<'PY' || fail "fsync/fdatasync through python"
import os, sys
d = sys.argv[1]
p = os.path.join(d, "synced.md")
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
assert os.write(fd, b"first\n") == 6
os.fsync(fd)
assert os.write(fd, b"second\n") == 7
os.fdatasync(fd)
os.pwrite(fd, b"F", 0)
os.fsync(fd)
os.close(fd)
with open(p, "rb") as f:
    assert f.read() == b"First\nsecond\n"

a = os.path.join(d, "appended.md")
fd = os.open(a, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(3):
    os.write(fd, b"line %d\n" % i)
    os.fsync(fd)
    os.fdatasync(fd)
os.close(fd)

fd = os.open(p, os.O_RDONLY)
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)

sub = os.path.join(d, "sub")
os.mkdir(sub)
with open(os.path.join(sub, "deep.md"), "wb") as f:
    f.write(b"deep\n")
    f.flush()
    os.fsync(f.fileno())
for dirpath in (d, sub):
    fd = os.open(dirpath, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
PY
assert_file_eq "$d/synced.md" $'First\nsecond\n'
assert_eq 13 "$(stat -c %s "$d/synced.md")" "size of synced.md"
assert_file_eq "$d/appended.md" $'line 0\nline 1\nline 2\n'
assert_file_eq "$d/sub/deep.md" $'deep\n'

# Shell tools that sync.
printf 'dd fsync\n' | dd of="$d/dd1.md" conv=fsync status=none || fail "dd conv=fsync failed"
printf 'dd fdatasync\n' | dd of="$d/dd2.md" conv=fdatasync status=none ||
	fail "dd conv=fdatasync failed"
printf 'sync file\n' >"$d/s1.md"
sync "$d/s1.md" || fail "sync FILE (fsync) failed"
sync -d "$d/s1.md" || fail "sync -d FILE (fdatasync) failed"
sync -f "$d/s1.md" || fail "sync -f FILE (syncfs) failed"
assert_file_eq "$d/dd1.md" $'dd fsync\n'
assert_file_eq "$d/dd2.md" $'dd fdatasync\n'
assert_file_eq "$d/s1.md" $'sync file\n'

umount_store
mount_store
d=$M/fix-1
assert_file_eq "$d/synced.md" $'First\nsecond\n'
assert_file_eq "$d/appended.md" $'line 0\nline 1\nline 2\n'
assert_file_eq "$d/sub/deep.md" $'deep\n'
assert_file_eq "$d/dd1.md" $'dd fsync\n'
assert_file_eq "$d/dd2.md" $'dd fdatasync\n'
assert_file_eq "$d/s1.md" $'sync file\n'

# fsync'd content is durable while the descriptor is still open: a writer fsyncs (a new
# document, and a rewrite of an existing one), says so, and waits; the daemon is killed.
printf 'old content of plan.md, to be replaced\n' >"$d/plan.md"
cat >"$T/writer.py" <<'PY'
import os, sys, time
d, ready, go = sys.argv[1:4]
fd1 = os.open(os.path.join(d, "open.md"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd1, b"fsynced while open\n")
os.fsync(fd1)
fd2 = os.open(os.path.join(d, "plan.md"), os.O_WRONLY | os.O_TRUNC)
os.write(fd2, b"new plan\n")
os.fdatasync(fd2)
open(ready, "w").close()
end = time.time() + 60
while not os.path.exists(go) and time.time() < end:
    time.sleep(0.05)
PY
bg python3 "$T/writer.py" "$d" "$T/fsynced" "$T/go-on"
writer=$BG
wait_for test -e "$T/fsynced"
pid_alive "$writer" || fail "the writer ended before the daemon was killed"
old=$DAEMON
kill -9 "$old"
wait_gone "$old"
forget_daemon "$old"
touch "$T/go-on"
wait_gone "$writer"
fusermount3 -u -z "$M"
mount_store "$M"
d=$M/fix-1
assert_file_eq "$d/open.md" $'fsynced while open\n'
assert_file_eq "$d/plan.md" $'new plan\n'
assert_file_eq "$d/synced.md" $'First\nsecond\n'
exit 0
