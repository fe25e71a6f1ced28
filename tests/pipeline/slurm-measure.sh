#!/usr/bin/env bash
# A measured recipe (# measure: base, one GPU) on the slurm executor: every run of the batch,
# warmups included, is a Slurm job of its own, alternating base and head in their checkouts;
# every job after the first is pinned to the first one's node (--nodelist); each run's registry
# line has its side, its job id and the GPU Slurm granted, and the recipe's own line, last, is
# the verdict, with measurements.md. Then a cancel during a head run: that job is cancelled in
# Slurm, no further job is submitted, the recipe's line is cancelled naming the run, the
# checkouts are removed. Then a head run past its timeout: its job is cancelled, the run and the
# recipe's line are timed_out.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
. "$TESTS_DIR/lib_measure.sh"
need_slurm
copy_recipes slurm
bench_recipe '# gpus: 1' '# measure: base' '# warmup: 1' '# repeat: 2' \
	'echo "visible: $CUDA_VISIBLE_DEVICES"'
slurm_item 07-bench
base=$(git -C "$REPO" rev-parse main)

ctl "$M" fix-1 advance
wait_for verdict_is pass
head=$(status_field "$M" fix-1 head)
assert_order 3 "$base" "$head"
lines=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["recipe"] == "07-bench":
        print(o.get("side", "-"), o["head"][:12], o["status"], o["executor"], o["gpus"],
              "warmup" in o["note"])
' "$r")
assert_eq "base ${base:0:12} validated slurm [0] True
head ${head:0:12} validated slurm [0] True
base ${base:0:12} validated slurm [0] False
head ${head:0:12} validated slurm [0] False
base ${base:0:12} validated slurm [0] False
head ${head:0:12} validated slurm [0] False
- ${head:0:12} validated slurm [] False" "$lines" "registry lines of 07-bench (side, head, status, executor, gpus, warmup)"
# One job a run, all known to Slurm as completed; the first placed by Slurm, the others pinned
# to its node.
ids=$(python3 -c '
import json, sys
print(" ".join(json.loads(l)["job_id"] for l in open(sys.argv[1]) if "side" in json.loads(l)))' "$r")
assert_eq 6 "$(tr ' ' '\n' <<<"$ids" | sort -u | grep -c '^[0-9][0-9]*$')" "distinct job ids of the runs"
node=$(scontrol -o show job "${ids%% *}" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
[ -n "$node" ] || fail "no BatchHost for the first job ${ids%% *}"
first=1
for id in $ids; do
	assert_eq COMPLETED "$(slurm_job_state "$id")" "Slurm state of job $id"
	req=$(scontrol -o show job "$id" | sed -n 's/.* ReqNodeList=\([^ ]*\).*/\1/p')
	if [ $first = 1 ]; then
		assert_eq "(null)" "$req" "the first job's requested nodes"
		first=0
	else
		assert_eq "$node" "$req" "job $id's requested nodes"
	fi
done
log=$(cat "$d/$(reg field "$r" 1 evidence recipe=07-bench)")
assert_contains "$log" "# side: head (warmup, discarded)"
assert_contains "$log" "# executor: slurm"
assert_contains "$log" "visible: 0"
assert_contains "$log" "METRIC wall_s"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_contains "$(cat "$d/$(reg field "$r" -1 evidence recipe=07-bench)")" "# slurm node: $node (every run)"
# Two runs a side cannot reach 95% confidence (docs/measure.md): the interval is unbounded.
assert_eq "wall_s 1 -> 1.493 s (x1.493, 95% CI 0.000-inf); rps 100 -> 67 req/s (x0.670, 95% CI 0.000-inf)" "$(reg field "$r" -1 note recipe=07-bench)" "the verdict's note"
m=$(cat "$d/validation/measurements.md")
assert_contains "$m" "## 07-bench: validated

Base \`${base:0:12}\` against head \`${head:0:12}\`: 2 base and 2 head runs counted"
assert_contains "$m" "| wall_s | s | lower | 1 | 1.493 | 1.493 (+49.3%) |"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"

# cancel while a head run's job runs.
lines_are() { [ "$(reg count "$r" recipe=07-bench)" = "$1" ]; }
: >"$T/order"
echo 60 >"$T/order.sleep"
ctl "$M" fix-1 "rerun 07-bench"
wait_for grep -q '^head ' "$T/order"
ctl "$M" fix-1 cancel
wait_for lines_are 10
assert_eq head "$(reg field "$r" -2 side recipe=07-bench)" "the run that was going on"
assert_eq cancelled "$(reg field "$r" -2 status recipe=07-bench)" "its status"
assert_contains "$(reg field "$r" -2 note recipe=07-bench)" "cancelled (signal 15)"
assert_eq CANCELLED "$(slurm_job_state "$(reg field "$r" -2 job_id recipe=07-bench)")" \
	"Slurm state of its job"
assert_eq cancelled "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "run 2 of 6 (head side, warmup) cancelled"
sleep 1
assert_eq 2 "$(wc -l <"$T/order")" "runs started"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# A head run past the recipe's "# timeout: 3": its job is ended with scancel, the run is
# timed_out, and so is the recipe's line, naming it.
sed -i 's/^# repeat: 2$/# repeat: 2\n# timeout: 3/' "$RECIPES/07-bench.sh"
: >"$T/order"
ctl "$M" fix-1 "rerun 07-bench"
wait_for lines_are 13
assert_eq head "$(reg field "$r" -2 side recipe=07-bench)" "the run that timed out"
assert_eq timed_out "$(reg field "$r" -2 status recipe=07-bench)" "its status"
assert_contains "$(reg field "$r" -2 note recipe=07-bench)" "timed out after 3 s (signal 15)"
assert_eq CANCELLED "$(slurm_job_state "$(reg field "$r" -2 job_id recipe=07-bench)")" \
	"Slurm state of its job"
assert_eq timed_out "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "run 2 of 6 (head side, warmup) timed_out"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
