#!/usr/bin/env bash
# registry.jsonl and the events files are read live: a handle reads the rows appended after
# it opened, a read at any offset (forwards, backwards, one byte at a time) gives the bytes of
# the whole file at that offset, and evidence.md, whose stat and reads follow every append,
# lists the external claims in order. Also the .history of a document with many revisions:
# every revision is listed, a revision's stat size is its content's, and a directory of
# .history resolves.
. "$(dirname "$0")/../lib.sh"
mount_item

python3 - "$M" <<'PY' || fail "append-only reads"
import json, os, sys

mnt = sys.argv[1]
reg = os.path.join(mnt, "fix-1", "validation", "registry.jsonl")
evidence = os.path.join(mnt, "fix-1", "validation", "evidence.md")


def append(i):
    note = "claim %d %s" % (i, "x" * (i * 37 % 300))
    with open(reg, "a") as f:
        f.write(json.dumps({"recipe": "99-manual", "status": "validated", "note": note}) + "\n")
    return note


def read_blocks(path, bs):
    fd = os.open(path, os.O_RDONLY)
    out = bytearray()
    try:
        while True:
            b = os.read(fd, bs)
            if not b:
                return bytes(out)
            out += b
    finally:
        os.close(fd)


notes = []
# A handle opened before the appends reads them as they come.
held = os.open(reg, os.O_RDONLY)
seen = b""
for i in range(120):
    notes.append(append(i))
    if i % 10 == 0:
        seen += os.read(held, 1 << 20)
        st = os.stat(evidence).st_size
        text = open(evidence).read()
        assert len(text.encode()) == st, ("evidence.md stat size", st, len(text.encode()))
        assert notes[-1] in text, ("evidence.md misses the latest claim", i)
        assert "[0/0 validated]" in text, text[:200]
while True:
    b = os.read(held, 4096)
    if not b:
        break
    seen += b
whole = open(reg, "rb").read()
assert seen == whole, "a handle opened first read %d bytes of %d" % (len(seen), len(whole))
lines = whole.decode().splitlines()
assert [json.loads(l)["note"] for l in lines] == notes, "registry lines out of order"
assert os.stat(reg).st_size == len(whole)

# Any block size, and reads at offsets in any order on one handle.
for bs in (1, 7, 4096, 65536):
    assert read_blocks(reg, bs) == whole, "reading registry.jsonl in blocks of %d" % bs
for off in (len(whole) - 5, 0, 12345, 3, len(whole), len(whole) + 10, 999):
    got = os.pread(held, 300, off)
    assert got == whole[off:off + 300], "pread at %d" % off
os.close(held)

text = open(evidence).read()
assert text.index(notes[0]) < text.index(notes[60]) < text.index(notes[119]), "claims out of order"

# Events: the item's and the mount's, read whole and in small blocks alike.
for path in (os.path.join(mnt, "fix-1", "events"), os.path.join(mnt, "events")):
    ev = open(path, "rb").read()
    assert ev.count(b"\n") > 0, path
    for bs in (7, 4096):
        assert read_blocks(path, bs) == ev, "reading %s in blocks of %d" % (path, bs)
    fd = os.open(path, os.O_RDONLY)
    for off in (len(ev) // 2, 0, len(ev) - 1):
        assert os.pread(fd, 100, off) == ev[off:off + 100], "%s: pread at %d" % (path, off)
    os.close(fd)

# .history with many revisions.
doc = os.path.join(mnt, "fix-1", "notes", "a.md")
os.mkdir(os.path.dirname(doc))
for i in range(1, 201):
    with open(doc, "w") as f:
        f.write("revision %d\n" % i * i)
hist = os.path.join(mnt, "fix-1", ".history")
assert "notes" in os.listdir(hist), os.listdir(hist)
assert os.path.isdir(os.path.join(hist, "notes"))
assert not os.path.exists(os.path.join(hist, "note"))
assert not os.path.exists(os.path.join(hist, "notes", "a.md"))
names = os.listdir(os.path.join(hist, "notes"))
revs = sorted(int(n.split("@")[1]) for n in names if n.startswith("a.md@"))
assert len(revs) == len(names) and revs[0] == 1 and revs[-1] >= 200, (len(names), revs[:3], revs[-3:])
for i in (1, 77, 200):
    p = os.path.join(hist, "notes", "a.md@%d" % i)
    content = open(p, "rb").read()
    assert os.stat(p).st_size == len(content), p
assert not os.path.exists(os.path.join(hist, "notes", "a.md@0"))
assert not os.path.exists(os.path.join(hist, "notes", "a.md@99999"))
PY
