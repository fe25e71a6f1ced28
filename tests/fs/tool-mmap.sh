#!/usr/bin/env bash
# Shared mmap reads of documents as on a local disk (python mmap, MAP_SHARED, PROT_READ): the
# mapping equals the file, whole and in slices across page boundaries, for a small document and
# one of several pages that does not end on a page boundary; after the file is rewritten through
# another descriptor (shorter, then longer, then in place), a new mapping shows the new content;
# a mapping kept open sees an in-place write.
. "$(dirname "$0")/../lib.sh"
mount_item

printf 'mapped content\n' >"$d/small.md"
head -c 20001 /dev/urandom >"$T/big"
cp "$T/big" "$d/big.bin"

python3 - "$d" "$T/big" <<'PY' || fail "shared mmap reads"
import mmap, os, sys
d, bigsrc = sys.argv[1], sys.argv[2]

def mapped(path):
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
        try:
            assert len(m) == size, "mapping of %d bytes, file of %d" % (len(m), size)
            return m[:], [m[o:o + 100] for o in (0, 4000, 4090, 8191, size - 50)]
        finally:
            m.close()

def check(path, want, what):
    whole, slices = mapped(path)
    assert whole == want, "%s: mapping differs from the content (%d vs %d bytes)" % (
        what, len(whole), len(want))
    n = len(want)
    for o, s in zip((0, 4000, 4090, 8191, n - 50), slices):
        assert s == want[o:o + 100], "%s: slice at %d differs" % (what, o)
    with open(path, "rb") as f:
        assert f.read() == want, "%s: read differs" % what

small = os.path.join(d, "small.md")
big = os.path.join(d, "big.bin")
check(small, b"mapped content\n", "small.md")
check(big, open(bigsrc, "rb").read(), "big.bin")

# The mapping and read() agree at the same time from two descriptors.
with open(big, "rb") as f1, open(big, "rb") as f2:
    m = mmap.mmap(f1.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    assert m[12345:12400] == os.pread(f2.fileno(), 55, 12345)
    m.close()

# A mapping that stays open sees an in-place write through another descriptor.
with open(big, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    before = m[:]
    fd = os.open(big, os.O_WRONLY)
    os.pwrite(fd, b"Y" * 100, 5000)
    os.close(fd)
    assert m[5000:5100] == b"Y" * 100, "an open mapping does not see an in-place write"
    assert m[:5000] == before[:5000] and m[5100:] == before[5100:], "an open mapping changed elsewhere"
    m.close()

# Rewrite through another descriptor: shorter, then longer, then in place.
shorter = os.urandom(9000)
with open(big, "wb") as f:
    f.write(shorter)
check(big, shorter, "big.bin after a shorter rewrite")
longer = os.urandom(30003)
fd = os.open(big, os.O_WRONLY | os.O_TRUNC)
os.write(fd, longer)
os.close(fd)
check(big, longer, "big.bin after a longer rewrite")
fd = os.open(big, os.O_WRONLY)
os.pwrite(fd, b"X" * 5000, 4000)
os.close(fd)
check(big, longer[:4000] + b"X" * 5000 + longer[9000:], "big.bin after an in-place rewrite")
with open(small, "w") as f:
    f.write("remapped, and longer than before\n")
whole, _ = mapped(small)
assert whole == b"remapped, and longer than before\n", whole
PY

# And after a rewrite by another process (cp over it).
printf 'rewritten by cp\n' >"$T/new"
cp "$T/new" "$d/small.md"
got=$(python3 -c '
import mmap, sys
with open(sys.argv[1], "rb") as f:
    m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    sys.stdout.write(m[:].decode())
' "$d/small.md") || fail "mmap of small.md after cp failed"
assert_eq "rewritten by cp" "$got" "mapping of small.md after cp over it"
exit 0
