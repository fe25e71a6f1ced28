#!/usr/bin/env bash
# `packetfs top`'s command line: without a terminal it refuses (exit 2) unless --once, which
# prints one frame as text fitted to $COLUMNS; usage errors exit 2, a directory that is no
# packetfs mount exits 1; help lists it. When the mount's daemon dies under a running top, it
# ends with status 1 saying so.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/top.sh"
mount_item
new_item fix-2
printf 'hold\n' >"$M/fix-2/ctl"

# expect_exit STATUS MESSAGE CMD... : CMD exits STATUS and its stderr holds MESSAGE.
expect_exit()
{
	local want=$1 msg=$2 rc=0
	shift 2
	"$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	assert_eq "$want" "$rc" "exit status of $*"
	assert_contains "$(cat "$T/err")" "$msg" "stderr of $*"
}

expect_exit 2 "packetfs: top: stdout is not a terminal" "$PFS" top "$M"
[ ! -s "$T/out" ] || fail "top wrote to a stdout that is no terminal: $(cat "$T/out")"
expect_exit 2 "packetfs: top: missing MOUNTPOINT" "$PFS" top
expect_exit 2 "packetfs: top: too many arguments" "$PFS" top "$M" "$M"
expect_exit 2 "packetfs: top: unknown option '--bogus'" "$PFS" top --bogus "$M"
mkdir "$T/plain"
expect_exit 1 "packetfs: top: $T/plain: not a packetfs mount point" "$PFS" top --once "$T/plain"

out=$(COLUMNS=70 "$PFS" top --once "$M") || fail "top --once failed"
assert_eq 4 "$(printf '%s\n' "$out" | wc -l)" "lines of --once (header, columns, two items)"
printf '%s\n' "$out" | head -n 1 | grep -Eq "^[0-9]{2}:[0-9]{2}:[0-9]{2}  2 items: 2 new  " ||
	fail "the header: $out"
printf '%s\n' "$out" | sed -n 2p | grep -Eq '^  ITEM +STATE +STAGE +RUNNING +EVIDENCE +LAST' ||
	fail "the columns' line: $out"
printf '%s\n' "$out" | grep -Eq '^  fix-1 +new +- +- +0/0$' || fail "fix-1's row: $out"
printf '%s\n' "$out" | grep -Eq '^  fix-2 +new ' || fail "fix-2's row: $out"
longest=$(printf '%s\n' "$out" | awk '{ if (length($0) > m) m = length($0) } END { print m }')
[ "$longest" -le 70 ] || fail "a line of $longest columns for COLUMNS=70: $out"
# A few columns: the start of every line, nothing more.
out=$(COLUMNS=4 "$PFS" top --once "$M") || fail "top --once in 4 columns failed"
assert_eq "$(printf '  fi\n  fi')" "$(printf '%s\n' "$out" | tail -n 2)" "rows in 4 columns"

out=$("$PFS" --help 2>&1) || fail "packetfs --help failed"
assert_contains "$out" "top" "packetfs --help"
out=$("$PFS" help top 2>&1) || fail "packetfs help top failed"
assert_contains "$out" "usage: packetfs top MOUNTPOINT [--once]" "packetfs help top"
out=$("$PFS" top --help 2>&1) || fail "packetfs top --help failed"
assert_contains "$out" "--once" "packetfs top --help"

# A terminal type ncurses does not know: a message, exit 1.
tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s term -x 80 -y 10 \
	"TERM=bogus-term $(printf '%q ' "$PFS" top "$M"); echo top-exited-\$?; sleep 600"
wait_for bash -c 'tmux -S "$1" capture-pane -p -t term | grep -q "^top-exited-1$"' _ "$TMUX_SOCK"
assert_contains "$(tmux -S "$TMUX_SOCK" capture-pane -p -t term)" \
	"packetfs: top: the terminal type 'bogus-term' (\$TERM) is unknown" "top with TERM=bogus-term"

# Wide enough for the message with the mount point's path on one line.
top_start 250 10
wait_screen '^> fix-1 +new '
kill_daemon
wait_screen "^packetfs: top: $M: the mount went away\$"
wait_screen '^top-exited-1$'
exit 0
