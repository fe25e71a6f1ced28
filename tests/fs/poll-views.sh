#!/usr/bin/env bash
# poll(2) on status, status.json and events: ready while the handle has not read the current
# content, not ready after it has, and woken when the engine changes it; reading status again
# from offset 0 on the same handle then gives the new content.
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(plan_stage 02-lint)"

python3 - "$M" fix-1 <<'PY' || fail "poll on views"
import os, select, sys, threading, time

mnt, item = sys.argv[1], sys.argv[2]
d = os.path.join(mnt, item)

def read_all(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    out = b""
    while True:
        b = os.read(fd, 65536)
        if not b:
            return out
        out += b

def ready(fd, ms):
    p = select.poll()
    p.register(fd, select.POLLIN)
    return [ev for _, ev in p.poll(ms)]

def woken(fd, ms):
    # Ready before the timeout ran out: woken by the change. (At its timeout poll(2) asks each
    # file once more, so a missing wakeup would still end in "ready", only late.)
    t0 = time.monotonic()
    ev = ready(fd, ms)
    return ev and time.monotonic() - t0 < ms / 1000.0 * 0.9

def later(line):
    # Written while the main thread waits in poll, to exercise the wakeup; if it comes
    # before poll is entered, poll must report ready at once just the same.
    def run():
        time.sleep(0.2)
        with open(os.path.join(d, "ctl"), "w") as f:
            f.write(line)
    t = threading.Thread(target=run)
    t.start()
    return t

status = os.open(os.path.join(d, "status"), os.O_RDONLY)
status_json = os.open(os.path.join(d, "status.json"), os.O_RDONLY)
events = os.open(os.path.join(d, "events"), os.O_RDONLY)
root_events = os.open(os.path.join(mnt, "events"), os.O_RDONLY)

for name, fd in (("status", status), ("status.json", status_json), ("events", events),
                 ("root events", root_events)):
    assert ready(fd, 5000), "%s: not ready before it was read" % name
before = read_all(status)
assert b"state: new" in before, before
n_events = read_all(events).count(b"\n")
read_all(root_events)
read_all(status_json)
for name, fd in (("status", status), ("status.json", status_json), ("events", events),
                 ("root events", root_events)):
    assert not ready(fd, 300), "%s: ready with nothing new" % name

# advance: the plan stage runs and the item ends done; status and events change.
t = later("advance\n")
assert woken(status, 20000), "status: poll not woken by advance"
t.join()
t0 = time.time()
while b"state: done" not in read_all(status):
    assert time.time() - t0 < 30, "status never says done"
    ready(status, 1000)
after = read_all(status)
assert after != before, "status unchanged on the same handle after a change"
assert ready(status_json, 5000), "status.json: not woken"
assert b'"state":"done"' in read_all(status_json).replace(b" ", b""), "status.json"
assert ready(events, 5000), "events: not woken"
assert read_all(events).count(b"\n") > n_events, "events did not grow"
assert ready(root_events, 5000), "root events: not woken"

# Read to the end again: quiet until the next change, which wakes the waiter.
read_all(events)
assert not ready(events, 300), "events: ready with nothing new"
t = later("hold\n")
assert woken(events, 20000), "events: poll not woken by hold"
t.join()
assert b'"hold"' in read_all(events).splitlines()[-1], "last event is not the hold"

# Many waiters on one file: every one is woken by one change, not only the first few.
handles = [os.open(os.path.join(d, "events"), os.O_RDONLY) for _ in range(100)]
for fd in handles:
    read_all(fd)
results = [None] * len(handles)
def wait_one(k):
    results[k] = woken(handles[k], 20000)
threads = [threading.Thread(target=wait_one, args=(k,)) for k in range(len(handles))]
for th in threads:
    th.start()
t = later("release\n")
for th in threads:
    th.join()
t.join()
late = [k for k, r in enumerate(results) if not r]
assert not late, "%d of %d waiters on events not woken by release" % (len(late), len(handles))
PY
exit 0
