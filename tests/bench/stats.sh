#!/usr/bin/env bash
# tests/bench/stats.sh - does the statistic of measured recipes (docs/measure.md) hold up? An
# on-demand study, not part of the test suite: tests/run.sh and CI never run it.
#
#	bash tests/bench/stats.sh [--slow N] [--noop N] [--repeat N] [--warmup K] [--verify P]
#	                          [--out FILE]
#
#   --slow N     trials of a change that makes the benchmark 10% slower (default 20)
#   --noop N     trials of a no-op change, a comment (default 20)
#   --repeat N   the recipe's "# repeat:", runs a side that count (default 10)
#   --warmup K   the recipe's "# warmup:" (default 1)
#   --verify P   base/slow pairs of the long run that measures the slowdown's true size,
#                and runs a command of hyperfine's long run (default 200)
#   --out FILE   the report (default tests/bench/results/<date>-<host>-stats.md, never
#                overwritten: -2, -3, ...)
#
# Everything goes through the product: a git repository holding examples/sample-project, a
# packetfs store over it mounted with a pipeline of three stages (plan names the recipe, change
# commits the trial's change, validate runs the recipe), and the shipped recipe
# recipes/07-bench.sh (`make bench`, its METRIC count_char_ns_per_byte) with "# repeat: N",
# "# warmup: K" and "# budget: count_char_ns_per_byte +0%". A trial is one item (mkdir
# slow-I or noop-I, then ctl advance): fixtures/stats_change.sh commits its change, and the
# engine runs the recipe at the item's base and head, alternating, in clean checkouts. The
# trials run one after another, slow and no-op interleaved so that the machine's drift falls
# on both kinds. Then:
#
# FLAGGED means: the recipe's own registry line at the head is "failing", i.e. the budget
# "+0%" failed, i.e. the engine's 95% interval of head/base lies wholly above 1.
#
# The report (fixtures/stats_report.py) gives, from the registry's raw numbers: (a) the
# detection rate of the 10% slowdown and, recomputing the engine's own statistic
# (fixtures/stats_engine.c, linked against build/engine/libpacketfs-engine.a) on the first n
# runs a side of each batch (what "# repeat: n" would have counted), the smallest n that
# detects it in every trial; (b) the false alarms over the no-op trials; the decision rules of
# asv continuous, pyperf compare_to and hyperfine's welch_ttest.py on the same samples
# (fixtures/stats_rules.py); the slowdown's true size from a long alternating run of the two
# built benchmark programs; hyperfine itself (installed with apt-get when missing) on the
# base/slow and base/no-op pairs (--repeat runs each, as the recipe), and on base/slow with
# --verify runs each, with the rules and the engine's statistic on its samples.
#
# Duration, measured on two shared cores at load 4-16: 2-12 s a trial at --repeat 10 (both
# checkouts build, then 2*(K+N) runs of ~30 ms and the engine's bookkeeping); the default form
# (40 trials) took 3-5 minutes, the long run and hyperfine about a minute more. Quick form:
# --slow 3 --noop 3 --repeat 5 --verify 20 (about 25 s).
#
# Environment: PACKETFS_BIN overrides the binary (default build/cli/packetfs); the study never
# builds packetfs, but needs build/engine/libpacketfs-engine.a of the same build for its helper.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
SLOW=20 NOOP=20 REPEAT=10 WARMUP=1 VERIFY=200 OUT=""
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--slow) SLOW=$2; shift 2 ;;
	--noop) NOOP=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--warmup) WARMUP=$2; shift 2 ;;
	--verify) VERIFY=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "packetfs: stats.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$SLOW" "$NOOP" "$REPEAT" "$WARMUP" "$VERIFY"; do
	[[ "$v" =~ ^[0-9]+$ ]] || { echo "packetfs: stats.sh: '$v': not a whole number" >&2; exit 2; }
done
[ "$REPEAT" -ge 2 ] || { echo "packetfs: stats.sh: --repeat must be 2 or more" >&2; exit 2; }
[ "$VERIFY" -ge 2 ] || { echo "packetfs: stats.sh: --verify must be 2 or more" >&2; exit 2; }

# The integration tests' helpers: $T, mounts, the EXIT trap that undoes them, pipeline_json.
export PFS_WAIT_BOUND=$((600 + 10 * (REPEAT + WARMUP)))
# shellcheck source=../lib.sh
. "$BENCH_DIR/../lib.sh"
LIB=$ROOT/build/engine/libpacketfs-engine.a
[ -x "$PFS" ] || fail "no packetfs binary at $PFS (build it first)"
[ -f "$LIB" ] || fail "no $LIB (build packetfs first)"
command -v hyperfine >/dev/null ||
	{ ${SUDO:-$( [ "$(id -u)" = 0 ] || echo sudo)} apt-get install -y -q hyperfine >/dev/null 2>&1 &&
		command -v hyperfine >/dev/null; } || fail "hyperfine is missing and apt-get could not install it"

START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
cc -O2 -I"$ROOT/engine/util" -I"$ROOT/engine/format" -o "$T/stats_engine" \
	"$BENCH_DIR/fixtures/stats_engine.c" "$LIB" -lcjson -lcrypto -lm ||
	fail "the helper stats_engine did not build"

# The repository: the sample project on main.
REPO=$T/repo/work ORIGIN=$T/repo/origin.git
mkdir -p "$REPO"
cp -r "$ROOT/examples/sample-project/." "$REPO/"
git init -q -b main "$REPO"
git -C "$REPO" add -A
git -C "$REPO" commit -q -m "the sample project"
git clone -q --bare "$REPO" "$ORIGIN"
git -C "$REPO" remote add origin "$ORIGIN"

# The shipped recipe, with the study's repeat, warmup and budget.
RECIPES=$T/recipes
mkdir -p "$RECIPES"
sed -e "s/^# repeat: .*/# repeat: $REPEAT/" -e "s/^# warmup: .*/# warmup: $WARMUP/" \
	-e 's/^# measure: base$/&\n# budget: count_char_ns_per_byte +0%/' \
	"$ROOT/recipes/07-bench.sh" >"$RECIPES/07-bench.sh"
chmod +x "$RECIPES/07-bench.sh"
grep -q '^# budget: count_char_ns_per_byte +0%' "$RECIPES/07-bench.sh" || fail "recipe edit failed"

change=$(printf '{"name": "change", "run": %s, "produces": ["change.md"]}' \
	"$(argv_json /bin/bash "$BENCH_DIR/fixtures/stats_change.sh")")
pipeline_with "$T/pipeline.json" "$(plan_stage 07-bench)" "$change" "$(validate_stage)"
make_store "$T/pipeline.json"
mount_store

# verdict_line ITEM : true once ITEM's registry has the recipe's own line (no "side").
verdict_line()
{
	python3 - "$M/$1/validation/registry.jsonl" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("recipe") == "07-bench" and "side" not in o and o.get("status") != "running":
        sys.exit(0)
sys.exit(1)
EOF
}

# collect ITEM KIND SECONDS : appends the trial's raw record to $T/raw.jsonl.
collect()
{
	python3 - "$M/$1/validation/registry.jsonl" "$1" "$2" "$3" "$(cut -d' ' -f1 /proc/loadavg)" \
		>>"$T/raw.jsonl" <<'EOF'
import json, sys
reg, item, kind, secs, load = sys.argv[1:]
rec = {"item": item, "kind": kind, "ms": int(secs), "load1": float(load),
       "order": [], "base": [], "head": [], "warmup": []}
for l in open(reg):
    o = json.loads(l)
    if o.get("recipe") != "07-bench":
        continue
    if "side" in o:
        v = o["metrics"]["count_char_ns_per_byte"]["value"]
        if "warmup run, discarded" in o.get("note", ""):
            rec["warmup"].append([o["side"], v])
        else:
            rec["order"].append(o["side"])
            rec[o["side"]].append(v)
            rec[o["side"] + "_commit"] = o["head"]
    elif o.get("status") != "running":
        rec["status"], rec["note"] = o["status"], o.get("note", "")
print(json.dumps(rec))
EOF
}

# The trials, slow and no-op interleaved (a slow one whenever it is behind its share).
: >"$T/raw.jsonl"
s=0 n=0
while [ $((s + n)) -lt $((SLOW + NOOP)) ]; do
	if [ "$s" -lt "$SLOW" ] && { [ "$n" -ge "$NOOP" ] || [ $((s * (SLOW + NOOP))) -le $(((s + n) * SLOW)) ]; }; then
		s=$((s + 1)); item=slow-$s kind=slow
	else
		n=$((n + 1)); item=noop-$n kind=noop
	fi
	t0=$(date +%s%N)
	new_item "$item"
	ctl "$M" "$item" advance
	wait_for verdict_line "$item"
	collect "$item" "$kind" $((($(date +%s%N) - t0) / 1000000))
	printf '%s: %s in %s\n' "$item" "$(tail -n 1 "$T/raw.jsonl" | python3 -c \
		'import json,sys; o=json.load(sys.stdin); print(o["status"], "-", o["note"][:90])')" \
		"$((($(date +%s%N) - t0) / 1000000)) ms" >&2
done
TRIALS_END=$(date +%s)
# The engine's own words for its statistic: the closing line of measurements.md.
STATISTIC=$(grep -m 1 '^The interval is' "$M/$item/validation/measurements.md" || echo unknown)

# The slowdown's true size: the two programs built once, run alternately VERIFY times each;
# then hyperfine on base/slow and base/no-op.
commit_of() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["item"] == sys.argv[2]: print(o[sys.argv[3] + "_commit"])' "$T/raw.jsonl" "$1" "$2"; }
build_at() {
	mkdir -p "$T/v-$1"
	git -C "$REPO" archive "$2" | tar -x -C "$T/v-$1"
	make -s -C "$T/v-$1" bench-strkit >/dev/null || fail "make bench-strkit at $2 failed"
}
metric() { "$T/v-$1/bench-strkit" | sed -n 's/^METRIC count_char_ns_per_byte \([0-9.]*\) .*/\1/p'; }
: >"$T/verify.txt"
if [ "$SLOW" -gt 0 ]; then
	build_at base "$(commit_of slow-1 base)"
	build_at slow "$(commit_of slow-1 head)"
	for ((i = 0; i < VERIFY; i++)); do
		printf 'base %s\nslow %s\n' "$(metric base)" "$(metric slow)" >>"$T/verify.txt"
	done
	hf=(hyperfine --style basic --warmup 1 --runs "$REPEAT")
	(cd "$T" && "${hf[@]}" --export-json "$T/hf-slow.json" -n base ./v-base/bench-strkit \
		-n head ./v-slow/bench-strkit) >"$T/hf-slow.txt" 2>&1 || fail "hyperfine failed"
	# hyperfine as long as the long run: what its wall times need to see the change.
	(cd "$T" && hyperfine --style basic --warmup 1 --runs "$VERIFY" --export-json "$T/hf-long.json" \
		-n base ./v-base/bench-strkit -n head ./v-slow/bench-strkit) >"$T/hf-long.txt" 2>&1 ||
		fail "hyperfine failed"
	if [ "$NOOP" -gt 0 ]; then
		build_at noop "$(commit_of noop-1 head)"
		(cd "$T" && "${hf[@]}" --export-json "$T/hf-noop.json" -n base ./v-base/bench-strkit \
			-n head ./v-noop/bench-strkit) >"$T/hf-noop.txt" 2>&1 || fail "hyperfine failed"
	fi
fi

cat >"$T/meta.json" <<EOF
{"date": "$(date -u '+%Y-%m-%d %H:%M UTC')", "host": "$(hostname)", "nproc": $(nproc),
 "cpu": $(json_escape "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"),
 "mem": $(json_escape "$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"),
 "kernel": $(json_escape "$(uname -r)"),
 "packetfs": $(json_escape "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"),
 "slow": $SLOW, "noop": $NOOP, "repeat": $REPEAT, "warmup": $WARMUP, "verify": $VERIFY,
 "load_start": "$LOAD0", "load_end": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "trials_s": $((TRIALS_END - START)), "total_s": $(($(date +%s) - START)),
 "hyperfine": $(json_escape "$(hyperfine --version)"),
 "statistic": $(json_escape "$STATISTIC")}
EOF
if [ -z "$OUT" ]; then
	OUT=$BENCH_DIR/results/$(date -u +%F)-$(hostname)-stats.md
	i=2
	while [ -e "$OUT" ]; do OUT=${OUT%-stats*.md}-stats-$i.md; i=$((i + 1)); done
fi
python3 "$BENCH_DIR/fixtures/stats_report.py" "$T" "$T/stats_engine" >"$OUT" ||
	fail "the report failed"
cat "$OUT"
echo "report: $OUT" >&2
