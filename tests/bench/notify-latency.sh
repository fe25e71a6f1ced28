#!/usr/bin/env bash
# tests/bench/notify-latency.sh - how long after a stage program prints a line inotify reports
# its log modified (SPEC §3: within 100 ms). Run on demand, not part of the test suite:
#
#	bash tests/bench/notify-latency.sh [LINES]
#
# A stage prints LINES (default 200) lines 20 ms apart, each stamped with the time it was
# printed (ns); a watcher stamps each IN_MODIFY of the stage log as it reads it from
# inotifywait -m. For each line, the latency is the time to the first event after it. Prints
# p50, p90, p99 and max in milliseconds.
. "$(dirname "$0")/../lib.sh"
LINES=${1:-200}
make_repo
cat >"$T/ticker.sh" <<'EOS'
#!/usr/bin/env bash
for ((i = 0; i < $1; i++)); do
	echo "tick $(date +%s%N)"
	sleep 0.02
done
EOS
pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(argv_json /bin/bash "$T/ticker.sh" "$LINES")}"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1

python3 - "$d" "$LINES" <<'PY'
import os, subprocess, sys, time
d, lines = sys.argv[1], int(sys.argv[2])
w = subprocess.Popen(["inotifywait", "-m", "-e", "modify", "--format", "%f", d + "/stages"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
while "Watches established" not in w.stderr.readline():
    pass
with open(os.path.join(d, "ctl"), "w") as f:
    f.write("advance\n")
events = []
log = None
deadline = time.time() + 60 + lines * 0.1
while time.time() < deadline:
    name = w.stdout.readline().strip()
    events.append(time.time_ns())
    log = name
    with open(os.path.join(d, "status")) as f:
        if "state: done" in f.read():
            break
w.kill()
ticks = [int(l.split()[1]) for l in open(os.path.join(d, "stages", log)) if l.startswith("tick ")]
lat = []
for t in ticks:
    after = [e for e in events if e >= t]
    if after:
        lat.append((after[0] - t) / 1e6)
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print("lines %d, events %d, latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f" %
      (len(ticks), len(events), q(0.5), q(0.9), q(0.99), lat[-1]))
PY
