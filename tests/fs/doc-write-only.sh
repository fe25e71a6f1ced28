#!/usr/bin/env bash
# A handle that only writes (O_WRONLY) does not read the document it opens: what it writes at
# the end is held alone and committed as an append. Everything else must still see the whole
# document, as on a local disk: a reader opened before or after the writer sees the bytes not
# yet committed; a write at an offset inside the document, past its end, or after a write at
# the end; ftruncate to 0, shorter, longer; truncate(1) by path; fstat's size; a write-only
# handle on a document unlinked meanwhile, read back through /proc/self/fd; a remount. Each
# case is compared with the same operations on a local file. A document whose creating handle
# stays open takes the `>>`s that follow its first commit as appends (the store's run of
# appends); one a reader holds open takes them whole, and the reader sees each.
. "$(dirname "$0")/../lib.sh"
mount_item
mkdir -p "$T/disk"

python3 - "$d" "$T/disk" >"$T/py.out" 2>&1 <<'PY' || fail "write-only handles: $(tail -n 5 "$T/py.out")"
import os, sys

def case(root, name, body):
    """Runs body(path) on a 4000-byte document at root/name; returns what it reads back."""
    path = os.path.join(root, name)
    with open(path, "wb") as f:
        f.write(bytes((i * 7) % 251 for i in range(4000)))
    seen = body(path)
    with open(path, "rb") as f:
        return seen, f.read(), os.stat(path).st_size

def reader_before(p):
    r = os.open(p, os.O_RDONLY)
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"tail one\n")
    a = os.pread(r, 8192, 0)          # the writer's bytes, before its close
    os.write(w, b"tail two\n")
    b = os.pread(r, 8192, 3990)
    size = os.fstat(w).st_size
    os.close(w)
    os.close(r)
    return a, b, size

def reader_after(p):
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"x" * 100)
    r = os.open(p, os.O_RDONLY)       # opened while the writer holds bytes not committed
    a = os.pread(r, 8192, 0)
    os.write(w, b"y" * 10)
    b = os.pread(r, 8192, 4050)
    os.close(r)
    os.close(w)
    return a, b

def offsets(p):
    w = os.open(p, os.O_WRONLY)
    os.pwrite(w, b"END", 4000)       # at the end
    os.pwrite(w, b"mid", 100)        # inside, after a write at the end
    os.pwrite(w, b"far", 5000)       # past the end: a hole of zeros
    os.close(w)

def truncates(p):
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"abc")
    os.ftruncate(w, 3000)            # shorter
    os.write(w, b"def")
    os.ftruncate(w, 3500)            # longer
    os.write(w, b"ghi")
    s1 = os.fstat(w).st_size
    os.close(w)
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"jkl")
    os.ftruncate(w, 0)               # emptied
    os.write(w, b"mno")
    os.close(w)
    return s1

def only_end(p):
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    for i in range(50):
        os.write(w, b"line %d\n" % i)
    os.close(w)
    for i in range(50):
        with open(p, "ab") as f:
            f.write(b"again %d\n" % i)

def unlinked(p):
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"pending")
    os.unlink(p)
    with open("/proc/self/fd/%d" % w, "rb") as r:
        got = r.read()
    os.close(w)
    with open(p, "wb") as f:         # so that case() has something to read
        f.write(got)
    return got

mnt, disk = sys.argv[1], sys.argv[2]
for name, body in [("reader-before", reader_before), ("reader-after", reader_after),
                   ("offsets", offsets), ("truncates", truncates), ("only-end", only_end),
                   ("unlinked", unlinked)]:
    want = case(disk, name, body)
    got = case(mnt, name, body)
    assert got == want, "%s: %r..., expected %r..." % (name, repr(got)[:300], repr(want)[:300])
    with open(os.path.join(mnt, name), "rb") as f:
        open(os.path.join(disk, name + ".final"), "wb").write(f.read())
print("ok")
PY

# truncate(1) by path opens for writing only, then cuts.
head -c 5000 /dev/urandom >"$d/cut.bin"
head -c 5000 "$d/cut.bin" >"$T/disk/cut.bin"
truncate -s 1234 "$d/cut.bin"
truncate -s 1234 "$T/disk/cut.bin"
cmp "$T/disk/cut.bin" "$d/cut.bin" || fail "truncate -s 1234 by path"

# The creating handle held open (fd 3) and a reader (fd 4): while the reader holds the document
# each `>>` commits it whole; after the reader's close the first `>>` does too, and those after
# it are appends, one run.
exec 3>"$d/kept.md"
exec 4<"$d/kept.md"
for i in 1 2 3; do echo "read $i" >>"$d/kept.md"; done
exec 4<&-
for i in 1 2 3 4 5; do echo "line $i" >>"$d/kept.md"; done
exec 3>&-
assert_file_eq "$d/kept.md" "$(printf 'read %d\n' 1 2 3; printf 'line %d\n' 1 2 3 4 5)"$'\n'
runs=$(sqlite3 "$STORE/packetfs.db" "SELECT count(*), count(DISTINCT grown_from) FROM revisions WHERE path = 'kept.md' AND grown_from IS NOT NULL;")
assert_eq "4|1" "$runs" "the appends after the reader closed, in one run"
# The empty document the create made durable at bash's first close, then one per `>>`.
assert_eq 9 "$(sqlite3 "$STORE/packetfs.db" "SELECT count(*) FROM revisions WHERE path = 'kept.md';")" \
	"kept.md's revisions"

umount_store
mount_store
d=$M/fix-1
for f in reader-before reader-after offsets truncates only-end unlinked; do
	cmp "$T/disk/$f.final" "$d/$f" || fail "$f differs after a remount"
done
cmp "$T/disk/cut.bin" "$d/cut.bin" || fail "cut.bin differs after a remount"
exit 0
