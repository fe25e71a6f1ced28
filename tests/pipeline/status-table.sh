#!/usr/bin/env bash
# `packetfs status MNT` is a table (ITEM STATE STAGE RUNNING EVIDENCE LAST ERROR) that shows what
# runs and for how long, and the last error; it fits the width ($COLUMNS when stdout is no
# terminal, else 80) without cutting an item name longer than the old fixed column (24), one
# line per item: a last error too long for what is left is cut with an ellipsis ("..."). --json stays a
# JSON array of the items' status.json.
. "$(dirname "$0")/../lib.sh"
pipeline_store "$(stage_json plan plan.md sleep.sh "$T/pids")"
long=a-long-item-name-past-24-columns
[ ${#long} -gt 24 ] || fail "the long name is short"
new_item "$long"
new_item fix-2
ctl "$M" "$long" advance
wait_state "$M" "$long" running
wait_for test -s "$T/pids"
rm -f "$T/pids"
ctl "$M" fix-2 advance
wait_state "$M" fix-2 running
wait_for test -s "$T/pids"
ctl "$M" fix-2 cancel
wait_state "$M" fix-2 failed
err=$(status_field "$M" fix-2 last_error)
[ -n "$err" ] || fail "fix-2 has no last_error after cancel"

# fits WIDTH TABLE : every line of TABLE is at most WIDTH characters.
fits()
{
	local longest
	longest=$(printf '%s\n' "$2" | awk '{ if (length($0) > m) m = length($0) } END { print m }')
	[ "$longest" -le "$1" ] || fail "a line of $longest characters in a table for $1 columns: $2"
}

for width in 100 unset; do
	if [ "$width" = unset ]; then
		out=$(env -u COLUMNS "$PFS" status "$M" </dev/null 2>&1) || fail "packetfs status failed: $out"
		width=80
	else
		out=$(COLUMNS=$width "$PFS" status "$M" 2>&1) || fail "packetfs status failed: $out"
	fi
	fits "$width" "$out"
	head=$(printf '%s\n' "$out" | head -n 1)
	printf '%s\n' "$head" | grep -Eq '^ITEM +STATE +STAGE +RUNNING +EVIDENCE +LAST ERROR *$' ||
		fail "table header: $head"
	line=$(printf '%s\n' "$out" | grep -E "^$long ") || fail "no line with the whole name $long: $out"
	printf '%s\n' "$line" | grep -Eq " running +plan +plan \([0-9]+ s\)" ||
		fail "the running item's line shows no running stage with its time: $line"
	line=$(printf '%s\n' "$out" | grep -E '^fix-2 ') || fail "no line for fix-2: $out"
	printf '%s\n' "$line" | grep -Eq ' failed +plan +- ' || fail "fix-2's line: $line"
	assert_contains "$out" "${err:0:6}" "the table for $width columns"
done
# Wide enough, the last error is whole on its line.
out=$(COLUMNS=400 "$PFS" status "$M" 2>&1) || fail "packetfs status failed: $out"
assert_contains "$(printf '%s\n' "$out" | grep -E '^fix-2 ')" "$err" "fix-2's line at 400 columns"
# In 80 columns, one line per item (a header and two items), the error cut with an ellipsis,
# as a pipe to another program or a terminal of 80 columns shows it.
out=$(COLUMNS=80 "$PFS" status "$M" 2>&1 | cat)
assert_eq 3 "$(printf '%s\n' "$out" | wc -l)" "lines of the table at 80 columns: $out"
line=$(printf '%s\n' "$out" | grep -E '^fix-2 ')
[ "${#line}" -eq 80 ] || fail "fix-2's line is ${#line} characters, not the 80 it fills: $line"
case $line in
*" ${err:0:6}"*...) ;;
*) fail "fix-2's last error is not cut with an ellipsis: $line" ;;
esac

# Through the store, too (no daemon's view of what runs: the store's state).
out=$(COLUMNS=100 "$PFS" status "$STORE" 2>&1) || fail "packetfs status STORE failed: $out"
fits 100 "$out"
printf '%s\n' "$out" | grep -Eq "^$long +running +plan " || fail "status STORE: $out"

# --json is unchanged: an array of the items' status.json.
out=$("$PFS" status "$M" --json 2>&1) || fail "packetfs status --json failed: $out"
printf '%s\n' "$out" | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert [o["item"] if "item" in o else o.get("name") for o in a] == sorted([sys.argv[1], "fix-2"]), a
assert a[0]["running"].startswith("plan ("), a
' "$long" || fail "status --json: $out"
exit 0
