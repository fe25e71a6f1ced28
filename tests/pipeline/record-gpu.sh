#!/usr/bin/env bash
# Recorded runs take their GPUs from the pool like any recipe run ("gpus": 2, declared slots):
# --gpus 1 gets one device in CUDA_VISIBLE_DEVICES, the one its registry line names; two
# recorded runs asking for both devices run one after the other (the second waits, queued,
# until the first gave its devices back); --gpus 3 on a pool of 2 is blocked without running
# and packetfs record says why.
. "$(dirname "$0")/../lib.sh"
GPUS=2 std_item 01-build
rec=$d/validation/record

# One device: the command sees it, the line names it.
rc=0
(cd "$d" && exec "$PFS" record 04-gpu --gpus 1 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"') \
	>"$T/out" 2>"$T/err" </dev/null || rc=$?
assert_eq 0 "$rc" "exit status of a 1-GPU recorded run ($(cat "$T/err"))"
dev=$(cat "$T/out")
[[ "$dev" =~ ^[01]$ ]] || fail "CUDA_VISIBLE_DEVICES of a 1-GPU run is '$dev', not one device of 0 and 1"
assert_eq validated "$(reg field "$r" -1 status)" "status of the 1-GPU run"
assert_eq "[$dev]" "$(reg field "$r" -1 gpus)" "registry gpus of the 1-GPU run"
assert_contains "$(cat "$d/$(reg field "$r" -1 evidence)")" "# gpus: $dev" "the log's header"
[ ! -e "$T/gpu-recipe-ran" ] || fail "the recipe file 04-gpu ran instead of the recorded command"

# Two runs of both devices: the second stays queued while the first holds them.
(cd "$d" && exec "$PFS" record 04-gpu --gpus 2 -- \
	sh -c "echo \"A on \$CUDA_VISIBLE_DEVICES\"; touch '$T/a-started'; while [ ! -e '$T/go' ]; do sleep 0.05; done; touch '$T/a-done'") \
	>"$T/out-a" 2>"$T/err-a" </dev/null &
cli_a=$!
wait_for test -e "$T/a-started"
run_a=$(sed -n 's/^run: //p' "$rec")
assert_contains "$(cat "$rec")" "status: running" "answer of the first 2-GPU run"
(cd "$d" && exec "$PFS" record 04-gpu --gpus 2 -- \
	sh -c "echo \"B on \$CUDA_VISIBLE_DEVICES\"; test -e '$T/a-done' && touch '$T/b-after-a'") \
	>"$T/out-b" 2>"$T/err-b" </dev/null &
cli_b=$!
# The item's latest request is now the second one; it must be queued, not running.
wait_for bash -c 'run=$(sed -n "s/^run: //p" "$1"); [ -n "$run" ] && [ "$run" != "$2" ]' _ "$rec" "$run_a"
answer=$(cat "$rec")
assert_contains "$answer" "status: queued" "answer of the second 2-GPU run while the first runs"
run_b=$(sed -n 's/^run: //p' <<<"$answer")
touch "$T/go"
rc=0
wait "$cli_a" || rc=$?
assert_eq 0 "$rc" "exit status of the first 2-GPU run ($(cat "$T/err-a"))"
rc=0
wait "$cli_b" || rc=$?
assert_eq 0 "$rc" "exit status of the second 2-GPU run: it ran after the first ended ($(cat "$T/err-b"))"
[ -e "$T/b-after-a" ] || fail "the second 2-GPU run did not see the first one's end"
assert_eq "A on 0,1" "$(cat "$T/out-a")" "output of the first 2-GPU run"
assert_eq "B on 0,1" "$(cat "$T/out-b")" "output of the second 2-GPU run"
assert_eq "[0, 1]" "$(reg field "$r" 0 gpus run="$run_a")" "registry gpus of run $run_a"
assert_eq "[0, 1]" "$(reg field "$r" 0 gpus run="$run_b")" "registry gpus of run $run_b"
[[ ! "$(reg field "$r" 0 started_at run="$run_b")" < "$(reg field "$r" 0 finished_at run="$run_a")" ]] ||
	fail "run $run_b started before run $run_a finished"
# The events say the same: the second started after the first finished.
order=$(grep -E "\"type\":\"recipe_(started|finished)\".*\"run\":($run_a|$run_b)," "$d/events" |
	sed -E 's/.*"type":"recipe_([a-z]+)".*"run":([0-9]+),.*/\1 \2/' | tr '\n' ' ')
assert_eq "started $run_a finished $run_a started $run_b finished $run_b " "$order" \
	"recipe_started/recipe_finished events of runs $run_a and $run_b"

# More GPUs than the pool has: blocked without running.
lines=$(reg count "$r")
rc=0
(cd "$d" && exec "$PFS" record 04-gpu --gpus 3 -- touch "$T/ran-3") >"$T/out" 2>"$T/err" </dev/null ||
	rc=$?
[ "$rc" != 0 ] || fail "a recorded run needing 3 GPUs of 2 exited 0"
assert_eq "" "$(cat "$T/out")" "stdout of a blocked run"
assert_contains "$(cat "$T/err")" "packetfs: record: 04-gpu: blocked: needs 3 GPU(s), the pool has 2" \
	"stderr of a run needing 3 GPUs"
assert_eq $((lines + 1)) "$(reg count "$r")" "registry lines after the blocked run"
assert_eq blocked "$(reg field "$r" -1 status)" "status of the run needing 3 GPUs"
assert_eq "needs 3 GPU(s), the pool has 2" "$(reg field "$r" -1 note)" "note of the run needing 3 GPUs"
assert_eq "[]" "$(reg field "$r" -1 gpus)" "gpus of the blocked run"
assert_eq null "$(reg field "$r" -1 exit_code)" "exit_code of the blocked run"
[ ! -e "$T/ran-3" ] || fail "the run needing 3 GPUs ran"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
