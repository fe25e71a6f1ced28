#!/usr/bin/env bash
# tests/bench/big-docs.sh - what large documents cost, for two builds in turn in one run: the
# side of the store's page size that the write rows do not show (each page of a large document
# is a page to write, checkpoint and read). Run on demand, not part of the test suite:
#
#	bash tests/bench/big-docs.sh [--mib N] [--saves N] [--logmib N] [--appends N] [--runs N]
#		BASELINE_BIN [BIN]
#
# BIN defaults to build/cli/packetfs. Each run of each build mounts a new store with one item
# and measures, each on its own: `cp` of a file of N MiB (default 64) of random bytes from the
# local disk into the item; after a remount, the first `cat` of it (read from the store) and
# a second one; a 1 MiB text document (base64 of random bytes, 1.3 MiB) saved --saves times
# (default 100) by `sed -i`, one line changed each (read, a temporary file written whole,
# renamed over it: one revision each); --appends `>>` (default 500) of an 86-byte JSON line,
# one shell redirection each (one revision each), onto a document of --logmib MiB (default 8)
# copied in first: what a growing log costs a line once it is large. Wall milliseconds of
# each, and the daemon's CPU milliseconds of the copy, the saves and the appends. Builds
# alternate run by run (default 3 runs); the table shows the medians (ab_table), the raw values
# follow.
set -euo pipefail
MIB=64 SAVES=100 LOGMIB=8 APPENDS=500 RUNS=3
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "mib saves logmib appends runs" "$@"
ab_pair
ab_start
head -c $((MIB << 20)) /dev/urandom >"$W/big.bin"
head -c 1048576 /dev/urandom | base64 >"$W/doc.md"
# The line of the appends, 86 bytes with its number.
LINE='{"recipe":"99-manual","status":"validated","note":"step %06d of the log, appended"}\n'
# The log: lines of base64, LOGMIB MiB to the byte, its last line ended.
head -c $((LOGMIB << 20)) /dev/urandom | base64 -w 85 >"$W/log.b64"
{ head -c $(((LOGMIB << 20) - 1)) "$W/log.b64" && echo; } >"$W/log.jsonl"
rm "$W/log.b64"

# ms : the monotonic clock in milliseconds.
ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# one_run BIN N : a store mounted by BIN (directories numbered N), measured; prints
# "cp_ms cp_cpu_ms cold_cat_ms warm_cat_ms save_ms save_cpu_ms append_ms append_cpu_ms"; the
# daemon has exited when it returns.
one_run()
{
	local bin=$1 n=$2 mnt=$W/mnt-$2 t0 t1 c0 c1 cp cpc cold warm i
	ab_mount "$bin" "$n"
	mkdir "$mnt/item"
	c0=$(cpu_ticks "$PID") t0=$(ms)
	cp "$W/big.bin" "$mnt/item/big.bin"
	t1=$(ms) c1=$(cpu_ticks "$PID")
	cp=$((t1 - t0)) cpc=$(((c1 - c0) * 1000 / TICK))
	"$bin" umount "$mnt"
	ab_wait_gone "$PID"
	"$bin" mount "$W/store-$n" "$mnt"
	PID=$(pgrep -f -- " mount $W/store-$n $mnt\$" | head -n 1)
	t0=$(ms)
	cat "$mnt/item/big.bin" >/dev/null
	t1=$(ms)
	cold=$((t1 - t0))
	cat "$mnt/item/big.bin" >/dev/null
	warm=$(($(ms) - t1))
	cmp -s "$W/big.bin" "$mnt/item/big.bin" || ab_die "$bin: big.bin reads back changed"
	cp "$W/doc.md" "$mnt/item/doc.md"
	c0=$(cpu_ticks "$PID") t0=$(ms)
	for ((i = 1; i <= SAVES; i++)); do
		sed -i "${i}s/^/x/" "$mnt/item/doc.md"
	done
	t1=$(ms) c1=$(cpu_ticks "$PID")
	save="$((t1 - t0)) $(((c1 - c0) * 1000 / TICK))"
	cp "$W/log.jsonl" "$mnt/item/log.jsonl"
	c0=$(cpu_ticks "$PID") t0=$(ms)
	for ((i = 1; i <= APPENDS; i++)); do
		printf "$LINE" "$i" >>"$mnt/item/log.jsonl"
	done
	t1=$(ms) c1=$(cpu_ticks "$PID")
	[ "$(stat -c %s "$mnt/item/log.jsonl")" -eq $(((LOGMIB << 20) + 86 * APPENDS)) ] ||
		ab_die "$bin: log.jsonl has not the size of its appends"
	echo "$cp $cpc $cold $warm $save $((t1 - t0)) $(((c1 - c0) * 1000 / TICK))"
	ab_umount "$bin" "$n"
}

ab_runs
echo "# large documents: a copy of $MIB MiB, its first and second read, $SAVES sed -i of a" \
	"1.3 MiB document, $APPENDS >> of a line onto a $LOGMIB MiB document; $RUNS runs," \
	"$(date -u +%FT%TZ)"
ab_table measure "cp cp_cpu cold_cat warm_cat saves saves_cpu appends appends_cpu" "cp, ms" \
	"cp, daemon CPU ms" "first cat, ms" "second cat, ms" "saves, ms" "saves, daemon CPU ms" \
	"appends, ms" "appends, daemon CPU ms"
