#!/usr/bin/env bash
# One write() holding good and bad command lines fails with EINVAL and changes nothing: the
# caller is told the write failed, so no line of it may have taken effect (SPEC §4 "fails the
# write with EINVAL and leaves the item as it was"; the same all-or-nothing rule as for lines
# appended to registry.jsonl, §6). A malformed line is known to be bad before anything is
# applied, wherever it stands in the write. ctl's last result names the bad line.
. "$(dirname "$0")/../lib.sh"
mount_item

# ctl_write DATA : one write() of DATA to ctl, then close; prints "ok N" or the error.
ctl_write()
{
	python3 - "$d/ctl" "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    n = os.write(fd, sys.argv[2].encode())
    print("ok", n)
except OSError as e:
    print(os.strerror(e.errno))
finally:
    try:
        os.close(fd)
    except OSError as e:
        print("close:", os.strerror(e.errno))
PY
}

# snapshot : hold, state and events of fix-1.
snapshot()
{
	grep -oE '"(hold|state)"[[:space:]]*:[[:space:]]*("[^"]*"|true|false)' "$d/status.json"
	cat "$d/events"
}

before=$(snapshot)
for data in $'hold\nfrobnicate\nrelease\n' $'hold\nrun no-such-stage\n' $'frobnicate\nhold\n'; do
	what="the write $(printf '%q' "$data")"
	out=$(ctl_write "$data")
	assert_eq "Invalid argument" "$out" "result of $what to ctl"
	assert_eq "$before" "$(snapshot)" "item after $what"
	result=$(head -n 1 "$d/ctl")
	case "$data" in
	*frobnicate*) assert_contains "$result" frobnicate "ctl's last result after $what" ;;
	*) assert_contains "$result" no-such-stage "ctl's last result after $what" ;;
	esac
done

# The same lines, each good, in one write: all applied.
out=$(ctl_write $'hold\nrelease\nhold\n')
assert_eq "ok 18" "$out" "write of hold, release, hold"
grep -qE '"hold"[[:space:]]*:[[:space:]]*true' <<<"$(snapshot)" ||
	fail "hold is not set after hold, release, hold: $(snapshot)"
exit 0
