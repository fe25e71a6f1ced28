#!/usr/bin/env bash
# A full disk under the store (SPEC §4, §8): ctl writes that would change the item (advance,
# rerun RECIPE, hold, approve) fail with ENOSPC and change nothing at all: state, stage,
# last_error, runs and events stay as they were. Once space is back the item goes through the
# pipeline to done without a remount, and the store checks clean.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../loopfs.sh"

loopfs_pipeline_store 64
new_item fix-1
d=$M/fix-1

# item_snapshot : what no refused ctl write may change.
item_snapshot()
{
	grep -E '^(state|stage|iteration|verdict|last_error|running|evidence):' "$d/status"
	cat "$d/events"
	ls "$d/stages" "$d/validation/logs"
	cat "$d/validation/registry.jsonl"
}

before=$(item_snapshot)
loopfs_full "$M/learnings/pad.md"
for cmd in advance 'run plan' 'rerun 01-build' hold approve; do
	assert_fails_with "No space left on device" sh_write "$d/ctl" "$cmd"$'\n'
	assert_eq "$before" "$(item_snapshot)" "the item after a refused '$cmd'"
done
# A command the state refuses is still EINVAL.
assert_fails_with EINVAL sh_write "$d/ctl" $'cancel\n'
assert_eq "$before" "$(item_snapshot)" "the item after a refused cancel"
no_procs_in "$STORE/worktrees/fix-1" || fail "something runs in the worktree: $(procs_in "$STORE/worktrees/fix-1")"

loopfs_free
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
assert_eq publish "$(status_field "$M" fix-1 stage)" "stage at the gate"
ctl "$M" fix-1 approve
wait_state "$M" fix-1 done
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence | sed 's/ (.*//')" "evidence"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check: $out"
assert_eq ok "$(sqlite3 "$STORE/packetfs.db" 'PRAGMA integrity_check' 2>&1)" "integrity_check"
exit 0
