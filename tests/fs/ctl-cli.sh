#!/usr/bin/env bash
# `packetfs ctl MNT/ITEM COMMAND...` (SPEC §4, §7): each command is written as a line to the
# item's ctl and its result printed (stdout), or its reason (stderr, "packetfs: ctl: ..."), the
# exit status 1 when one was refused; every command is sent. The answer is the writer's own: a
# ctl handle that wrote reads back its own results, never those of another writer who wrote in
# between, while `cat ctl` still shows the item's last result and the verbs.
. "$(dirname "$0")/../lib.sh"
mount_item

out=$("$PFS" ctl "$d" hold 2>&1) || fail "packetfs ctl hold failed: $out"
assert_eq "hold: ok" "$out" "answer to hold"
assert_contains "$(cat "$d/ctl")" "hold: ok" "cat ctl after packetfs ctl hold"

rc=0
out=$("$PFS" ctl "$d" release frobnicate "run no-such-stage" 2>"$T/err") || rc=$?
assert_eq 1 "$rc" "exit status after a refused command"
assert_eq "release: ok" "$out" "stdout of ctl with refusals"
assert_contains "$(cat "$T/err")" "packetfs: ctl: frobnicate: error: unknown" "reason of frobnicate"
assert_contains "$(cat "$T/err")" "packetfs: ctl: run no-such-stage: error: no stage 'no-such-stage'" \
	"reason of run of an unknown stage"

# Usage errors exit 2.
rc=0
"$PFS" ctl "$d" >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "exit status without COMMAND"
rc=0
out=$("$PFS" ctl "$M/no-such-item" hold 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status for a missing item"
assert_contains "$out" "No such file or directory" "error for a missing item"

# The answer is the writer's own: another writer's refused line in between does not show.
out=$(python3 - "$d/ctl" <<'PY'
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.write(fd, b"hold\n")
rc = subprocess.call(["sh", "-c", "printf 'frobnicate\\n' > \"$1\"", "_", sys.argv[1]],
                     stderr=subprocess.DEVNULL)
assert rc != 0, "the other writer's frobnicate was taken"
print(os.pread(fd, 4096, 0).decode(), end="")
os.close(fd)
PY
) || fail "per-writer answer: $out"
assert_contains "$out" "hold: ok" "the writer's own answer"
assert_not_contains "$out" "frobnicate" "the writer's own answer"
assert_contains "$out" "verbs:" "the writer's own answer"
# cat ctl: the item's last result (the other writer's refusal) and the verbs, as before.
out=$(cat "$d/ctl")
assert_contains "$out" "frobnicate: error:" "cat ctl after the refusal"
assert_contains "$out" "verbs:" "cat ctl"
echo "ok"
