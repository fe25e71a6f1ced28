#!/usr/bin/env bash
# A measured recipe (# measure: base, # warmup: 1, # repeat: 3, no budget) runs at the item's
# merge-base and at its head, each in a clean checkout of its commit, alternating base and head
# after the discarded warmups: every run is a registry line with its side, its commit and its
# metrics (stdout's METRIC lines and $PACKET_METRICS), and the recipe's own line, last, is
# validated and reports the change; the checkouts are gone afterwards.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_measure.sh"
make_repo

copy_recipes
bench_recipe '# measure: base' '# warmup: 1' '# repeat: 3'
base=$(git -C "$REPO" rev-parse main)
PLAN_RECIPES="07-bench" std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
# Before any measured run, measurements.md says so.
assert_contains "$(cat "$d/validation/measurements.md")" \
	"# Measurements

No measured recipe (# measure: base) has finished at the head "

ctl "$M" fix-1 advance
wait_for verdict_is pass
head=$(status_field "$M" fix-1 head)
[ "$head" != "$base" ] || fail "print made no commit"

# Eight runs, B H B H after B H warmups, each in its side's checkout at its side's commit.
assert_order 4 "$base" "$head"
sides=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["recipe"] == "07-bench":
        print(o.get("side", "-"), o["head"][:12], o["status"], "warmup" in o["note"])
' "$r")
assert_eq "base ${base:0:12} validated True
head ${head:0:12} validated True
base ${base:0:12} validated False
head ${head:0:12} validated False
base ${base:0:12} validated False
head ${head:0:12} validated False
base ${base:0:12} validated False
head ${head:0:12} validated False
- ${head:0:12} validated False" "$sides" "registry lines of 07-bench (side, head, status, warmup)"
assert_eq '{"wall_s": {"value": 1, "unit": "s", "better": "lower"}, "rps": {"value": 100, "unit": "req/s", "better": "higher"}}' \
	"$(python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])][6]["metrics"]))' "$r")" \
	"metrics of the seventh run (base, no jitter)"
note=$(reg field "$r" -1 note recipe=07-bench)
# Three runs a side are too few for a bounded 95% interval (docs/measure.md): 0-inf.
assert_contains "$note" "wall_s 1 -> 1.5 s (x1.500, 95% CI 0.000-inf)"
assert_contains "$note" "rps 100 -> 66.67 req/s (x0.667"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
log=$d/$(reg field "$r" -1 evidence recipe=07-bench)
assert_contains "$(cat "$log")" "## 07-bench: validated"
assert_contains "$(cat "$log")" "| wall_s | s | lower | 1 | 1.5 | 1.500 (+50.0%) |"
m=$(cat "$d/validation/measurements.md")
assert_contains "$m" "# Measurements

## 07-bench: validated

Base \`${base:0:12}\` against head \`${head:0:12}\`: 3 base and 3 head runs counted"
assert_contains "$m" "| wall_s | s | lower | 1 | 1.5 | 1.500 (+50.0%) | 0.99-1.01 | 1.485-1.515 | 0.000-inf | none | - |"
assert_contains "$m" "Generated from the measured recipes' runs in validation/registry.jsonl"
# report.html: a chart a metric, a dot a counted run, a bar a median.
html=$(cat "$d/report.html")
assert_eq 2 "$(grep -o '<svg class="measure-chart"' <<<"$html" | wc -l)" "charts in report.html"
assert_eq 6 "$(grep -o 'class="run-base"' <<<"$html" | wc -l)" "base dots (3 runs, 2 metrics)"
assert_eq 6 "$(grep -o 'class="run-head"' <<<"$html" | wc -l)" "head dots"
assert_contains "$html" "<p>07-bench: wall_s (s)</p>"
assert_contains "$html" "median 1.5</text>"
# attest: the recipe's descriptor carries the change.
"$PFS" attest "$M" fix-1 >"$T/env.json" || fail "attest failed"
got=$(python3 -c '
import base64, json, sys
st = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))
d = [c for c in st["predicate"]["configuration"] if c["name"] == "07-bench"][0]
print(d["annotations"]["status"], "|", d["annotations"]["measurements"])
print(" ".join(st["predicate"]["passedTests"]))' "$T/env.json")
assert_eq "validated | $note
07-bench" "$got" "the attestation's measured recipe"
first=$d/$(reg field "$r" 0 evidence recipe=07-bench)
assert_contains "$(cat "$first")" "# side: base (warmup, discarded)"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
[ "$(git -C "$REPO" worktree list | grep -c "$STORE/measure/")" = 0 ] || fail "git still lists a measure worktree: $(git -C "$REPO" worktree list)"
exit 0
