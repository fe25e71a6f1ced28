#!/usr/bin/env bash
# tests/bench/fuse-requests.sh - the FUSE requests each shape of use sends, by opcode, and the
# daemon's CPU time for it, for packetfs builds and for bindfs over the same files, in one run.
# Run on demand (root: it counts with the kernel's fuse:fuse_request_send tracepoint through
# perf), not part of the test suite:
#
#	bash tests/bench/fuse-requests.sh [--items N] [--files N] [--shapes 'S ...'] [BIN ...]
#
# BIN defaults to build/cli/packetfs; with several, each is measured in turn (A/B of builds).
# Shapes: py-create (--files files made by Python os.open, os.write of 4 KiB, os.close),
# sh-append (--files lines appended with `>>` from a bash loop, one open per line),
# sh-open-close (the same loop's `>>` with nothing written: the open and the closes alone, what a
# `>>` costs before its write and its commit), sh-held
# (--files lines written by echo in a bash loop whose output is appended with one `>>` to a
# document made before it: one open, a write per line),
# editor-save (--files / 10 saves: write a temporary file, fsync, rename it over the
# document), find-stat (`find -type f -exec stat {} +` over a tree of --items items, warm),
# ls-lR (`ls -lR` of that tree, warm), grep-r (`grep -r` of that tree, warm, W3), ls-l (`ls -l`
# of the root, warm, W8's), read (`cat` of a document of --files x 64 KiB, 3 times,
# after one untimed pass), probe (what a compiler does with its include path: 5 rounds of a
# stat of each of --files / 5 names that do not exist, a fifth of them below a directory that
# does not exist either), cat-files (one `cat` of every file py-create made, twice: an open and
# a close of each; py-create must come before it in --shapes), rsync (`rsync -a` of the first
# --files files of this repository's HEAD, from the local disk into a new directory: a temp name
# per file, its mode and times set, a rename; W13's shape). The tree: --items items (default
# 250) of brief.md and plan.md each, made through the mount; bindfs serves `cp -r` of the
# mount's items. The counts are the requests the kernel sent to that mount while the shape ran
# (every process, so background requests count too), with the median of each opcode's
# latencies in µs (from the kernel's send of a request to its end, fuse:fuse_request_end: the
# daemon's reply, waiting for a CPU included); cpu ms is the daemon's utime + stime
# (/proc/PID/stat).
set -euo pipefail
ITEMS=250 FILES=500 SHAPES="py-create sh-append editor-save read probe cat-files find-stat ls-lR"
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "items files shapes" "$@"
BINS=("${ARGS[@]}")
[ ${#BINS[@]} -gt 0 ] || BINS=("$ROOT/build/cli/packetfs")
ab_bins
ab_need perf bindfs
ab_start

# shape NAME DIR : runs the shape NAME in DIR (a document directory, or the tree's root).
shape()
{
	local d=$2 i n=$FILES
	case "$1" in
	py-create)
		python3 - "$d/many" "$n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
buf = b"x" * 4096
for i in range(n):
    fd = os.open(os.path.join(d, "f%05d.txt" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, buf)
    os.close(fd)
PY
		;;
	sh-append)
		for ((i = 0; i < n; i++)); do
			echo "{\"seq\": $i, \"what\": \"a line of a log\"}" >>"$d/many/log.jsonl"
		done
		;;
	sh-open-close)
		echo "{}" >>"$d/many/touched.jsonl" # made first, as sh-append's log is after its first line
		for ((i = 0; i < n; i++)); do
			printf '' >>"$d/many/touched.jsonl"
		done
		;;
	sh-held)
		echo "{}" >>"$d/many/held.jsonl" # made first: the loop's `>>` opens a document
		for ((i = 0; i < n; i++)); do
			echo "{\"seq\": $i, \"what\": \"a line of a log\"}"
		done >>"$d/many/held.jsonl"
		;;
	editor-save)
		python3 - "$d/many" "$((n / 10))" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
doc = os.path.join(d, "notes.md")
for i in range(n):
    tmp = os.path.join(d, ".notes.md.swp")
    with open(tmp, "w") as f:
        f.write("# notes\n\nsave %d\n" % i)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, doc)
PY
		;;
	read)
		[ -e "$d/many/big.bin" ] || head -c $((n * 65536)) /dev/zero >"$d/many/big.bin"
		for i in 1 2 3; do
			cat "$d/many/big.bin" >/dev/null
		done
		;;
	probe)
		mkdir -p "$d/many/include"
		python3 - "$d/many/include" "$((n / 5))" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
names = [("bits/h%d.h" if i % 5 == 0 else "h%d.h") % i for i in range(n)]
for r in range(5):
    for name in names:
        try:
            os.stat(os.path.join(d, name))
        except FileNotFoundError:
            pass
PY
		;;
	rsync) rsync -a "$RSYNC_SRC/" "$d/many/rsync-$RANDOM/" ;;
	cat-files)
		cat "$d"/many/f*.txt >/dev/null 2>&1 || true
		cat "$d"/many/f*.txt >/dev/null 2>&1 || true
		;;
	find-stat) find "$d" -type f -exec stat {} + >/dev/null 2>&1 || true ;;
	ls-lR) ls -lR "$d" >/dev/null 2>&1 || true ;;
	grep-r) grep -r -c '"zz"' "$d" >/dev/null 2>&1 || true ;;
	ls-l) ls -l "$d" >/dev/null 2>&1 || true ;;
	esac
}

# measure TARGET MNT PID DIR : each shape once (find-stat and ls-lR after an untimed pass),
# counting the requests sent to MNT and the CPU of PID; prints "TARGET SHAPE CPU_MS OP=N ...".
measure()
{
	local target=$1 mnt=$2 pid=$3 dir=$4 dev s c0 c1
	dev=$(mountpoint -d "$mnt")
	dev=$((${dev%%:*} << 20 | ${dev##*:}))
	for s in $SHAPES; do
		case $s in find-stat | ls-lR | grep-r | ls-l | read) shape "$s" "$dir" ;; esac
		c0=$(cpu_ticks "$pid")
		perf record -q -a -e fuse:fuse_request_send --filter "connection == $dev" \
			-e fuse:fuse_request_end --filter "connection == $dev" \
			-o "$W/perf.data" -- \
			bash -c "$(declare -f shape); FILES=$FILES RSYNC_SRC='$W/rsync-src' shape $s '$dir'" \
			>/dev/null 2>&1
		c1=$(cpu_ticks "$pid")
		perf script -i "$W/perf.data" -F time,event,trace 2>/dev/null |
			python3 -c "$OPS_PY" "$target" "$s" $(((c1 - c0) * 1000 / TICK))
	done
}

# perf script lines of fuse_request_send and _end on stdin; prints "TARGET SHAPE CPU_MS OP=N ...
# | OP=MEDIAN ...": the requests of each opcode and the median of their latencies, in µs, from the
# send to the end (the daemon's reply, or the kernel's end of a request it answers alone).
OPS_PY='
import re, sys, collections
sent, counts, lat = {}, collections.Counter(), collections.defaultdict(list)
for line in sys.stdin:
    m = re.search(r"([0-9]+[.][0-9]+):\s+fuse:fuse_request_(send|end):.*req ([0-9]+)(?: opcode [0-9]+ [(]FUSE_([A-Z_0-9]+)[)])?", line)
    if not m:
        continue
    t, kind, req, op = float(m.group(1)), m.group(2), m.group(3), m.group(4)
    if kind == "send":
        sent[req] = (t, op)
        counts[op] += 1
    elif req in sent:
        t0, op = sent.pop(req)
        lat[op].append((t - t0) * 1e6)
ops = sorted(counts)
med = lambda v: sorted(v)[len(v) // 2]
print(sys.argv[1], sys.argv[2], sys.argv[3], " ".join("%s=%d" % (o, counts[o]) for o in ops),
      "|", " ".join("%s=%.0f" % (o, med(lat[o])) for o in ops if lat[o]))
'

# rsync's source, when the shape is asked for: the first --files files of HEAD, on disk.
case " $SHAPES " in
*" rsync "*)
	mkdir "$W/rsync-src"
	# (sed, not head: it reads to the end, so git gets no SIGPIPE to fail the pipeline)
	git -C "$ROOT" ls-files | sed -n "1,${FILES}p" |
		tar -C "$ROOT" -cf - --no-recursion -T - | tar -C "$W/rsync-src" -xf -
	;;
esac
TREE_SHAPES=$(for s in $SHAPES; do case $s in find-stat | ls-lR | grep-r | ls-l) echo "$s" ;; esac; done)
k=0
for bin in "${BINS[@]}"; do
	mnt=$W/mnt-$k
	ab_mount "$bin" "$k"
	pid=$PID
	ab_items "$mnt" "$ITEMS"
	if [ $k -eq 0 ]; then
		mkdir "$W/plain"
		for ((i = 1; i <= ITEMS; i++)); do
			cp -r "$mnt/item-$i" "$W/plain/" 2>/dev/null || true
		done
	fi
	mkdir "$mnt/item-1/many"
	measure "packetfs-$k" "$mnt" "$pid" "$mnt/item-1" >>"$W/raw"
	SHAPES=$TREE_SHAPES measure "packetfs-$k" "$mnt" "$pid" "$mnt" >>"$W/raw.tree"
	ab_umount "$bin" "$k"
	k=$((k + 1))
done
mkdir "$W/bindfs" "$W/plain/item-1/many"
bindfs "$W/plain" "$W/bindfs"
MNTS+=("$W/bindfs")
pid=$(pgrep -f -x "bindfs $W/plain $W/bindfs" | head -n 1)
measure bindfs "$W/bindfs" "$pid" "$W/bindfs/item-1" >>"$W/raw"
SHAPES=$TREE_SHAPES measure bindfs "$W/bindfs" "$pid" "$W/bindfs" >>"$W/raw.tree"
fusermount3 -u "$W/bindfs"

echo "# FUSE requests by opcode: $ITEMS items, $FILES files, $(nproc) CPUs, $(date -u +%FT%TZ)"
for ((k = 0; k < ${#BINS[@]}; k++)); do
	echo "# packetfs-$k: ${BINS[k]}"
done
echo "# shapes in item-1 (py-create, sh-append, editor-save, and find-stat, ls-lR of one item),"
echo "# then find-stat and ls-lR of the whole tree (marked 'tree')"
echo "| target | shape | daemon cpu ms | requests | by opcode | median µs by opcode |"
echo "|---|---|--:|--:|---|---|"
{
	cat "$W/raw"
	sed 's/^\([^ ]*\) \([^ ]*\)/\1 tree-\2/' "$W/raw.tree"
} | sort -k2,2 -s | awk '{ n = 0; ops = ""; lat = ""; side = 0
	for (i = 4; i <= NF; i++) {
		if ($i == "|") { side = 1; continue }
		if (side) { lat = lat " " $i; continue }
		split($i, a, "="); n += a[2]; ops = ops " " $i
	}
	printf "| %s | %s | %s | %d |%s |%s |\n", $1, $2, $3, n, ops, lat }'
