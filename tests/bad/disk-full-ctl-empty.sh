#!/usr/bin/env bash
# An empty write to ctl (advance, SPEC §4) on a full disk (SPEC §8): python's
# open(ctl, 'w').close() and `touch ctl` fail at their close with ENOSPC, `: > ctl` (whose
# close bash does not check) changes nothing either, the item stays `new` with nothing run, and
# reading ctl says why. Once space is back, `: > ctl` advances the item.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../loopfs.sh"

loopfs_pipeline_store 64
new_item fix-1
d=$M/fix-1
ctl "$M" fix-1 hold

item_snapshot()
{
	grep -E '^(state|stage|iteration|running):' "$d/status"
	ls "$d/stages"
}

before=$(item_snapshot)
loopfs_full "$M/learnings/pad.md"

out=$(python3 - "$d/ctl" 2>&1 <<'PY'
import errno, sys
try:
    open(sys.argv[1], "w").close()
except OSError as e:
    print("errno", errno.errorcode.get(e.errno, e.errno))
else:
    print("closed")
PY
) || fail "python: $out"
assert_eq "errno ENOSPC" "$out" "python open(ctl, 'w').close() on a full disk"
assert_eq "$before" "$(item_snapshot)" "the item after python's empty write"
assert_contains "$(head -n 1 "$d/ctl")" "advance: error: No space left on device" "ctl's result"

out=$(touch "$d/ctl" 2>&1) && fail "touch ctl on a full disk succeeded"
assert_contains "$out" "No space left on device" "touch ctl"
assert_eq "$before" "$(item_snapshot)" "the item after touch ctl"

: >"$d/ctl" || true
assert_eq "$before" "$(item_snapshot)" "the item after : > ctl"
assert_contains "$(head -n 1 "$d/ctl")" "advance: error: No space left on device" "ctl's result"

loopfs_free
: >"$d/ctl" || fail ": > ctl failed with space back"
wait_for test -n "$(ls "$d/stages")"
assert_eq "advance: ok" "$(head -n 1 "$d/ctl")" "ctl's result with space back"
exit 0
