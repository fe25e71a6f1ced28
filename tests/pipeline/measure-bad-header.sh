#!/usr/bin/env bash
# A measured recipe whose header lines are bad ("# repeat: 0", a budget without "# measure:") is
# recorded blocked without running, its note naming the line and why; the verdict is blocked.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
printf '%s\n' '#!/bin/sh' '# summary: a benchmark' '# measure: base' '# repeat: 0' \
	"touch '$T/bench-ran'" 'echo METRIC wall_s 1 s' >"$RECIPES/07-bench.sh"
printf '%s\n' '#!/bin/sh' '# summary: a budget alone' '# needs: none' '# budget: wall_s +2%' \
	"touch '$T/alone-ran'" >"$RECIPES/08-alone.sh"
chmod +x "$RECIPES"/07-bench.sh "$RECIPES"/08-alone.sh
PLAN_RECIPES="07-bench 08-alone" std_pipeline "$T/pipeline.json"
mount_item "$T/pipeline.json"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked
[ ! -e "$T/bench-ran" ] || fail "07-bench ran with a bad '# repeat:' line"
[ ! -e "$T/alone-ran" ] || fail "08-alone ran with a budget and no '# measure:' line"
assert_eq 1 "$(reg count "$r" recipe=07-bench status=blocked source=engine)" "blocked 07-bench lines"
assert_eq 1 "$(reg count "$r" recipe=08-alone status=blocked source=engine)" "blocked 08-alone lines"
assert_eq "# repeat: 0: not a whole number from 1 to 1000" "$(reg field "$r" 0 note recipe=07-bench)" \
	"07-bench's note"
assert_eq '# budget: needs "# measure: base"' "$(reg field "$r" 0 note recipe=08-alone)" "08-alone's note"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
assert_eq blocked "$(status_field "$M" fix-1 verdict)" "status verdict"
exit 0
