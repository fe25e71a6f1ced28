#!/usr/bin/env bash
# Reading ctl returns the result of the last command and the list of verbs (SPEC §4): after a
# good command its success, after a refused one its failure naming it, each time only the
# last command's result; refusals found while parsing a line (an over-long verb or argument)
# are results too. Reading ctl triggers nothing.
. "$(dirname "$0")/../lib.sh"
mount_item

# has_verbs TEXT : TEXT lists every verb of SPEC §4.
has_verbs()
{
	local verb
	for verb in advance run rerun cancel approve hold release archive; do
		printf '%s\n' "$1" | grep -qw -- "$verb" || fail "ctl read back lacks the verb $verb: $1"
	done
}

# failed_result TEXT : TEXT reports a failure.
failed_result()
{
	printf '%s\n' "$1" | grep -Eqi 'error|invalid|refused|unknown|malformed|fail' ||
		fail "ctl read back reports no failure: $1"
}

out=$(cat "$d/ctl") || fail "cannot read ctl of a new item"
has_verbs "$out"

# After a good command: its success.
ctl "$M" fix-1 hold
out=$(cat "$d/ctl")
has_verbs "$out"
assert_contains "$out" hold "ctl after hold"
assert_contains "$out" ok "ctl after hold"
assert_not_contains "$out" error "ctl after hold"

# After a bad command: its failure, naming it.
assert_fails_with EINVAL sh_write "$d/ctl" $'frobnicate\n'
out=$(cat "$d/ctl")
has_verbs "$out"
assert_contains "$out" frobnicate "ctl after frobnicate"
failed_result "$out"

assert_fails_with EINVAL sh_write "$d/ctl" $'rerun 99-no-such-recipe\n'
out=$(cat "$d/ctl")
has_verbs "$out"
assert_contains "$out" 99-no-such-recipe "ctl after rerun of an unknown recipe"
assert_not_contains "$out" frobnicate "ctl after rerun of an unknown recipe (only the last result)"
failed_result "$out"

# A good command again: the old failure is gone.
ctl "$M" fix-1 release
out=$(cat "$d/ctl")
has_verbs "$out"
assert_contains "$out" release "ctl after release"
assert_contains "$out" ok "ctl after release"
assert_not_contains "$out" error "ctl after release"
assert_not_contains "$out" 99-no-such-recipe "ctl after release (only the last result)"

# A line refused while parsing it (over-long verb, over-long argument) is the last command too:
# its failure replaces release's success.
for cmd in averyveryverylongverbname "run $(printf 'x%.0s' $(seq 300))"; do
	ctl "$M" fix-1 release
	prev=$(cat "$d/ctl")
	assert_fails_with EINVAL sh_write "$d/ctl" "$cmd"$'\n'
	out=$(cat "$d/ctl")
	has_verbs "$out"
	[ "$out" != "$prev" ] || fail "ctl after the refused '${cmd:0:30}...' still shows release's result: $out"
	failed_result "$out"
done

# A handle that wrote a command reads its result from offset 0, as a fresh open does.
python3 - "$d/ctl" <<'PY' || fail "ctl read back on the writing handle"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.write(fd, b"hold\n")
got = os.pread(fd, 4096, 0)
os.write(fd, b"release\n")
again = os.pread(fd, 4096, 0)
os.close(fd)
assert got.startswith(b"hold: ok\n"), got
assert again.startswith(b"release: ok\n"), again
PY

# None of the reads triggered anything.
assert_eq new "$(status_field "$M" fix-1 state)" "state after reading ctl"
[ -z "$(ls "$d/stages")" ] || fail "reading ctl started a stage: $(ls "$d/stages")"
exit 0
