#!/usr/bin/env bash
# max_parallel_items and max_parallel_recipes hold across a kill -9 of the daemon: with both at
# 2 and four items, never more than two items nor two recipes run at once - before the kill,
# right after the resume and later - and GPU recipes never share a device. Three kills: while
# two plan stages run (two more items queued), while two recipes run, and while two validator
# programs run, which start long after their stage's run began (their processes must end all
# the same). Queued work resumes each time, and all four items complete (the last stage only
# pushes: no process of its own ends when an item is done).
#
# The runs are tests/fixtures/restart/probe.sh: each counts the live runs when it starts and
# records any excess in $RESTART_DIR/violations; a run stalls while its block file exists.
# tests/fixtures/restart/lib.sh holds the setup and helpers this test shares with restart-loop.sh.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fixtures/restart/lib.sh"

probe_setup
echo "2 2" >"$PD/limits"
verdict_md='# Change validation\n\n## Verdict: pass\n'
GPUS=2 EXTRA='"max_parallel_items": 2,' pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(probe_run plan.md "$PLAN_MD"), \"produces\": [\"plan.md\"]}" \
	"{\"name\": \"validate\", \"recipes\": \"plan\", \"run\": $(probe_run change-validation.md "$verdict_md"), \"produces\": [\"change-validation.md\"]}" \
	"{\"name\": \"review\", \"run\": $(probe_run review.md "$REVIEW_MD"), \"produces\": [\"review.md\"]}" \
	'{"name": "publish", "push": {"remote": "origin"}}'
mount_items a b c d

check_no_violation()
{
	[ ! -s "$PD/violations" ] || fail_with "the probes saw overlaps or excess: $(cat "$PD/violations")"
}

# live KIND NAME : pids of the live probe runs of stage or recipe NAME (any item), one a line.
live()
{
	active_pids "$1+*+$2+*"
}

# live_count_is N KIND NAME
live_count_is()
{
	[ "$(live "$2" "$3" | wc -l)" = "$1" ]
}

# live_recipes : pids of the live recipe runs (any recipe, any item), from one listing of the
# active runs: a listing per recipe would count a run that ended between two listings together
# with the run that took its slot.
live_recipes()
{
	active_pids "recipe+*"
}

recipes_live_is()
{
	[ "$(live_recipes | wc -l)" = "$1" ]
}

# check_engine_limits : the engine's own record (the events, replayed) never shows more than
# two items or two recipes running, nor a GPU granted twice.
check_engine_limits()
{
	local out
	out=$(python3 "$FIXTURES/restart/events.py" "$M/events" 2 2 2 2>&1) || fail_with "$out"
}

# watch_limits SECONDS : samples the live recipes for a while, then checks the events. A sample
# looks at one run after the other, so it can see a run that is ending and the one that starts
# in its place; more than two count only when all of them are still alive at a second look.
watch_limits()
{
	local end=$(($(date +%s%N) + $1 * 1000000000)) n pids p
	while [ "$(date +%s%N)" -lt "$end" ]; do
		pids=$(live_recipes)
		n=$(grep -c . <<<"$pids" || true)
		if [ "$n" -gt 2 ]; then
			for p in $pids; do
				pid_alive "$p" || n=$((n - 1))
			done
		fi
		[ "$n" -le 2 ] || fail_with "$n recipes run at once (max_parallel_recipes 2)"
		check_no_violation
		sleep 0.1
	done
	check_engine_limits
}

# 1. Two plan stages run, two items wait in the queue.
note "kill -9 while two items run and two are queued"
set_blocks a+plan b+plan c+plan d+plan
for i in $ITEMS; do
	ctl "$M" "$i" advance
done
wait_for live_count_is 2 stage plan
assert_eq "2 2" "$(for i in $ITEMS; do status_field "$M" "$i" state; done | sort | uniq -c |
	awk '{ printf "%s%s", s, $1; s = " " }')" "items running and queued before the kill"
before=$(live stage plan | sort)
kill_and_remount check_engine_limits
wait_for live_count_is 2 stage plan
[ "$(live stage plan | sort)" != "$before" ] || fail "the plan runs were not started anew"
watch_limits 1

# 2. Two recipes run (the rest wait for a slot); the validate stages began before the kill.
note "kill -9 while two recipes run"
blocks=()
for i in $ITEMS; do
	for r in 11-cpu 12-cpu 13-gpu 14-gpu; do
		blocks+=("$i+$r")
	done
	blocks+=("$i+validate")
done
set_blocks "${blocks[@]}"
wait_for recipes_live_is 2
watch_limits 1
kill_and_remount check_engine_limits
wait_for recipes_live_is 2
# The validator programs start more than 5 s after their stage's run began.
watch_limits 6

# 3. Two validator programs run.
note "kill -9 while two validator programs run"
set_blocks a+validate b+validate c+validate d+validate
wait_for -t 60 live_count_is 2 stage validate
validators=$(live stage validate)
kill_and_remount check_engine_limits
for p in $validators; do
	for i in $ITEMS; do
		log=$(grep -ls "started as $p " "$M/$i"/stages/*-validate.log) || continue
		assert_contains "$(cat "$log")" "interrupted" "log $log of an interrupted validator"
	done
done
watch_limits 1

# 4. Everything completes, two at a time.
note "completing"
set_blocks
for i in $ITEMS; do
	end=$(($(date +%s%N) + 60 * 1000000000))
	until [ "$(status_field "$M" "$i" state)" = "done" ]; do
		case "$(status_field "$M" "$i" state)" in
		failed | blocked | waiting) fail_with "$i: $(cat "$M/$i/status")" ;;
		esac
		[ "$(date +%s%N)" -le "$end" ] || fail_with "$i not done after 60 s: $(cat "$M/$i/status")"
		sleep 0.1
	done
	out=$(reg check "$M/$i/validation/registry.jsonl" "$M/$i" 2>&1) || fail "registry of $i: $out"
done
check_no_violation
check_engine_limits
note "$(python3 "$FIXTURES/restart/events.py" "$M/events" 2 2 2)"
assert_eq 3 "$(grep -c '"type":"interrupted"' "$M/a/events")" "interruptions of a"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check of the mounted store failed: $out"
exit 0
