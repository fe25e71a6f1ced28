#!/usr/bin/env bash
# packetfs record from a shell: the engine runs the command as a run of the recipe; the CLI
# prints the command's output as it comes (nothing of the log's header and footer), exits with
# its status (3; 128+9 for SIGKILL; 128+15 after a timeout), and the registry line says source
# engine, the command as given and recorded_by (the asking pid and uid). It works from the item
# directory, a directory below it, with -C, and from the worktree with PACKET_DIR.
. "$(dirname "$0")/../lib.sh"
std_item 01-build

# record_in DIR OUT ARG... : packetfs record ARG... run in DIR in the background, its stdout to
# OUT and stderr to OUT.err; waits for it and sets RC and REC_PID.
record_in()
{
	local dir=$1 out=$2
	shift 2
	RC=0
	(cd "$dir" && exec "$PFS" record "$@" >"$out" 2>"$out.err" </dev/null) &
	REC_PID=$!
	wait "$REC_PID" || RC=$?
}

record_in "$d" "$T/out" 01-build -- sh -c 'echo "# not a header line"; echo "out 1"; exit 3'
assert_eq 3 "$RC" "exit status of a recorded command that exits 3 ($(cat "$T/out.err"))"
assert_file_eq "$T/out" $'# not a header line\nout 1\n'
assert_eq "" "$(cat "$T/out.err")" "stderr of packetfs record"
assert_eq 1 "$(reg count "$r")" "registry lines"
assert_eq failing "$(reg field "$r" -1 status)" "status"
assert_eq 3 "$(reg field "$r" -1 exit_code)" "exit_code"
assert_eq engine "$(reg field "$r" -1 source)" "source"
assert_eq 01-build "$(reg field "$r" -1 recipe)" "recipe"
assert_eq "sh -c 'echo \"# not a header line\"; echo \"out 1\"; exit 3'" \
	"$(reg field "$r" -1 command)" "command"
by=$(reg field "$r" -1 recorded_by)
assert_eq "$REC_PID $(id -u)" "$(python3 -c 'import json, sys; b = json.loads(sys.argv[1]); print(b["pid"], b["uid"])' "$by")" \
	"recorded_by pid and uid ($by)"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
run=$(reg field "$r" -1 run)
log=$(reg field "$r" -1 evidence)
assert_contains "$(head -n 1 "$d/$log")" "# packetfs recipe log" "the log's header"
assert_contains "$(cat "$d/$log")" "# packetfs: status failing" "the log's footer"
# The answer of the item's latest request.
answer=$(cat "$d/validation/record")
assert_contains "$answer" "run: $run" "answer"
assert_contains "$answer" "log: $log" "answer"
assert_contains "$answer" "status: failing" "answer"
assert_contains "$answer" "exit_code: 3" "answer"

# Output exactly as the command wrote it: no trailing newline, blank lines kept; a command
# with no output prints nothing.
record_in "$d" "$T/out" 01-build -- sh -c 'printf "a\n\n"; printf "no newline"'
assert_eq 0 "$RC" "exit status of a command that exits 0"
assert_file_eq "$T/out" $'a\n\nno newline'
assert_eq validated "$(reg field "$r" -1 status)" "status of a run that exits 0"
record_in "$d" "$T/out" 01-build -- true
assert_eq 0 "$RC" "exit status of true"
assert_file_eq "$T/out" ""

# Output comes as the command writes it: the command waits for a file the test makes once
# the CLI has printed its first line.
record_in "$d" "$T/out" 01-build -- sh -c "echo ready; while [ ! -e '$T/go' ]; do sleep 0.05; done; echo went" &
wait_for grep -qx ready "$T/out"
touch "$T/go"
wait $! || true
wait_for grep -qx went "$T/out"

# Ended by a signal: 128+N; past its timeout: timed_out, told on stderr.
record_in "$d" "$T/out" 01-build -- sh -c 'kill -9 $$'
assert_eq 137 "$RC" "exit status of a command killed by SIGKILL"
assert_eq 9 "$(reg field "$r" -1 signal)" "signal on the registry line"
record_in "$d" "$T/out" 01-build --timeout 1 -- sleep 30
assert_eq 143 "$RC" "exit status of a command past its timeout"
assert_eq timed_out "$(reg field "$r" -1 status)" "status past the timeout"
assert_contains "$(cat "$T/out.err")" "01-build: run $(reg field "$r" -1 run): timed_out" \
	"stderr after a timeout"

# From a directory below the item, with -C, and from the worktree with PACKET_DIR.
mkdir -p "$d/notes/deep"
record_in "$d/notes/deep" "$T/out" 01-build -- pwd
assert_eq 0 "$RC" "record from below the item directory ($(cat "$T/out.err"))"
assert_file_eq "$T/out" "$STORE/worktrees/fix-1"$'\n'
record_in "$T" "$T/out" -C "$d" 01-build -- echo via -C
assert_file_eq "$T/out" $'via -C\n'
export PACKET_DIR=$d
record_in "$STORE/worktrees/fix-1" "$T/out" 01-build -- echo via PACKET_DIR
unset PACKET_DIR
assert_eq 0 "$RC" "record from the worktree with PACKET_DIR ($(cat "$T/out.err"))"
assert_file_eq "$T/out" $'via PACKET_DIR\n'
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
