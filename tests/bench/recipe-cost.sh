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
# and the system calls they made (the children's are the same for both builds).
# These counts do not move with the machine's load; the wall time is printed too, for what it
# is worth on a busy machine. Builds alternate run by run; the table shows medians.
set -euo pipefail
ITEMS=10 RUNS=3
# shellcheck source=ab.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab.sh"
ab_args "items runs" "$@"
ab_pair
ab_need strace
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

# one_run BIN N : one store mounted by BIN; prints "cpu_ms commits opens statuses execs wall_s
# syscalls"
# per recipe (wall: the whole advance).
one_run()
{
	local bin=$1 mnt=$W/mnt-$2 pid names c0 c1 k0 k1 t0 t1 n
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
	c0=$(cpu_ticks "$pid") t0=$(date +%s%N)
	python3 "$ROOT/tests/bench/fixtures/bench.py" advance "$mnt" "${names[@]}" >/dev/null
	t1=$(date +%s%N) c1=$(cpu_ticks "$pid")
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
		-v sc="$(awk '$NF == "total" { print $4 }' "$W/trace-$2")" 'BEGIN {
		printf "%.2f %.2f %.2f %.2f %.2f %.2f %.1f\n", cpu * 1000 / tick / n, cm / n, op / n,
			st / n, ex / n, wall / 1e9, sc / n }'
	rm -f "$W/trace-$2"
}

ab_runs
echo "# per recipe run, W6's shape: $ITEMS items x 10 recipes, $RUNS runs, $(nproc) CPUs, $(date -u +%FT%TZ)"
ab_table "per recipe" "cpu_ms commits opens statuses execs wall_s syscalls" \
	"daemon CPU ms" "store commits" "git repository opens" "git status lists" \
	"execve (daemon and children)" "wall s of the whole advance" \
	"system calls (daemon and children)"
