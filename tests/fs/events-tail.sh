#!/usr/bin/env bash
# MOUNT/events and ITEM/events are JSON Lines that grow as things happen; tail -f follows them.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store

bg tail -n +1 -f "$M/events" >"$T/tail.txt"
mkdir "$M/fix-1"
wait_for grep -q 'fix-1' "$T/tail.txt"
mkdir "$M/fix-2"
wait_for grep -q 'fix-2' "$T/tail.txt"

python3 - "$M/events" "$M/fix-1/events" <<'PY' || fail "events are not JSON Lines"
import json, sys
for path in sys.argv[1:]:
    lines = open(path).read().splitlines()
    assert lines, "%s is empty" % path
    for line in lines:
        assert isinstance(json.loads(line), dict), line
PY
assert_contains "$(cat "$M/fix-1/events")" "fix-1" "fix-1/events"
assert_not_contains "$(cat "$M/fix-1/events")" "fix-2" "fix-1/events"
exit 0
