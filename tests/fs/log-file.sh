#!/usr/bin/env bash
# The daemon's log (SPEC §9): `packetfs mount STORE MNT -o log=FILE` logs to FILE (opened
# before the daemon detaches, so a relative name means the caller's directory), one line per
# message with an RFC 3339 time, and every refused write is logged with its reason: a ctl
# command, a registry line, a pipeline.json, an EACCES of the mount's own rules (rm of a view).
# A stage's start and end are logged too. An unwritable log file fails the mount.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_with "$T/pipeline.json" "$(plan_stage)"
make_store "$T/pipeline.json"
rc=0
mkdir "$T/nomnt"
out=$("$PFS" mount "$STORE" "$T/nomnt" -o log="$T/no-such-dir/log" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a mount with an unwritable log file succeeded"
assert_contains "$out" "log=$T/no-such-dir/log: No such file or directory" "mount with a bad log"

cd "$T"
MOUNT_OPTS=log=pfs.log mount_store
cd /
L=$T/pfs.log
wait_for grep -q "mounted $STORE on $M" "$L"
new_item fix-1
d=$M/fix-1

assert_fails_with EINVAL sh_write "$d/ctl" $'frobnicate\n'
assert_fails_with EINVAL sh_append "$d/validation/registry.jsonl" $'{"not": "a line"\n'
printf '{"stages": 3}' >"$T/bad.json"
assert_fails_with EINVAL cp "$T/bad.json" "$M/.packetfs/pipeline.json"

assert_fails_with EACCES rm -f "$d/status"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done

log=$(cat "$L")
assert_contains "$log" "fix-1: stage_started plan (run 1)" "log of a stage's start"
assert_contains "$log" 'fix-1: stage_finished {"stage":"plan"' "log of a stage's end"
assert_contains "$log" "unlink /fix-1/status: refused: Permission denied" "log of a refused unlink"
assert_contains "$log" "fix-1: ctl frobnicate: unknown" "log of the refused ctl command"
assert_contains "$log" "fix-1/validation/registry.jsonl: " "log of the refused registry line"
assert_contains "$log" ".packetfs/pipeline.json: " "log of the refused pipeline.json"
# Every line: TIME packetfs[PID]: LEVEL: MESSAGE, TIME in RFC 3339.
bad=$(grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z packetfs\[[0-9]+\]: (error|warning|notice|info): ' "$L" || true)
[ -z "$bad" ] || fail "log lines not in the format: $bad"
assert_contains "$log" "packetfs[$DAEMON]: " "the daemon's pid in the log"
echo "ok"
