#!/usr/bin/env bash
# tests/bench/recipe-cost.sh - what one recipe run costs the daemon, W6's shape, counted rather
# than timed, for two builds in turn in one run. Run on demand, not part of the test suite:
#
#	bash tests/bench/recipe-cost.sh [--items N] [--runs N] BASELINE_BIN [BIN]
#
# BIN defaults to build/cli/packetfs. Each run of each build mounts a new store whose pipeline is
# W6's (the validate stage alone, 10 recipes that exit 0, max_parallel_recipes nproc*2), makes N
# items (default 10) with a plan naming the 10 recipes, then advances them all and waits until
# MNT/events has said done for each (fixtures/bench.py advance). Per recipe, across that advance:
# the daemon's CPU (utime + stime from /proc/PID/stat), the store's write transactions (commits
# of the connection with a commit hook), the git repositories libgit2 opened and the git status
# lists it made (an LD_PRELOAD library, fixtures/count.c, built with cc), and then in a second,
# separate advance under `strace -f -c` the programs the daemon and its children exec'd (execve)
# and the system calls they made (the children's are the same for both builds). Also per recipe:
# the CPU of the daemon's busiest thread (the loop thread, which starts and ends every run one
# after another), and the whole machine's busy and idle CPU (/proc/stat) across the advance,
# which say whether the processors or the loop thread bound the wall time; and the FUSE requests
# the kernel sent to the mount meanwhile, from every process (perf stat of the
# fuse:fuse_request_send tracepoint): the replays of the notifier (notify.h) among them.
# These counts do not move with the machine's load; the wall time is printed too, for what it
# is worth on a busy machine. Builds alternate run by run; the table shows medians.
set -euo pipefail
ITEMS=10 RUNS=3
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "items runs" "$@"
ab_pair
ab_need strace
ab_need perf
TRACER=""
# ab_on_exit : ends the strace of an advance that did not finish.
ab_on_exit()
{
	[ -z "$TRACER" ] || kill "$TRACER" 2>/dev/null || true
}
ab_start
cc -O2 -shared -fPIC -o "$W/count.so" "$ROOT/tests/bench/fixtures/count.c" -ldl
JOBS=$(($(nproc) * 2))
mkdir "$W/recipes"
PLAN=$(printf '# Plan\n\n```validation-recipes\n')
for k in 01 02 03 04 05 06 07 08 09 10; do
	printf '#!/bin/sh\n# summary: exits 0\n# timeout: 600\n# needs: none\nexit 0\n' >"$W/recipes/$k-ok"
	chmod +x "$W/recipes/$k-ok"
	PLAN+=$'\n'"$k-ok"
done
PLAN+=$'\n```\n'

# counts PID : "commits opens status-lists" of PID so far (fixtures/count.c's file).
counts()
{
	python3 - "$W/counts/$1" <<'PY'
import os, struct, sys
p = sys.argv[1]
print(*(struct.unpack("<3Q", open(p, "rb").read(24)) if os.path.exists(p) else (0, 0, 0)))
PY
}

# items MNT FIRST N : makes items r-FIRST ... with the plan; prints their names.
items()
{
	local i
	for ((i = $2; i < $2 + $3; i++)); do
		mkdir "$1/r-$i"
		printf '%s' "$PLAN" >"$1/r-$i/plan.md"
		echo "r-$i"
	done
}

# thread_ticks PID : "TID TICKS" for each thread of PID (utime + stime), sorted by TID.
thread_ticks()
{
	local t s
	for t in /proc/"$1"/task/*; do
		s=$(cat "$t/stat" 2>/dev/null) || continue
		s=${s##*) }
		echo "${t##*/} $(awk '{ print $12 + $13 }' <<<"$s")"
	done | sort
}

# machine_ticks : "BUSY IDLE", the machine's CPU time so far in clock ticks (/proc/stat's cpu
# line: idle and iowait are idle, the rest busy).
machine_ticks()
{
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat
}

# one_run BIN N : one store mounted by BIN; prints "cpu_ms commits opens statuses execs wall_s
# syscalls loop_ms busy_ms idle_ms requests" per recipe (wall: the whole advance).
one_run()
{
	local bin=$1 mnt=$W/mnt-$2 pid names c0 c1 k0 k1 t0 t1 n m0 m1 i0 i1 lp
	cat >"$W/pipeline-$2.json" <<EOF
{"repo": "$W/repo-$2", "base": "main", "recipes_dir": "$W/recipes", "gpus": 0,
 "max_parallel_recipes": $JOBS, "stages": [{"name": "validate", "recipes": "plan"}]}
EOF
	mkdir -p "$W/counts"
	ab_mount PFS_COUNT_DIR="$W/counts" LD_PRELOAD="$W/count.so" "$bin" "$2" \
		--pipeline "$W/pipeline-$2.json"
	pid=$PID
	n=$((ITEMS * 10))
	mapfile -t names < <(items "$mnt" 1 "$ITEMS")
	read -r -a k0 < <(counts "$pid")
	thread_ticks "$pid" >"$W/threads0"
	read -r m0 i0 < <(machine_ticks)
	c0=$(cpu_ticks "$pid") t0=$(date +%s%N)
	perf stat -x, -e fuse:fuse_request_send -a -o "$W/requests-$2" -- \
		python3 "$ROOT/tests/bench/fixtures/bench.py" advance "$mnt" "${names[@]}" >/dev/null
	t1=$(date +%s%N) c1=$(cpu_ticks "$pid")
	read -r m1 i1 < <(machine_ticks)
	thread_ticks "$pid" >"$W/threads1"
	# The busiest thread across the advance (a thread that is new has its whole time).
	lp=$(join -a 2 -e 0 -o 2.1,1.2,2.2 "$W/threads0" "$W/threads1" |
		awk '{ d = $3 - $2; if (d > m) m = d } END { print m + 0 }')
	read -r -a k1 < <(counts "$pid")
	# The execs, in a second advance of new items under strace (it slows what it traces).
	mapfile -t names < <(items "$mnt" $((ITEMS + 1)) "$ITEMS")
	strace -f -qq -c -o "$W/trace-$2" -p "$pid" &
	TRACER=$!
	sleep 1
	python3 "$ROOT/tests/bench/fixtures/bench.py" advance "$mnt" "${names[@]}" >/dev/null
	kill -INT "$TRACER"
	wait "$TRACER" || true
	TRACER=""
	ab_umount "$bin" "$2"
	awk -v n="$n" -v tick="$TICK" -v cpu=$((c1 - c0)) -v wall=$((t1 - t0)) \
		-v cm=$((k1[0] - k0[0])) -v op=$((k1[1] - k0[1])) -v st=$((k1[2] - k0[2])) \
		-v ex="$(awk '$NF == "execve" { print $4 }' "$W/trace-$2")" \
		-v sc="$(awk '$NF == "total" { print $4 }' "$W/trace-$2")" \
		-v lp="$lp" -v busy=$((m1 - m0)) -v idle=$((i1 - i0)) \
		-v rq="$(awk -F, '$3 == "fuse:fuse_request_send" { print $1 }' "$W/requests-$2")" 'BEGIN {
		printf "%.2f %.2f %.2f %.2f %.2f %.2f %.1f %.2f %.2f %.2f %.1f\n", cpu * 1000 / tick / n,
			cm / n, op / n, st / n, ex / n, wall / 1e9, sc / n, lp * 1000 / tick / n,
			busy * 1000 / tick / n, idle * 1000 / tick / n, rq / n }'
	rm -f "$W/trace-$2" "$W/requests-$2"
}

ab_runs
echo "# per recipe run, W6's shape: $ITEMS items x 10 recipes, $RUNS runs, $(nproc) CPUs, $(date -u +%FT%TZ)"
ab_table "per recipe" \
	"cpu_ms commits opens statuses execs wall_s syscalls loop_ms busy_ms idle_ms requests" \
	"daemon CPU ms" "store commits" "git repository opens" "git status lists" \
	"execve (daemon and children)" "wall s of the whole advance" \
	"system calls (daemon and children)" "the loop thread's CPU ms" \
	"the machine's busy CPU ms" "the machine's idle CPU ms" \
	"FUSE requests (every process)"
