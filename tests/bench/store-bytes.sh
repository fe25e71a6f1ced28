#!/usr/bin/env bash
# tests/bench/store-bytes.sh - what the daemon writes per change, for two builds in turn in one
# run: bytes handed to write(2) (wchar of /proc/PID/io: the WAL's frames, the checkpoints'
# copies into the database file, anything else), bytes sent to the disk (write_bytes) and
# CPU time, per operation. Load-independent: the counts do not move with the machine's load.
# Run on demand, not part of the test suite:
#
#	bash tests/bench/store-bytes.sh [--ops N] [--runs N] BASELINE_BIN [BIN]
#
# BIN defaults to build/cli/packetfs. Each run of each build mounts a new store with one item
# and, each measured on its own: N creates of a 4 KiB file in one directory (python, one
# open-write-close each: W4's shape); N appends of a 52-byte line to one document (a bash
# loop, `printf ... >>F`, one open-write-close each: W9's); N editor saves of a 4 KiB document
# (write .NAME.swp, fsync, rename over NAME: W4's); N `mv` of a 256 KiB document; N appends of
# a registry line to validation/registry.jsonl (W5's). Each measure ends with the WAL checkpointed (the daemon's
# checkpointer, or a last sync), so that the checkpoints' writes count. Builds alternate run by
# run; the table shows the medians.
set -euo pipefail
OPS=1000 RUNS=1
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "ops runs" "$@"
ab_pair
ab_start

# counters PID : "WCHAR WRITE_BYTES CPU_TICKS" of PID.
counters()
{
	echo "$(awk '/^wchar:/ { w = $2 } /^write_bytes:/ { b = $2 } END { print w, b }' \
		"/proc/$1/io") $(cpu_ticks "$1")"
}

# measure NAME PID MNT CMD... : runs CMD, then a sync of MNT and a pause for the checkpointer;
# prints "NAME WCHAR_PER_OP WRITE_BYTES_PER_OP CPU_US_PER_OP".
measure()
{
	local name=$1 pid=$2 mnt=$3 a b
	shift 3
	read -r -a a <<<"$(counters "$pid")"
	"$@" >/dev/null
	sync -f "$mnt/item"
	sleep 1
	read -r -a b <<<"$(counters "$pid")"
	echo "$name $(((b[0] - a[0]) / OPS)) $(((b[1] - a[1]) / OPS))" \
		"$(((b[2] - a[2]) * 1000000 / TICK / OPS))"
}

creates()
{
	python3 - "$1" "$OPS" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 4095 + b"\n"
for i in range(n):
    fd = os.open(os.path.join(d, "f%05d.txt" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)
PY
}

appends()
{
	local i
	for ((i = 0; i < OPS; i++)); do
		printf 'line %05d of the log, fifty-two bytes long: abcdef\n' "$i" >>"$1"
	done
}

saves()
{
	python3 - "$1" "$OPS" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
base = bytearray(b"x" * 4095 + b"\n")
for i in range(n):
    base[(i * 100) % 4000:(i * 100) % 4000 + 7] = b"changed"
    tmp = os.path.join(d, ".doc.md.swp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, base)
    os.fsync(fd)
    os.close(fd)
    os.rename(tmp, os.path.join(d, "doc.md"))
PY
}

# A rename of a 256 KiB document back and forth (mv), one per operation.
moves()
{
	local i
	head -c 262144 /dev/zero | tr '\0' 'm' >"$1/a.bin"
	for ((i = 0; i < OPS; i++)); do
		if ((i % 2 == 0)); then mv "$1/a.bin" "$1/b.bin"; else mv "$1/b.bin" "$1/a.bin"; fi
	done
}

registry()
{
	local i
	for ((i = 0; i < OPS; i++)); do
		printf '{"recipe":"99-manual","status":"validated","note":"%d"}\n' "$i" >>"$1"
	done
}

# one_run BIN N : a store mounted by BIN (directories numbered N), measured; the daemon has
# exited when it returns.
one_run()
{
	local bin=$1 mnt=$W/mnt-$2
	ab_mount "$bin" "$2"
	mkdir "$mnt/item" "$mnt/item/many"
	printf '# Item\n' >"$mnt/item/brief.md"
	measure create "$PID" "$mnt" creates "$mnt/item/many"
	measure append "$PID" "$mnt" appends "$mnt/item/log.md"
	measure save "$PID" "$mnt" saves "$mnt/item"
	measure mv "$PID" "$mnt" moves "$mnt/item"
	measure registry "$PID" "$mnt" registry "$mnt/item/validation/registry.jsonl"
	ab_umount "$bin" "$2"
}

ab_runs
echo "# bytes written per operation: $OPS operations each, $RUNS runs, $(date -u +%FT%TZ)"
echo "# A: ${BINS[0]}"
echo "# B: ${BINS[1]}"
python3 - "$W/raw" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| per operation | A wchar B | B wchar B | A disk B | B disk B | A cpu us | B cpu us |")
print("|---|---|---|---|---|---|---|")
for n in ("create", "append", "save", "mv", "registry"):
    m = [[statistics.median(int(r[c]) for r in rows if r[0] == k and r[1] == n)
          for k in "01"] for c in (2, 3, 4)]
    print("| %s | %d | %d | %d | %d | %d | %d |" % (n, m[0][0], m[0][1], m[1][0], m[1][1],
                                                   m[2][0], m[2][1]))
PY
