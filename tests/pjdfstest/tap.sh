#!/usr/bin/env bash
# tests/pjdfstest/tap.sh - pjdfstest inside an item (tests/pjdfstest/run.sh), reported in TAP for
# `meson test` (the test "pjdfstest" of tests/meson.build).
#
#	bash tests/pjdfstest/tap.sh [DIR_OR_FILE...]
#
# Called from the root of the source tree. Runs tests/pjdfstest/run.sh (its output goes to
# stderr) over all the test files, or those named, and writes one TAP line per test file, as
# tests/run.sh judges them:
#	ok N - DIR/NN.t                                a pass
#	not ok N - DIR/NN.t (failed tests: ...)        a failure
#	not ok N - DIR/NN.t # TODO REASON              a failure tests/pjdfstest/known-failures
#	                                               lists, with its reason (meson: expected fail)
#	ok N - DIR/NN.t # TODO passes now: ...         a listed file that passes (meson: unexpected
#	                                               pass, a failure, so that the list only shrinks)
# then "1..N". When run.sh skips (exit 77: no pjdfstest source, a tool missing, not root):
# "1..0 # SKIP WHY"; when it cannot run at all: "not ok 1 - ..." with its exit status. Exits 0
# once it has written the TAP, which carries the result (as tests/tap.sh).

set -uo pipefail

KNOWN=tests/pjdfstest/known-failures
work=$(mktemp -d "${TMPDIR:-/tmp}/pjdfstest-tap.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# tap_text TEXT : TEXT with TAP's directive character escaped.
tap_text()
{
	local s=$1
	printf '%s' "${s//#/\\#}"
}

rc=0
bash tests/pjdfstest/run.sh --out "$work/out" "$@" >"$work/log" 2>&1 || rc=$?
cat "$work/log" >&2
if [ "$rc" = 77 ]; then
	echo "1..0 # SKIP $(tap_text "$(sed -n 's/^SKIP: //p' "$work/log" | head -n 1)")"
	exit 0
elif [ "$rc" != 0 ]; then
	echo "not ok 1 - tests/pjdfstest/run.sh could not run the suite: exit status $rc"
	echo "1..1"
	exit 0
fi

n=0
while IFS= read -r line; do
	case "$line" in
	"ok "*) f=${line#ok } ;;
	"not ok "*)
		f=${line#not ok }
		f=${f%% *}
		;;
	*) continue ;;
	esac
	n=$((n + 1))
	why=$(awk -v f="$f" '$1 == f { $1 = ""; sub(/^ +/, ""); print; exit }' "$KNOWN")
	if [ "${line#ok }" != "$line" ]; then
		if [ -z "$why" ]; then
			echo "ok $n - $f"
		else
			echo "ok $n - $f # TODO passes now: remove it from $KNOWN"
		fi
	elif [ -z "$why" ]; then
		echo "not ok $n - $(tap_text "${line#not ok }")"
	else
		echo "not ok $n - $f # TODO $(tap_text "$why")"
	fi
done <"$work/out"
echo "1..$n"
