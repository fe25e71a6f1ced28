#!/usr/bin/env bash
# tests/bench/fsync-after-mount.sh - editor saves with fsync right after a mount, for two builds
# in turn in one run: the shape of a person saving documents with vim in a store just mounted,
# whose WAL file SQLite starts empty (W4's saves come after 10,000 creates, when the WAL has
# been started over and its blocks are written). Run on demand, not part of the test suite:
#
#	bash tests/bench/fsync-after-mount.sh [--docs N] [--saves N] [--runs N] BASELINE_BIN [BIN]
#
# BIN defaults to build/cli/packetfs. Each run of each build mounts a new store with one item,
# makes --docs documents of 4 KiB (default 20), then makes --saves saves (default 300) over
# them in turn from one Python process: write .NAME.swp, fsync, close, rename over NAME. It
# reports the saves a second, the first fsync's time, the median and 90th percentile of the
# fsyncs' times (each timed around os.fsync alone), and the WAL file's size at the end. Builds
# alternate run by run; the table shows the medians.
set -euo pipefail
DOCS=20 SAVES=300 RUNS=3
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "docs saves runs" "$@"
ab_pair
ab_start

# one_run BIN N : a store mounted by BIN (directories numbered N), measured; prints "SAVES/S
# FIRST_US MEDIAN_US P90_US WAL_BYTES"; the daemon has exited when it returns.
one_run()
{
	local bin=$1 mnt=$W/mnt-$2 out
	ab_mount "$bin" "$2"
	mkdir "$mnt/item"
	out=$(python3 - "$mnt/item" "$DOCS" "$SAVES" <<'PY'
import os, sys, time
d, docs, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(docs):
    with open(os.path.join(d, "doc%03d.md" % i), "wb") as f:
        f.write(b"x" * 4095 + b"\n")
syncs = []
start = time.perf_counter()
for i in range(n):
    name = "doc%03d.md" % (i % docs)
    tmp = os.path.join(d, "." + name + ".swp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, (b"%07d" % i) * 585 + b"\n")
    t = time.perf_counter()
    os.fsync(fd)
    syncs.append(time.perf_counter() - t)
    os.close(fd)
    os.rename(tmp, os.path.join(d, name))
wall = time.perf_counter() - start
s = sorted(syncs)
print("%.0f %.0f %.0f %.0f" % (n / wall, syncs[0] * 1e6, s[len(s) // 2] * 1e6,
                               s[len(s) * 9 // 10] * 1e6))
PY
)
	echo "$out $(stat -c %s "$W/store-$2/packetfs.db-wal")"
	ab_umount "$bin" "$2"
}

ab_runs
echo "# editor saves with fsync after a mount: $DOCS documents, $SAVES saves, $RUNS runs," \
	"$(date -u +%FT%TZ)"
ab_table "per run" "saves/s first_us median_us p90_us wal_bytes" "saves/s" \
	"first fsync (µs)" "fsync median (µs)" "fsync p90 (µs)" "WAL file (bytes)"
