#!/usr/bin/env bash
# A held item (ctl hold: it advances only by hand, SPEC §4) says so wherever a person looks: the
# line "hold: yes" of its status, and "STATE (held)" in `packetfs status`, `packetfs top` and
# index.html; release takes it back. Its state stays one of SPEC's (status.json "hold" as before).
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
PLAN_RECIPES=01-build std_pipeline "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
ctl "$M" fix-1 hold
ctl "$M" fix-1 advance
assert_eq waiting "$(settled fix-1)" "state after the plan of a held item"
assert_eq yes "$(status_field "$M" fix-1 hold)" "status hold"
assert_eq plan "$(status_field "$M" fix-1 stage)" "status stage"

line=$(COLUMNS=100 "$PFS" status "$M" | grep '^fix-1 ')
printf '%s\n' "$line" | grep -Eq '^fix-1 +waiting \(held\) +plan ' || fail "packetfs status: $line"
line=$(COLUMNS=100 "$PFS" top "$M" --once | grep ' fix-1 ')
printf '%s\n' "$line" | grep -Eq '^  fix-1 +waiting \(held\) +plan ' || fail "packetfs top: $line"
assert_contains "$(cat "$M/index.html")" '<td class="st s-waiting">waiting (held)</td>' "index.html"

ctl "$M" fix-1 release
assert_eq no "$(status_field "$M" fix-1 hold)" "status hold after release"
line=$(COLUMNS=100 "$PFS" status "$M" | grep '^fix-1 ')
printf '%s\n' "$line" | grep -Eq '^fix-1 +(waiting|queued|running|failed|blocked|done) +[a-z]+ ' ||
	fail "packetfs status after release: $line"
assert_not_contains "$line" "(held)" "packetfs status after release"
exit 0
