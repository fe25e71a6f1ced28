# tests/top.sh - drives `packetfs top` in a detached tmux session, for the tests that source it
# after tests/lib.sh (tests/pipeline/top-*.sh).
#
# Each test gets a tmux server of its own (a socket under $T), ended by cleanup. screen prints
# what the pane shows now (capture-pane, one line per row, trailing blanks dropped);
# wait_screen waits (bounded, like wait_for) until it matches an extended regular expression.

TMUX_SOCK=$T/tmux.sock

top_cleanup()
{
	tmux -S "$TMUX_SOCK" kill-server 2>/dev/null || true
}
CLEANUP_HOOKS+=(top_cleanup)

# top_start COLUMNS ROWS [ARG...] : runs `packetfs top $M ARG...` in a new detached tmux
# session of that size, and waits until its header shows.
top_start()
{
	local cols=$1 rows=$2
	shift 2
	command -v tmux >/dev/null || fail "tmux is not installed"
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s top -x "$cols" -y "$rows" \
		"$(printf '%q ' "$PFS" top "$M" "$@"); echo top-exited-\$?; sleep 600" ||
		fail "tmux new-session failed"
	tmux -S "$TMUX_SOCK" set-option -t top -g window-size manual >/dev/null
	wait_screen '^[0-9]{2}:[0-9]{2}:[0-9]{2}  [0-9]+ items?'
}

# screen : what the pane shows now.
screen()
{
	tmux -S "$TMUX_SOCK" capture-pane -p -t top
}

# keys KEY... : tmux send-keys to the session (e.g. j, PgDn, Home).
keys()
{
	tmux -S "$TMUX_SOCK" send-keys -t top "$@"
}

# resize COLUMNS ROWS : resizes the session's window (the program gets SIGWINCH).
resize()
{
	tmux -S "$TMUX_SOCK" resize-window -t top -x "$1" -y "$2"
}

# screen_matches REGEX : the pane shows a line matching REGEX (grep -E).
screen_matches()
{
	screen | grep -Eq -- "$1"
}

# wait_screen REGEX : waits (bounded) until the pane shows a line matching REGEX; fails with
# the screen otherwise.
wait_screen()
{
	local end=$(( $(date +%s%N) + WAIT_BOUND * 1000000000 ))
	until screen_matches "$1"; do
		if [ "$(date +%s%N)" -gt "$end" ]; then
			fail "waited ${WAIT_BOUND}s in vain for /$1/ on the screen:
$(screen)"
		fi
		sleep 0.05
	done
}

# row ITEM : the screen's row of ITEM (empty when not shown).
row()
{
	screen | grep -E "^[> ] $1 " || true
}
