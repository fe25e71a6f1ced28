#!/usr/bin/env bash
# One open file serves several threads at once, as FUSE lets it: eight threads of one process
# pread (and poll) one descriptor of each rendered view of an item (status, status.json,
# report.html, change.diff, validation/evidence.md, validation/junit.xml, ctl) while another
# thread appends to a document of the item, so that reads at offset 0 take the snapshot again
# while other threads copy from it. Then threads write, read, fsync and flush (close a dup) one
# descriptor of a document (and set its times by name), and of the registry, at the same time. Every call succeeds, every
# read of a view at offset 0 starts as the view does, the document and the registry hold
# exactly what was appended, and the mount still answers.
. "$(dirname "$0")/../lib.sh"
mount_item

printf 'first line\n' >"$d/notes.md"

python3 - "$d" "${PFS_CONCURRENT_SECONDS:-2}" <<'PY' || fail "concurrent use of one handle failed (see above)"
import errno, json, os, select, sys, threading, time

item, secs = sys.argv[1], float(sys.argv[2])
errors = []


def err(what, e):
    errors.append("%s: %s" % (what, e))


def run(threads):
    for t in threads:
        t.start()
    for t in threads:
        t.join(secs + 60)
        if t.is_alive():
            err("thread", "still running %d s after its end" % (secs + 60))


# The first bytes each view starts with, whatever its content.
views = {
    "status": b"",
    "status.json": b"{",
    "report.html": b"<!DOCTYPE html>",
    "change.diff": b"",
    "validation/evidence.md": b"",
    "validation/junit.xml": b"<?xml",
    "ctl": b"",
}

for view, head in views.items():
    path = os.path.join(item, view)
    fd = os.open(path, os.O_RDONLY)
    stop = time.monotonic() + secs
    counts = [0]

    def reader(k):
        p = select.poll()
        p.register(fd, select.POLLIN)
        i = 0
        while time.monotonic() < stop and not errors:
            off = 0 if i % 3 == 0 else (i * 7) % 64
            try:
                data = os.pread(fd, 4096 if i % 2 else 65536, off)
                if off == 0 and not data.startswith(head):
                    err("%s: read at 0" % view, "starts %r, not %r" % (data[:40], head))
                if k == 0 and i % 5 == 0:
                    p.poll(0)
            except OSError as e:
                err("%s: pread at %d" % (view, off), "%s (%s)" % (e.strerror, errno.errorcode.get(e.errno)))
                return
            i += 1
        counts[0] += i

    def appender():
        n = 0
        while time.monotonic() < stop and not errors:
            try:
                with open(os.path.join(item, "notes.md"), "a") as f:
                    f.write("appended while reading %s: %d\n" % (view, n))
            except OSError as e:
                err("append to notes.md", e)
                return
            n += 1

    run([threading.Thread(target=reader, args=(k,)) for k in range(8)] +
        [threading.Thread(target=appender)])
    try:
        os.close(fd)
    except OSError as e:
        err("%s: close" % view, e)
    print("# %s: %d reads by 8 threads" % (view, counts[0]))
    if errors:
        break


def hammer(fd, what, line_of, nwriters, most, actions):
    """Threads on the descriptor fd of what at once, for secs: nwriters append the lines
    line_of(k, n) (at most most lines each), and one thread a name of actions calls its
    function again and again. Closes fd. The number of lines each writer wrote."""
    stop = time.monotonic() + secs
    written = [0] * nwriters

    def writer(k):
        n = 0
        while time.monotonic() < stop and not errors and n < most:
            line = line_of(k, n)
            try:
                if os.write(fd, line) != len(line):
                    err("%s: write" % what, "short")
            except OSError as e:
                err("%s: write" % what, e)
                return
            n += 1
        written[k] = n

    def other(name, action):
        while time.monotonic() < stop and not errors:
            try:
                action()
            except OSError as e:
                err("%s: %s" % (what, name), e)
                return

    run([threading.Thread(target=writer, args=(k,)) for k in range(nwriters)] +
        [threading.Thread(target=other, args=a) for a in actions])
    try:
        os.close(fd)
    except OSError as e:
        err("%s: close" % what, e)
    return written


def shared_line(k, n):
    return b"w%d %06d %s\n" % (k, n, str(k).encode() * 40)


# One descriptor of a document opened O_APPEND: writers, readers, fsync, flushes (a closed
# dup) and utime (which commits the document's open handles) at once. Each writer's lines are whole and in order at the end.
if not errors:
    path = os.path.join(item, "shared.md")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    written = hammer(fd, "shared.md", shared_line, 4, float("inf"), [
        ("flush", lambda: os.close(os.dup(fd))),
        ("fsync", lambda: os.fsync(fd)),
        ("pread", lambda: (os.pread(fd, 4096, 0), os.fstat(fd))),
        ("utime", lambda: os.utime(path)),  # commits the open handles of the document first
    ])
    if not errors:
        seen = {k: 0 for k in range(4)}
        for ln in open(path, "rb").read().split(b"\n")[:-1]:
            k, n = int(ln[1:2]), int(ln[3:9])
            if n != seen[k] or ln + b"\n" != shared_line(k, n):
                err("shared.md", "line %r out of place" % ln[:60])
                break
            seen[k] += 1
        if not errors and [seen[k] for k in range(4)] != written:
            err("shared.md", "lines %r, written %r" % (seen, written))
        print("# shared.md: %d lines by 4 writers" % sum(written))

# The registry through one descriptor: lines from several threads, flushes, reads.
if not errors:
    path = os.path.join(item, "validation/registry.jsonl")
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    written = hammer(fd, "registry", lambda k, n: (json.dumps(
        {"recipe": "r%d" % k, "status": "validated", "note": str(n)}) + "\n").encode(), 2, 200, [
        ("flush", lambda: os.close(os.dup(fd))),
        ("pread", lambda: os.pread(fd, 4096, 0)),
    ])
    if not errors:
        rows = [json.loads(x) for x in open(path).read().splitlines()]
        for k in range(2):
            notes = [r["note"] for r in rows if r["recipe"] == "r%d" % k]
            if notes != [str(n) for n in range(written[k])]:
                err("registry", "writer %d: %d rows, %d written" % (k, len(notes), written[k]))
        print("# registry: %d lines by 2 writers" % sum(written))

try:
    os.stat(os.path.join(item, "status"))
except OSError as e:
    err("the mount after the test", e)
for e in errors[:10]:
    print("error: %s" % e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

[ -f "$d/status" ] || fail "the mount no longer answers"
grep -q 'appended while reading' "$d/notes.md" || fail "the appends to notes.md are missing"
exit 0
