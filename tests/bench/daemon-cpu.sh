#!/usr/bin/env bash
# tests/bench/daemon-cpu.sh - the daemon's CPU time and the wall time of a sweep of the mount
# (W2's `find -printf %s` and `ls -lR`, W3's `grep -r`) and of W4's creates, for two builds in
# turn in one run. Run on demand, not part of the test suite:
#
#	bash tests/bench/daemon-cpu.sh [--items N] [--files N] [--lines N] [--runs N] BASELINE_BIN [BIN]
#
# BIN defaults to build/cli/packetfs. Each run of each build makes a store of N items (default
# 1,000; brief.md and plan.md each) and sweeps it twice: the second sweep is timed, so it
# measures what a warm sweep costs (W2/W3 run warm too). Then it makes --files files (default
# 2,000; python, one open-write-close each) in one document directory, and appends --lines lines
# (default 3,000; a bash loop, one `>>` of a JSON line each, as W11) to one document. The daemon's CPU is
# utime + stime of its process from /proc/PID/stat across the timed part. Builds alternate run
# by run; the table shows the medians and every raw value. On a shared VM wall times move by
# 2x between identical runs; the daemon's CPU time moves less and is the better A/B measure.
set -euo pipefail
ITEMS=1000 FILES=2000 LINES=3000 RUNS=3
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "items files lines runs" "$@"
ab_pair
ab_start

# once NAME PID CMD... : runs CMD timed; prints "NAME CPU_MS WALL_S".
once()
{
	local name=$1 pid=$2 c0 c1 t0 t1
	shift 2
	c0=$(cpu_ticks "$pid") t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N) c1=$(cpu_ticks "$pid")
	echo "$name $(((c1 - c0) * 1000 / TICK)) $(awk -v n=$((t1 - t0)) 'BEGIN { printf "%.2f", n / 1e9 }')"
}

# measure NAME PID CMD... : runs CMD once, then again timed (once).
measure()
{
	"${@:3}" >/dev/null 2>&1 || true
	once "$@"
}

# one_run BIN N : a store of ITEMS items mounted by BIN (in directories numbered N), swept,
# then FILES creates; the daemon has exited when it returns.
one_run()
{
	local bin=$1 mnt=$W/mnt-$2
	ab_mount "$bin" "$2"
	ab_items "$mnt" "$ITEMS"
	measure find "$PID" find "$mnt" -type f -printf '%s\n'
	measure ls-lR "$PID" ls -lR "$mnt"
	measure grep-r "$PID" grep -r zanzibar "$mnt"
	mkdir "$mnt/item-1/many"
	once create "$PID" python3 -c '
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
        f.write("line %d\n" % i)
' "$mnt/item-1/many" "$FILES"
	once append "$PID" bash -c 'for i in $(seq "$2"); do
	printf "{\"time\":\"2026-12-05T12:00:00Z\",\"level\":\"info\",\"msg\":\"step %d done\"}\n" "$i" >>"$1"
done' _ "$mnt/item-1/log.jsonl" "$LINES"
	[ "$(wc -l <"$mnt/item-1/log.jsonl")" = "$LINES" ] || ab_die "log.jsonl has not $LINES lines"
	ab_umount "$bin" "$2"
}

ab_runs
echo "# daemon CPU and wall time: $ITEMS items, $FILES creates, $LINES appends, $RUNS runs, $(nproc) CPUs, $(date -u +%FT%TZ)"
echo "# A: ${BINS[0]}"
echo "# B: ${BINS[1]}"
echo "| measure | A cpu ms | B cpu ms | B/A cpu | A wall s | B wall s | B/A wall |"
echo "|---|--:|--:|--:|--:|--:|--:|"
python3 - "$W/raw" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
names = []
for r in rows:
    if r[1] not in names:
        names.append(r[1])
for n in names:
    cpu = [statistics.median(float(r[2]) for r in rows if r[0] == k and r[1] == n) for k in "01"]
    wall = [statistics.median(float(r[3]) for r in rows if r[0] == k and r[1] == n) for k in "01"]
    print("| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |" % (
        n, cpu[0], cpu[1], cpu[1] / cpu[0] if cpu[0] else 0, wall[0], wall[1],
        wall[1] / wall[0] if wall[0] else 0))
print()
for n in names:
    for k, label in (("0", "A"), ("1", "B")):
        print("- %s %s: cpu ms %s; wall s %s" % (n, label,
              [r[2] for r in rows if r[0] == k and r[1] == n],
              [r[3] for r in rows if r[0] == k and r[1] == n]))
PY
