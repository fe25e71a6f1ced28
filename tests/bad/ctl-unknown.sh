#!/usr/bin/env bash
# Unknown or illegal ctl commands fail the write with EINVAL and leave the item as it was;
# reading ctl gives the result of the last command and the verbs.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(stage_run sleep.sh "$T/pids"), \"produces\": [\"plan.md\"]}" \
	"{\"name\": \"print\", \"run\": $(stage_run print.sh), \"produces\": [\"change.md\"]}"
make_store "$T/pipeline.json"
mount_store
new_item fix-1
d=$M/fix-1

status_core()
{
	grep -v '^updated:' "$d/status"
}
before=$(status_core)
for cmd in frobnicate "advance now" "run no-such-stage" "approve please"; do
	assert_fails_with EINVAL sh_write "$d/ctl" "$cmd"$'\n'
done
# A last line without a newline is applied on close: still refused.
assert_fails_with EINVAL python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"frobnicate")
try:
    os.close(fd)
except OSError as e:
    sys.exit(os.strerror(e.errno))
' "$d/ctl"
assert_eq "$before" "$(status_core)" "status after refused commands"
ls "$d/stages" | grep -q . && fail "a refused command started a stage: $(ls "$d/stages")"

help=$(cat "$d/ctl")
for verb in advance run rerun cancel approve hold release archive; do
	assert_contains "$help" "$verb" "ctl read back"
done

# advance while a stage runs is illegal.
ctl "$M" fix-1 advance
wait_state "$M" fix-1 running
wait_for test -s "$T/pids"
assert_fails_with EINVAL sh_write "$d/ctl" $'advance\n'
assert_eq running "$(status_field "$M" fix-1 state)" "state after a refused advance"
assert_eq plan "$(status_field "$M" fix-1 stage)" "stage after a refused advance"
assert_eq 1 "$(ls "$d/stages" | grep -Ecx '[0-9]+-plan\.log')" "plan runs"
# archive while a stage runs is EBUSY, and so is rmdir.
assert_fails_with EBUSY sh_write "$d/ctl" $'archive\n'
assert_fails_with EBUSY rmdir "$d"
[ -d "$d" ] || fail "item gone after a refused archive"
ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
exit 0
