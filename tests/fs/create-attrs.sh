#!/usr/bin/env bash
# A create's reply lets the kernel cache the new document's attributes (fs/fs_ops_file.c
# "Creates"), so that the open's permission check sends no getattr; its first commit (a flush,
# an fsync, or a commit through another handle) moves its times, which the kernel does not see,
# and drops them. Checked: what a stat shows after each close (by path, and through a descriptor
# still open) is what a fresh mount shows, for a create closed with nothing written (`: >`,
# touch), a shell's dup2 redirection written after its first close, a create fsync-ed, and a
# create committed by another handle's close while it stays open. Where the kernel has the fuse
# tracepoints, also: a Python loop of creates (open, write, close) sends one getattr per file
# (its directory's, which the create drops), not two; and a loop of temp saves (create .NAME.swp,
# write, fsync, close, rename over NAME) sends two lookups a save, as a passthrough does: the
# create's entry is kept, so the rename's walk of the temp name asks nothing.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_trace.sh"
mount_item

ATTRS='%s %a %.9Y %.9Z'
# fresh FILE EXPECTED WHAT : a new mount (nothing cached) shows EXPECTED for FILE.
fresh()
{
	umount_store
	mount_store
	assert_eq "$2" "$(stat -c "$ATTRS" "$1")" "attributes on a fresh mount against $3"
}

# The attributes through a descriptor still open after each commit (no path walk in between,
# which would ask again), in stat -c "$ATTRS" form, checked against a fresh mount's.
PY_ATTRS='
import os, sys, time
def attrs(fd):
    s = os.fstat(fd)
    return "%d %o %d.%09d %d.%09d" % ((s.st_size, s.st_mode & 0o7777) +
                                      divmod(s.st_mtime_ns, 10**9) + divmod(s.st_ctime_ns, 10**9))
'

# Created, then closed 0.3 s later with nothing written (`: >`, touch): that close commits and
# moves the times. Seen through a duplicate of the descriptor.
a=$(python3 -c "$PY_ATTRS
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
dup = os.dup(fd)
attrs(fd)
time.sleep(0.3)
os.close(fd)
print(attrs(dup))
os.close(dup)" "$d/empty.md") || fail "python create of empty.md failed"
fresh "$d/empty.md" "$a" "those of empty.md through a descriptor after its first close"

# A shell's redirection: open, dup2, close (a commit of the empty document), writes, close.
a=$(python3 -c "$PY_ATTRS
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 9)
attrs(fd)
time.sleep(0.2)
os.close(fd)
attrs(9)
time.sleep(0.2)
os.write(9, b'written after the first close\\n')
os.close(9)" "$d/redir.md") || fail "python dup2 create of redir.md failed"
assert_file_eq "$d/redir.md" "written after the first close
"
a=$(stat -c "$ATTRS" "$d/redir.md")
fresh "$d/redir.md" "$a" "those of redir.md after its last close"

# fsync commits: a stat through the still open descriptor shows the committed times, which the
# close keeps (nothing is left to commit).
a=$(python3 -c "$PY_ATTRS
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b'synced\\n')
attrs(fd)
time.sleep(0.3)
os.fsync(fd)
print(attrs(fd))
os.close(fd)" "$d/sync.md") || fail "python create, write and fsync of sync.md failed"
assert_eq "$a" "$(stat -c "$ATTRS" "$d/sync.md")" "attributes of sync.md through its descriptor after fsync and by path after close"
fresh "$d/sync.md" "$a" "those of sync.md after fsync"

# Committed by another handle (opened through /proc/self/fd: no path walk) while the creating
# one stays open and unwritten.
a=$(python3 -c "$PY_ATTRS
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
attrs(fd)
time.sleep(0.3)
os.close(os.open('/proc/self/fd/%d' % fd, os.O_RDWR))
print(attrs(fd))
os.close(fd)" "$d/other.md") || fail "python create of other.md committed by another handle failed"
fresh "$d/other.md" "$a" "those of other.md through its descriptor after another handle's close"

# What the kernel is spared, where it can be counted.
mkdir "$d/many"
creates()
{
	python3 - "$d/many" <<'PY'
import os, sys
for i in range(40):
    fd = os.open(os.path.join(sys.argv[1], "f%02d" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"x" * 4096)
    os.close(fd)
PY
}
n=$(requests_to "$M" FUSE_GETATTR creates)
if [ -n "$n" ]; then
	[ "$n" -le 48 ] || fail "40 creates sent $n getattr requests (at most 48 expected: one each)"
	assert_eq 40 "$(ls "$d/many" | wc -l)" "files made by the loop of creates"
	assert_eq "4096 644" "$(stat -c '%s %a' "$d/many/f39")" "size and mode of the last create"
	mkdir "$d/saved"
	saves()
	{
		python3 - "$d/saved" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(20):
    tmp, final = os.path.join(d, ".f%02d.swp" % i), os.path.join(d, "f%02d" % i)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"saved %d\n" % i)
    os.fsync(fd)
    os.close(fd)
    os.rename(tmp, final)
PY
	}
	n=$(requests_to "$M" FUSE_LOOKUP saves)
	[ "$n" -le 44 ] || fail "20 temp saves sent $n lookups (at most 44 expected: two each)"
	assert_eq 20 "$(ls -A "$d/saved" | wc -l)" "files after the temp saves"
	assert_file_eq "$d/saved/f19" $'saved 19\n'
else
	echo "note: no fuse tracepoints here (or not root); the request counts are not checked"
fi
