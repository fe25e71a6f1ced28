#!/usr/bin/env bash
# Rounds after publish (SPEC §5): the rounds stage runs after publish, then every every_s
# seconds, until it exits 0 (settled: the item is done) or max rounds ran (blocked); exit 75
# means not settled. Every round keeps its log, status shows the round, PACKET_ROUND counts;
# hold stops the timer, release starts the next round, a restart re-arms the timer.
# A round that commits has the plan's recipes run at the new head, which is pushed only when
# they validate; a new head that fails them is not pushed and blocks the item. Exit 3 fails.
. "$(dirname "$0")/../lib.sh"
WAIT_BOUND=${PFS_WAIT_BOUND:-60}
make_repo
pipeline()
{
	pipeline_with "$1" "$(plan_stage 01-build)" "$(print_stage)" "$(validate_stage)" \
		"$(review_stage sound)" "$(publish_stage)" \
		"{\"name\": \"babysit\", \"run\": $(stage_run round.sh "$2"), \"rounds\": {\"every_s\": ${4:-1}, \"max\": ${3:-4}}}"
}
printf 'pending\ncommit\nsettled\n' >"$T/rounds-a"
pipeline "$T/pipeline.json" "$T/rounds-a"
make_store "$T/pipeline.json"
mount_store
new_item fix-1

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
assert_eq babysit "$(status_field "$M" fix-1 stage)" "stage"
assert_eq 3/4 "$(status_field "$M" fix-1 round)" "round"
logs=$(ls "$M/fix-1/stages" | grep -- '-babysit\.log$')
assert_eq 3 "$(printf '%s\n' "$logs" | wc -l)" "babysit logs: $logs"
n=0
for l in $(printf '%s\n' "$logs" | sort -n); do
	n=$((n + 1))
	assert_contains "$(cat "$M/fix-1/stages/$l")" "round $n of fix-1" "$l"
done
first=$(printf '%s\n' "$logs" | sort -n | head -n 1)
second=$(printf '%s\n' "$logs" | sort -n | sed -n 2p)
third=$(printf '%s\n' "$logs" | sort -n | tail -n 1)
assert_contains "$(cat "$M/fix-1/stages/$first")" "round 1: not settled (exit 75)" "round 1 log"
head=$(git -C "$REPO" rev-parse packetfs/fix-1)
assert_contains "$(git -C "$REPO" log -1 --format=%s "$head")" "round 2: answer the review" "head"
r2=$(cat "$M/fix-1/stages/$second")
assert_contains "$r2" "round 2 moved the head" "round 2 log"
assert_contains "$r2" "01-build: validated" "round 2 log"
assert_contains "$r2" "pushed packetfs/fix-1" "round 2 log"
assert_contains "$(cat "$M/fix-1/stages/$third")" "round 3: settled" "round 3 log"
assert_eq "$head" "$(git -C "$ORIGIN" rev-parse packetfs/fix-1)" "the remote has the round's head"
reg_head=$(grep '"recipe":"01-build"' "$M/fix-1/validation/registry.jsonl" | tail -n 1)
assert_contains "$reg_head" "\"head\":\"$head\"" "01-build ran at the round's head"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict at the new head"
grep -q '"type":"round_waiting"' "$M/fix-1/events" || fail "no round_waiting event"
# report.html labels every round of the rounds stage in its timeline.
rep=$(cat "$M/fix-1/report.html")
for n in 1 2 3; do
	assert_contains "$rep" "<title>stage babysit round $n (run" "report.html's timeline"
done

# A round whose commit fails the plan's recipes: not pushed, blocked with the reason.
printf 'break\n' >"$T/rounds-b"
pipeline "$M/.packetfs/pipeline.json" "$T/rounds-b"
new_item fix-2
ctl "$M" fix-2 advance
wait_state "$M" fix-2 blocked
pushed=$(git -C "$ORIGIN" rev-parse packetfs/fix-2)
[ "$pushed" != "$(git -C "$REPO" rev-parse packetfs/fix-2)" ] || fail "the broken head was pushed"
assert_contains "$(status_field "$M" fix-2 last_error)" "babysit: round 1: the new head" "last_error"
assert_contains "$(status_field "$M" fix-2 last_error)" "did not validate" "last_error"
assert_contains "$(status_field "$M" fix-2 last_error)" "not pushed" "last_error"

# Never settled: blocked after max rounds; `run babysit` runs one more.
printf 'pending\npending\npending\n' >"$T/rounds-c"
pipeline "$M/.packetfs/pipeline.json" "$T/rounds-c" 2
new_item fix-3
ctl "$M" fix-3 advance
wait_state "$M" fix-3 blocked
assert_contains "$(status_field "$M" fix-3 last_error)" "not settled after 2 rounds (max 2)" "last_error"
assert_eq 2/2 "$(status_field "$M" fix-3 round)" "round"
ctl "$M" fix-3 "run babysit"
wait_state "$M" fix-3 blocked
assert_eq 3/2 "$(status_field "$M" fix-3 round)" "round after run babysit"

# Held between rounds: the timer starts nothing until release.
printf 'pending\nsettled\n' >"$T/rounds-d"
pipeline "$M/.packetfs/pipeline.json" "$T/rounds-d" 4 4
new_item fix-4
ctl "$M" fix-4 advance
wait_state "$M" fix-4 waiting
assert_eq 1/4 "$(status_field "$M" fix-4 round)" "round"
ctl "$M" fix-4 hold
sleep 5
assert_eq 1/4 "$(status_field "$M" fix-4 round)" "round while held"
ctl "$M" fix-4 release
wait_state "$M" fix-4 done
assert_eq 2/4 "$(status_field "$M" fix-4 round)" "round after release"

# Waiting between rounds across a restart: the next daemon re-arms the timer.
printf 'pending\nsettled\n' >"$T/rounds-f"
pipeline "$M/.packetfs/pipeline.json" "$T/rounds-f" 4 3
new_item fix-6
ctl "$M" fix-6 advance
wait_state "$M" fix-6 waiting
umount_store
mount_store
assert_eq waiting "$(status_field "$M" fix-6 state)" "state after the restart"
wait_state "$M" fix-6 done
assert_eq 2/4 "$(status_field "$M" fix-6 round)" "round after the restart"

# Any other exit status fails the item like any stage.
printf 'fail\n' >"$T/rounds-e"
pipeline "$M/.packetfs/pipeline.json" "$T/rounds-e"
new_item fix-5
ctl "$M" fix-5 advance
wait_state "$M" fix-5 failed
assert_contains "$(status_field "$M" fix-5 last_error)" "babysit: exited with code 3" "last_error"
exit 0
