#!/usr/bin/env bash
# Writing nothing to ctl means advance (SPEC §4): `: > ctl`, `touch ctl` and python's
# open(ctl, 'w').close() each start the first stage of a new item exactly once: one
# stage_started event, one stages/<n>-plan.log, "advance: ok" as ctl's last result, and no
# second stage. The items are held, so a second advance would show as a second stage (or as
# a refused advance in ctl's result) instead of being hidden by automatic advancing.
. "$(dirname "$0")/../lib.sh"
pipeline_store "$(plan_stage 02-lint)" "$(print_stage)"

# started ITEM : the stage of each stage_started event of ITEM, one a line.
started()
{
	python3 - "$M/$1/events" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.strip():
        e = json.loads(line)
        if e.get("type") == "stage_started":
            print(e.get("stage", "?"))
PY
}

# settled ITEM : ITEM has run plan and stands still (held after it).
settled()
{
	[ -e "$M/$1/plan.md" ] || return 1
	case "$(status_field "$M" "$1" state)" in
	running | queued | new) return 1 ;;
	esac
}

for how in colon touch python; do
	item=item-$how
	new_item "$item"
	d=$M/$item
	ctl "$M" "$item" hold
	case $how in
	colon) : >"$d/ctl" || fail ": > ctl failed" ;;
	touch) touch "$d/ctl" || fail "touch ctl failed" ;;
	python) python3 -c 'open(__import__("sys").argv[1], "w").close()' "$d/ctl" ||
		fail "python open(ctl, 'w').close() failed" ;;
	esac
	wait_for settled "$item"
	assert_eq plan "$(started "$item")" "$how: stages started by one empty write"
	logs=$(ls "$d/stages")
	printf '%s\n' "$logs" | grep -Eqx '[0-9]+-plan\.log' || fail "$how: no plan log: $logs"
	assert_eq 1 "$(printf '%s\n' "$logs" | grep -c .)" "$how: logs in stages/ ($logs)"
	assert_eq plan "$(status_field "$M" "$item" stage)" "$how: stage after one advance"
	result=$(head -n 1 "$d/ctl")
	assert_contains "$result" advance "$how: ctl's last result"
	assert_not_contains "$result" error "$how: ctl's last result"
	# The other items were not touched.
	for other in "$M"/item-*; do
		[ "$other" = "$d" ] && continue
		assert_eq 1 "$(started "${other##*/}" | grep -c .)" "stages of ${other##*/} after $how"
	done
done
exit 0
