#!/usr/bin/env bash
# A measured recipe with "# budget: wall_s +2%": a head 10% slower is worse beyond the budget
# with confidence, so the recipe's line is failing, naming the metric, the ratio, the interval
# and the budget, and the verdict is failing; a head 1% slower keeps a +5% budget (validated);
# a budget naming a metric no run reports fails.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
bench()
{
	printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
		'# measure: base' '# repeat: 5' "# budget: $1" "exec '$FIXTURES/measure/bench.sh'" \
		>"$RECIPES/07-bench.sh"
	chmod +x "$RECIPES/07-bench.sh"
}
bench 'wall_s +2%'
export BENCH_ORDER=$T/order
echo 1.1 >"$T/order.head"
PLAN_RECIPES="07-bench" std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
verdict_is() { [ "$(status_field "$M" fix-1 verdict)" = "$1" ]; }
lines_are() { [ "$(reg count "$r" recipe=07-bench)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for verdict_is fail
assert_eq 11 "$(reg count "$r" recipe=07-bench)" "registry lines of 07-bench (10 runs and the verdict)"
assert_eq failing "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line"
note=$(reg field "$r" -1 note recipe=07-bench)
assert_contains "$note" "wall_s: head/base 1.100, 95% CI 1.0"
assert_contains "$note" ", beyond the +2% budget"
assert_eq 10 "$(reg count "$r" recipe=07-bench status=validated)" "every run itself validated"
log=$d/$(reg field "$r" -1 evidence recipe=07-bench)
assert_contains "$(cat "$log")" "## 07-bench: failing - wall_s: head/base 1.100"
assert_contains "$(cat "$log")" "| +2% | worse beyond budget |"
assert_contains "$(cat "$d/validation/measurements.md")" "## 07-bench: failing - wall_s: head/base 1.100"
# junit.xml's failure names the budget and its log tail holds the table.
assert_contains "$(cat "$d/validation/junit.xml")" "message=\"failing: wall_s: head/base 1.100, 95% CI 1.0"
assert_contains "$(cat "$d/validation/junit.xml")" "| +2% | worse beyond budget |"
# ... and its measurements suite has a testcase a metric, the budget's failing.
# measure_suite : junitparser's reading of junit.xml's measurements suite, one line a fact.
measure_suite()
{
	cp "$d/validation/junit.xml" "$T/junit.xml"
	xmllint --noout "$T/junit.xml" || fail "xmllint refuses junit.xml: $(cat "$T/junit.xml")"
	/usr/bin/python3 - "$T/junit.xml" <<'PY'
import sys
from junitparser import JUnitXml
xml = JUnitXml.fromfile(sys.argv[1])
print("root", xml.tests, xml.failures, xml.errors)
for s in xml:
    if s.name != "measurements":
        continue
    print("suite", s.name, s.tests, s.failures, s.errors, s.skipped)
    for c in s:
        props = {}
        for e in c._elem.iter("property"):
            props[e.get("name")] = e.get("value")
        kinds = [type(r).__name__ for r in c.result]
        print("case", c.classname, c.name, ",".join(kinds) or "passed")
        for r in c.result:
            print("result", c.name, r.type, r.message)
        if props:
            print("props", c.name, " ".join("%s=%s" % kv for kv in props.items()))
PY
}
out=$(measure_suite) || fail "junitparser cannot read junit.xml: $(cat "$T/junit.xml")"
assert_contains "$out" "root 3 2 0" "the root's counts (two suites)"
assert_contains "$out" "suite measurements 2 1 0 0" "the measurements suite's counts"
assert_contains "$out" "case packetfs.fix-1.measurements 07-bench: wall_s Failure"
assert_contains "$out" "result 07-bench: wall_s budget wall_s: head/base 1.100 (+10.0%), 95% CI 1.0"
assert_contains "$out" ", beyond the +2% budget"
assert_contains "$out" "case packetfs.fix-1.measurements 07-bench: rps passed"
assert_contains "$out" "props 07-bench: wall_s recipe_verdict=failing base_commit=$(git -C "$REPO" rev-parse --short=12 main) head_commit="
assert_contains "$out" " unit=s better=lower base_median=1 head_median=1.1 ratio=1.100 (+10.0%) base_range=0.99-1.01 head_range=1.089-1.111 ci95=1.0"
assert_contains "$out" " budget=+2% verdict=worse beyond budget"
assert_contains "$out" "props 07-bench: rps recipe_verdict=failing"
assert_contains "$out" " unit=req/s better=higher "
assert_contains "$out" " budget=none verdict=-"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# 1% slower against +5%: kept.
bench 'wall_s +5%'
echo 1.01 >"$T/order.head"
ctl "$M" fix-1 "rerun 07-bench"
wait_for lines_are 22
assert_eq validated "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line within budget"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "wall_s 1 -> 1.01 s (x1.010"
assert_contains "$(cat "$d/validation/measurements.md")" "## 07-bench: validated"
out=$(measure_suite) || fail "junitparser cannot read junit.xml: $(cat "$T/junit.xml")"
assert_contains "$out" "suite measurements 2 0 0 0" "the measurements suite within budget"
assert_contains "$out" "case packetfs.fix-1.measurements 07-bench: wall_s passed"
assert_contains "$out" " budget=+5% verdict=kept"

# A budget for a metric that no run reports.
bench 'wal_s +5%'
ctl "$M" fix-1 "rerun 07-bench"
wait_for lines_are 33
assert_eq failing "$(reg field "$r" -1 status recipe=07-bench)" "a budget for no metric"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" \
	"wal_s: the budget's metric was not reported by any run; wall_s 1 -> 1.01 s"
out=$(measure_suite) || fail "junitparser cannot read junit.xml: $(cat "$T/junit.xml")"
assert_contains "$out" "suite measurements 3 1 0 0" "the measurements suite, a budget for no metric"
assert_contains "$out" "case packetfs.fix-1.measurements 07-bench Failure"
assert_contains "$out" "result 07-bench budget wal_s: the budget's metric was not reported by any run"
exit 0
