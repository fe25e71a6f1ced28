#!/usr/bin/env bash
# flock and fcntl locks, shared mmap reads, xattrs (ENOTSUP or stored, never EPERM/EIO),
# fchown to the same owner, and an O_RDWR open that writes nothing changes nothing.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1
printf 'locked content\n' >"$d/lock.md"

python3 - "$d" <<'PY' || fail "POSIX operations on a document failed"
import errno, fcntl, mmap, os, sys
d = sys.argv[1]
p = os.path.join(d, "lock.md")

with open(p, "r+b") as f:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.flock(f, fcntl.LOCK_UN)
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.lockf(f, fcntl.LOCK_UN)
    st = os.fstat(f.fileno())
    os.fchown(f.fileno(), st.st_uid, st.st_gid)

with open(p, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    assert m[:] == b"locked content\n", m[:]
    m.close()

try:
    os.setxattr(p, "user.packetfs-test", b"1")
    assert os.getxattr(p, "user.packetfs-test") == b"1"
except OSError as e:
    assert e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP), "setxattr: %s" % e
try:
    os.getxattr(p, "user.absent")
    raise AssertionError("getxattr of an absent attribute succeeded")
except OSError as e:
    assert e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENODATA), "getxattr: %s" % e
try:
    os.listxattr(p)
except OSError as e:
    assert e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP), "listxattr: %s" % e
PY

revs=$(ls "$d/.history" | grep -c '^lock\.md@' || true)
python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR))' "$d/lock.md"
assert_file_eq "$d/lock.md" $'locked content\n'
assert_eq "$revs" "$(ls "$d/.history" | grep -c '^lock\.md@' || true)" \
	"revisions after an O_RDWR open that wrote nothing"
exit 0
