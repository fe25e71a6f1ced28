#!/usr/bin/env bash
# The shipped measured recipe recipes/07-bench.sh on the sample project (examples/sample-project,
# whose `make bench` prints a metric line): the engine runs it at the merge-base and at the
# head (1 warmup and 5 counted runs a side), the recipe validates, and measurements.md and
# report.html show the metric; on a project without a bench target it is blocked.
. "$(dirname "$0")/../lib.sh"
REPO=$T/repo
cp -a "$ROOT/examples/sample-project" "$REPO"
git init -q -b main "$REPO"
git -C "$REPO" add -A
git -C "$REPO" -c user.name=t -c user.email=t@example.org commit -qm "the sample project"
RECIPES=$T/recipes
mkdir -p "$RECIPES"
cp "$ROOT/recipes/07-bench.sh" "$RECIPES/"
PLAN_RECIPES="07-bench" std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
verdict_is() { [ "$(status_field "$M" fix-1 verdict)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for -t 120 verdict_is pass
assert_eq 13 "$(reg count "$r" recipe=07-bench)" "registry lines (12 runs and the verdict)"
assert_eq 6 "$(reg count "$r" recipe=07-bench side=base)" "base runs"
assert_contains "$(reg field "$r" -1 note recipe=07-bench)" "count_char_ns_per_byte "
assert_contains "$(cat "$d/validation/measurements.md")" \
	"| count_char_ns_per_byte | ns | lower |"
assert_contains "$(cat "$d/report.html")" "<p>07-bench: count_char_ns_per_byte (ns)</p>"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# Without a bench target: blocked, saying why.
mkdir "$T/plain" && printf 'all:\n\ttrue\n' >"$T/plain/Makefile"
rc=0
out=$(cd "$T/plain" && "$ROOT/recipes/07-bench.sh" 2>&1) || rc=$?
assert_eq 77 "$rc" "exit status without a bench target"
assert_contains "$out" "no Makefile with a 'bench' target here"
exit 0
