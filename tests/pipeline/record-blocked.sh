#!/usr/bin/env bash
# A recorded run that never runs (it asks for more GPUs than the pool has) is recorded blocked:
# packetfs record prints nothing on stdout and exits 1 saying why; the daemon goes on serving.
. "$(dirname "$0")/../lib.sh"
std_item 01-build

rc=0
(cd "$d" && exec "$PFS" record 01-build --gpus 1 -- true) >"$T/out" 2>"$T/err" </dev/null || rc=$?
assert_eq 1 "$rc" "exit status of a blocked run ($(cat "$T/err"))"
assert_eq "" "$(cat "$T/out")" "stdout of a blocked run"
assert_contains "$(cat "$T/err")" "packetfs: record: 01-build: blocked: needs 1 GPU(s), the pool has 0" \
	"stderr of a blocked run"
assert_eq blocked "$(reg field "$r" -1 status)" "registry status of a blocked run"
assert_eq engine "$(reg field "$r" -1 source)" "registry source of a blocked run"
assert_contains "$(cat "$d/validation/record")" "status: blocked" "answer of a blocked run"
# The same through the file.
printf '%s\n' '{"recipe": "01-build", "argv": ["true"], "gpus": 2}' >"$d/validation/record" ||
	fail "a request for 2 GPUs was refused: $(cat "$d/validation/record")"
wait_for grep -qx 'status: blocked' "$d/validation/record"
assert_contains "$(cat "$d/validation/record")" "note: needs 2 GPU(s), the pool has 0" "answer"
check_status "$M" fix-1
exit 0
