#!/usr/bin/env bash
# The daemon killed (kill -9) during a measured batch, while a head run runs: at the next mount
# that run is recorded once, as interrupted, with its side; its processes are ended; the validate
# stage runs again from its start, so the measured batch runs again in fresh checkouts (the old
# ones replaced) and ends with its verdict; nothing is left in the checkouts' directory.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
	'# measure: base' '# repeat: 2' "exec '$FIXTURES/measure/bench.sh'" >"$RECIPES/07-bench.sh"
chmod +x "$RECIPES/07-bench.sh"
export BENCH_ORDER=$T/order
echo 600 >"$T/order.sleep"
PLAN_RECIPES="07-bench" std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"
verdict_is() { [ "$(status_field "$M" fix-1 verdict)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for grep -q '^head ' "$T/order"
wait_for test -n "$(procs_in "$STORE/measure")"
touch "$STORE/measure/fix-1-head/left-behind"
kill_daemon
rm "$T/order.sleep"
mount_store "$M"
wait_for verdict_is pass
wait_for no_procs_in "$STORE/measure"
assert_eq 1 "$(reg count "$r" recipe=07-bench status=interrupted)" "interrupted lines"
assert_eq head "$(reg field "$r" 0 side recipe=07-bench status=interrupted)" "the interrupted run's side"
assert_eq validated "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line after the rerun"
assert_eq 3 "$(reg count "$r" recipe=07-bench status=validated side=base)" "base lines: one before, two after"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
