#!/usr/bin/env bash
# `packetfs top MNT` in a terminal (tmux): a row per item with its state, stage, what runs and
# for how long (the time advancing), evidence and last error; changes made by others show
# without a key press (inotify on the mount, MNT/events); c, a and r send cancel, approve and
# rerun failed to the selected item's ctl, with the result or the refusal in the last line; a
# resize redraws to the new width, down to a few columns.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/top.sh"
G=$T/go
mkdir -p "$G"
# plan waits for $G/plan-ITEM, then names 03-fail, which always fails.
pipeline_store "$(stage_json plan plan.md wait-then.sh "$G/plan-%i" plan.sh 03-fail)" \
	"$(print_stage)" "$(validate_stage)"
new_item fix-1
new_item fix-2
touch "$G/plan-fix-1"
ctl "$M" fix-1 advance
ctl "$M" fix-2 advance
settled fix-1 >/dev/null
wait_state "$M" fix-2 running
r1=$M/fix-1/validation/registry.jsonl
assert_eq 1 "$(reg count "$r1" recipe=03-fail)" "03-fail runs before top"

top_start 100 20
wait_screen '^> fix-1 +done +validate +- +0/1'
wait_screen '^  fix-2 +running +plan +plan [0-9]+s +0/0'
header=$(screen | head -n 1)
assert_contains "$header" "2 items: 1 running, 1 done" "the header"
screen | sed -n 2p | grep -Eq '^  ITEM +STATE +STAGE +RUNNING +EVIDENCE +LAST ERROR$' ||
	fail "the columns' line: $(screen | sed -n 2p)"

# Waiting, it spends next to no CPU time (poll(2), a redraw a second).
pid=$(pgrep -P "$(tmux -S "$TMUX_SOCK" list-panes -t top -F '#{pane_pid}')" -x packetfs) ||
	fail "no packetfs top process in the pane"
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
c0=$(ticks)
sleep 2
c1=$(ticks)
[ $((c1 - c0)) -le 6 ] || fail "top spent $((c1 - c0)) ticks in 2 s of waiting"

# The elapsed time of what runs advances on its own.
t0=$(row fix-2 | sed -E 's/.* plan ([0-9]+)s .*/\1/')
wait_for bash -c '[ "$(tmux -S "$1" capture-pane -p -t top | sed -nE "s/^  fix-2 .* plan ([0-9]+)s .*/\1/p")" -gt "$2" ]' \
	_ "$TMUX_SOCK" "$t0"

# Changes made elsewhere show without a key: a new item (IN_CREATE of the root), then its
# state moving as it runs (its status.json's IN_MODIFY, MNT/events).
"$PFS" new "$M" fix-3 >/dev/null || fail "packetfs new fix-3 failed"
wait_screen '^  fix-3 +new +- +- +0/0'
assert_contains "$(screen | head -n 1)" "3 items: 1 running, 1 new, 1 done" "the header"
ctl "$M" fix-3 advance
wait_screen '^  fix-3 +running +plan +plan [0-9]+s'
touch "$G/plan-fix-3"
wait_screen '^  fix-3 +done +validate +- +0/1'

# c: cancel of the selected item (fix-2, the second row).
keys j
wait_screen '^> fix-2 '
keys c
wait_state "$M" fix-2 failed
wait_screen '^fix-2: cancel: ok'
wait_screen '^> fix-2 +failed +plan +- +0/0 +plan: '

# r: rerun failed on fix-1 runs 03-fail again; on fix-2 (no plan ran) it is refused, and the
# last line says why.
keys Home r
wait_screen '^fix-1: rerun failed: ok'
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=03-fail)" = 2 ]' _ "$FIXTURES/registry.py" "$r1"
keys j r
wait_screen '^fix-2: rerun failed: error: '

# a: approve of fix-3 (the last row).
keys End
wait_screen '^> fix-3 '
keys a
wait_screen '^fix-3: approve: ok'
wait_for grep -q '"approved":true' "$M/fix-3/status.json"

# An item archived (rmdir) leaves the list.
rmdir "$M/fix-3" || fail "rmdir fix-3 failed"
wait_screen '^[0-9:]{8}  2 items: 1 failed, 1 done  '
screen_matches '^[> ] fix-3 ' && fail "fix-3 still shown after its archive: $(screen)"
wait_screen '^> fix-2 '
new_item fix-4
wait_screen '^  fix-4 +new '

# ? shows the help; a key closes it.
keys '?'
wait_screen 'a +approve: pass the selected item'
keys x
wait_screen '^> fix-2 '

# A resize redraws to the new width: narrow, every line fits and the columns past it go; wide,
# the last error shows whole; tiny, it goes on running and comes back.
resize 40 12
wait_screen '^  ITEM +STATE +STAGE +RUNNING$'
longest=$(screen | awk '{ if (length($0) > m) m = length($0) } END { print m }')
[ "$longest" -le 40 ] || fail "a line of $longest columns in a 40-column window: $(screen)"
err=$(status_field "$M" fix-2 last_error)
resize 160 20
wait_screen '^  ITEM +STATE +STAGE +RUNNING +EVIDENCE +LAST ERROR$'
[ ${#err} -le 90 ] || err=${err:0:90}
assert_contains "$(row fix-2)" "$err" "fix-2's row at 160 columns"
resize 3 2
sleep 0.3
resize 1 1
sleep 0.3
resize 90 15
wait_screen '^  fix-1 +done '
screen_matches 'top-exited' && fail "top ended on a tiny window: $(screen)"

# q quits, with status 0.
keys q
wait_screen '^top-exited-0$'
exit 0
