#!/usr/bin/env bash
# `packetfs top` over 2,000 items: the first screen shows before every status is read, every
# item is read (the header stops counting unread ones), PgDn/PgUp/End/Home scroll the list
# with the selection, the selection stays on its item while items are added above it, and
# --once prints a row for each of them. Prints how long the first screen and the whole read
# took.
# test-timeout: 600
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/top.sh"
N=${PFS_TOP_ITEMS:-2000}
make_repo
make_store
mount_store
seq -f "$M/item-%04g" 1 "$N" | xargs -P 8 -n 25 mkdir || fail "mkdir of $N items failed"
assert_eq "$N" "$(ls "$M" | grep -c '^item-')" "items on the mount"

t0=$(date +%s%N)
top_start 100 30
wait_screen '^> item-0001 +new '
t1=$(date +%s%N)
wait_screen "^[0-9:]{8}  $N items: $N new  "
t2=$(date +%s%N)
note "top over $N items: first screen after $(( (t1 - t0) / 1000000 )) ms, all read after $(( (t2 - t0) / 1000000 )) ms"

# 30 rows: the header, the columns' line, 27 items, the status line.
assert_eq 27 "$(screen | grep -cE '^[> ] item-[0-9]{4} ')" "item rows on a 30-row screen"
keys PgDn
wait_screen '^> item-0027 '
assert_eq "  item-0001" "$(screen | sed -n 3p | cut -c1-11)" "the first row after one PgDn"
keys PgDn
wait_screen '^> item-0053 '
screen_matches '^  item-0001 ' && fail "item-0001 still shown after two PgDn: $(screen)"
screen | sed -n '$p' | grep -q "^53/$N " || fail "the status line: $(screen | sed -n '$p')"
keys End
wait_screen "^> item-$(printf %04d "$N") "
keys PgUp
wait_screen "^> item-$(printf %04d $((N - 26))) "
keys Home
wait_screen '^> item-0001 '
keys PgDn PgDn
wait_screen '^> item-0053 '

# Items made above the selection move it down the list, not off its item.
mkdir "$M/item-0000a" "$M/item-0000b"
wait_screen "^[0-9:]{8}  $((N + 2)) items: $((N + 2)) new  "
wait_screen '^> item-0053 '
screen | sed -n '$p' | grep -q "^55/$((N + 2)) " || fail "the status line: $(screen | sed -n '$p')"

keys q
wait_screen '^top-exited-0$'

t0=$(date +%s%N)
out=$(COLUMNS=80 "$PFS" top --once "$M") || fail "packetfs top --once failed"
t1=$(date +%s%N)
note "top --once over $((N + 2)) items: $(( (t1 - t0) / 1000000 )) ms"
assert_eq $((N + 2)) "$(printf '%s\n' "$out" | grep -cE '^  item-[0-9a-z]+ +new ')" "rows of --once"
exit 0
