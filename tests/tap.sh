#!/usr/bin/env bash
# tests/tap.sh - runs one shell test of the suite and reports it in TAP (the Test Anything
# Protocol), for `meson test` (tests/meson.build registers every test through it).
#
#	bash tests/tap.sh tests/DIR/NAME.sh
#
# Called from the root of the source tree. Runs the script as tests/run.sh does: with bash, stdin
# from /dev/null, TMPDIR set to a directory of its own (swept afterwards: tests/sweep.sh), under
# a timeout of the larger of PFS_TEST_TIMEOUT (default 120 s) and the script's header line
# "# test-timeout: SECONDS". meson's own timeout for the test is that header plus a margin, a
# backstop: meson ends the whole process group within half a second, too soon for a test to undo
# its mounts (tests/tap.sh then passes the signal on and sweeps, as far as it gets). A
# PFS_TEST_TIMEOUT above the header needs meson test's --timeout-multiplier as well.
#
# Its output (stdout and stderr, interleaved) is copied to stderr as it comes, and turned into
# TAP on stdout:
#	ok: CHECK        ->  ok N - CHECK          (one per check the script reports)
#	FAIL: WHY        ->  not ok N - WHY
# then, at the end, from the exit status:
#	0, no line above           ->  ok 1 - DIR/NAME
#	77 (skipped)               ->  1..0 # SKIP WHY  (WHY: its first "SKIP: " line), or
#	                               ok N # SKIP WHY after checks already reported
#	124/137 (the timeout)      ->  not ok N - timed out after SECONDS s
#	other non-zero, no FAIL    ->  not ok N - exit status STATUS
# and the plan "1..N" last. A '#' in a check or reason is written "\#" (TAP's escape). Exits 0
# once it has written the TAP, which carries the result (meson would report any other status as
# an ERROR of the test, not as its FAIL); 2 on a usage error.

set -uo pipefail

script=${1:-}
if [ $# != 1 ] || [ ! -f "$script" ]; then
	echo "usage: tests/tap.sh tests/DIR/NAME.sh (from the source root; got: ${*:-nothing})" >&2
	exit 2
fi
name=${script#tests/}
name=${name%.sh}

# shellcheck source=sweep.sh
. "$(dirname "${BASH_SOURCE[0]}")/sweep.sh"

limit=$(sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -n 1)
TEST_TIMEOUT=${PFS_TEST_TIMEOUT:-120}
[ -n "$limit" ] && [ "$limit" -gt "$TEST_TIMEOUT" ] || limit=$TEST_TIMEOUT

work=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-tap.XXXXXX") || exit 1
tmp=$work/tmp
mkdir "$tmp" || exit 1
# meson test ends a test with SIGTERM to its process group, which timeout(1) has left: the
# test is ended through timeout, which passes the signal on, and its leftovers are swept.
trap 'kill -TERM "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null; exit 1' TERM INT HUP
trap 'sweep "$tmp"; rm -rf "$work"' EXIT

# tap_text TEXT : TEXT with TAP's directive character escaped.
tap_text()
{
	local s=$1
	printf '%s' "${s//#/\\#}"
}

n=0
failed=0
why=""
while IFS= read -r line; do
	printf '%s\n' "$line" >&2
	case "$line" in
	"ok: "*)
		n=$((n + 1))
		echo "ok $n - $(tap_text "${line#ok: }")"
		;;
	"FAIL: "*)
		n=$((n + 1))
		failed=1
		echo "not ok $n - $(tap_text "${line#FAIL: }")"
		;;
	"SKIP: "*) [ -n "$why" ] || why=${line#SKIP: } ;;
	esac
done < <(
	TMPDIR=$tmp timeout -k 10 "$limit" bash "$script" </dev/null 2>&1 &
	echo "$!" >"$work/pid"
	rc=0
	wait "$!" || rc=$?
	echo "$rc" >"$work/rc"
)
# The process substitution has written its status once its output ended.
wait $! 2>/dev/null
rc=$(cat "$work/rc" 2>/dev/null) || rc="unknown (the test's runner ended early)"

case "$rc" in
0)
	if [ "$n" = 0 ]; then
		n=1
		echo "ok 1 - $name"
	fi
	;;
77)
	if [ "$n" = 0 ]; then
		echo "1..0 # SKIP $(tap_text "${why:-exit status 77}")"
		exit 0
	fi
	n=$((n + 1))
	echo "ok $n # SKIP $(tap_text "${why:-exit status 77}")"
	;;
124 | 137)
	n=$((n + 1))
	echo "not ok $n - timed out after $limit s"
	;;
*)
	if [ "$failed" = 0 ]; then
		n=$((n + 1))
		echo "not ok $n - exit status $rc"
	fi
	;;
esac
echo "1..$n"
exit 0
