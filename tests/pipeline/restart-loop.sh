#!/usr/bin/env bash
# test-timeout: 300
# kill -9 of the daemon in a loop, each time while something else runs: a stage program, a CPU
# recipe, a GPU recipe (declared slots, "gpus": 2). After each kill the store passes `packetfs
# check`, and the next mount ends every process the dead daemon's runs left, records each
# interrupted run as interrupted (its partial log readable: a stage's in stages/, a recipe's in
# the registry and validation/logs/), re-queues or fails the item as "on_interrupt" says (the
# rounds alternate requeue and fail; an interrupted `rerun RECIPE` leaves the item as it was),
# and resumes queued work. Every document closed before a
# kill keeps its content; no run of an item ever overlaps another run of the same stage or
# recipe, nor a stage of the same item (the probe fixture holds flocks and records any
# overlap). At the end every item completes to done.
#
# The runs are tests/fixtures/restart/probe.sh (stages and recipes alike): a run stalls while
# $RESTART_DIR/block/ITEM+NAME exists, so each round picks exactly what is running at the kill.
# tests/fixtures/restart/lib.sh holds the setup and helpers this test shares with
# restart-limits.sh.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fixtures/restart/lib.sh"

probe_setup
GPUS=2 EXTRA='"on_interrupt": "requeue",' pipeline_with "$T/pipeline.json" \
	"{\"name\": \"plan\", \"run\": $(probe_run plan.md "$PLAN_MD"), \"produces\": [\"plan.md\"]}" \
	"$(validate_stage)" \
	"{\"name\": \"review\", \"run\": $(probe_run review.md "$REVIEW_MD"), \"produces\": [\"review.md\"]}"
mount_items a b c

declare -A DOCS=() # item-relative path -> content, for every document closed so far
JOURNAL=""

item_state()
{
	status_field "$M" "$1" state
}

# idle ITEM : nothing runs or waits to run for ITEM.
idle()
{
	local st
	st=$(item_state "$1") || return 1
	[ "$st" != running ] && [ "$st" != queued ]
}

# live_pid KEY : the pid of a live probe run KEY (ITEM+NAME), if any.
live_pid()
{
	local f base pid
	for f in "$PD"/active/*+"$1"+*; do
		[ -e "$f" ] || continue
		base=${f##*/}
		pid=${base##*+}
		if pid_alive "$pid"; then
			echo "$pid"
			return 0
		fi
	done
	return 1
}

# live_other KEY PID : a live probe run KEY other than PID exists.
live_other()
{
	local p
	p=$(live_pid "$1") && [ "$p" != "$2" ]
}

# set_mode requeue|fail : "on_interrupt" of the active pipeline, written through the mount.
set_mode()
{
	python3 - "$M/.packetfs/pipeline.json" "$1" <<'PY' || fail "cannot set on_interrupt $1"
import json, sys
path, mode = sys.argv[1:]
cfg = json.load(open(path))
cfg["on_interrupt"] = mode
with open(path, "w") as f:
    json.dump(cfg, f, indent=2)
PY
	assert_contains "$(cat "$M/.packetfs/pipeline.json")" "\"on_interrupt\": \"$1\"" "pipeline.json"
}

# write_docs ROUND : writes and closes a document in every item and appends to a journal.
write_docs()
{
	local i text
	for i in $ITEMS; do
		text="round $1 of $i: $RANDOM$RANDOM"
		printf '%s\n' "$text" >"$M/$i/notes-$1.md" || fail "cannot write $i/notes-$1.md"
		DOCS["$i/notes-$1.md"]="$text"$'\n'
	done
	printf 'round %s\n' "$1" >>"$M/a/journal.md" || fail "cannot append to a/journal.md"
	JOURNAL+="round $1"$'\n'
	DOCS["a/journal.md"]=$JOURNAL
}

check_docs()
{
	local p
	for p in "${!DOCS[@]}"; do
		assert_doc "$M/$p" "${DOCS[$p]}"
	done
}

check_no_violation()
{
	local out
	[ ! -s "$PD/violations" ] || fail_with "the probes saw overlaps or excess: $(cat "$PD/violations")"
	# The engine's own record agrees: two recipes at most, no GPU granted twice, one stage run
	# of an item at a time.
	out=$(python3 "$FIXTURES/restart/events.py" "$M/events" 0 2 2 2>&1) || fail_with "$out"
}

# round N ITEM stage|recipe|rerun NAME requeue|fail : makes ITEM's NAME run and stall (rerun:
# `rerun NAME` of a done item), writes documents, kills the daemon and mounts again, then checks
# the interrupted run and the item.
round()
{
	local n=$1 item=$2 kind=$3 name=$4 mode=$5 key="$2+$4" d=$M/$2 pid st log ev0 ev1 out p
	note "round $n: kill -9 while $kind $name of $item runs; on_interrupt $mode"
	set_mode "$mode"
	set_blocks "$key"
	wait_for idle "$item"
	st=$(item_state "$item")
	if [ "$kind" = rerun ]; then
		assert_eq "done" "$st" "state of $item before its rerun"
		ctl "$M" "$item" "rerun $name"
	elif [ "$st" = new ]; then
		ctl "$M" "$item" advance
	elif [ "$kind" = recipe ]; then
		ctl "$M" "$item" "run validate"
	else
		ctl "$M" "$item" "run $name"
	fi
	wait_for live_pid "$key"
	pid=$(live_pid "$key")
	# Its output so far is in its log (streamed), before the kill.
	if [ "$kind" = stage ]; then
		wait_for grep -qs "started as $pid " "$d"/stages/*-"$name".log
	else
		wait_for grep -qs "started as $pid " "$d"/validation/logs/*-"$name"-*.log
	fi
	write_docs "$n"
	ev0=$(grep -c '"type":"interrupted"' "$d/events" || true)

	kill_and_remount

	# The interrupted run is recorded as such, with its partial log.
	if [ "$kind" = stage ]; then
		log=$(grep -ls "started as $pid " "$d"/stages/*-"$name".log) ||
			fail_with "no stage log holds the output of $key (pid $pid)"
		assert_contains "$(cat "$log")" "interrupted" "log $log of the interrupted stage"
		grep -q "\"type\":\"stage_finished\".*\"status\":\"interrupted\".*\"log\":\"stages/${log##*/}\"" \
			"$d/events" || fail "no stage_finished event with status interrupted for $log:" \
			"$(grep -v '"type":"recipe_' "$d/events" | tail -n 8)"
	else
		python3 - "$d" "$pid" "$name" <<'PY' || fail_with "$key (pid $pid) is not recorded as interrupted"
import json, os, sys
d, pid, name = sys.argv[1:]
for line in open(os.path.join(d, "validation/registry.jsonl")):
    o = json.loads(line)
    if o.get("recipe") != name or o.get("source") != "engine":
        continue
    log = open(os.path.join(d, o["evidence"])).read()
    if "started as %s " % pid not in log:
        continue
    if o["status"] != "interrupted":
        sys.exit("%s run %s: status %s, want interrupted" % (name, o["run"], o["status"]))
    if "interrupted" not in log.split("started as %s " % pid, 1)[1]:
        sys.exit("%s: the log does not say interrupted:\n%s" % (o["evidence"], log))
    sys.exit(0)
sys.exit("no registry line of %s has the log of pid %s" % (name, pid))
PY
		grep -q "\"type\":\"recipe_finished\",\"recipe\":\"$name\".*\"status\":\"interrupted\"" \
			"$d/events" || fail "no recipe_finished event with status interrupted for $name"
	fi
	if [ -s "$d/validation/registry.jsonl" ]; then
		out=$(reg check "$d/validation/registry.jsonl" "$d" 2>&1) || fail "registry of $item: $out"
	fi
	ev1=$(grep -c '"type":"interrupted"' "$d/events" || true)
	[ "$ev1" -gt "$ev0" ] || fail "no interrupted event for $item"

	# Re-queued (it runs again, as a new run) or failed, as on_interrupt says; an interrupted
	# rerun leaves the item as it was (done).
	if [ "$kind" = rerun ]; then
		assert_eq "done" "$(item_state "$item")" "state of $item after an interrupted rerun"
		assert_contains "$(status_field "$M" "$item" last_error)" "interrupted" "last_error of $item"
		if p=$(live_pid "$key"); then
			fail_with "$key runs again (pid $p) after an interrupted rerun"
		fi
	elif [ "$mode" = requeue ]; then
		wait_for live_other "$key" "$pid"
		st=$(item_state "$item")
		[ "$st" = running ] || fail "$item: state $st after a re-queued interruption, want running"
	else
		assert_eq failed "$(item_state "$item")" "state of $item after an interruption with on_interrupt fail"
		assert_contains "$(status_field "$M" "$item" last_error)" "interrupted" "last_error of $item"
		if p=$(live_pid "$key"); then
			fail_with "$key runs again (pid $p) although on_interrupt is fail"
		fi
	fi
	check_docs
	check_no_violation
}

round 1 a stage plan requeue
round 2 b recipe 11-cpu fail
round 3 a recipe 13-gpu requeue
round 4 c stage review fail
round 5 b recipe 14-gpu requeue
round 6 c recipe 12-cpu fail
round 7 a rerun 13-gpu requeue

# Everything completes: what failed by interruption is advanced again.
note "completing"
set_blocks
for i in $ITEMS; do
	for _ in 1 2 3; do
		wait_for idle "$i"
		[ "$(item_state "$i")" = failed ] || break
		assert_contains "$(status_field "$M" "$i" last_error)" "interrupted" "last_error of failed $i"
		ctl "$M" "$i" advance
	done
	wait_state "$M" "$i" "done"
	reg check "$M/$i/validation/registry.jsonl" "$M/$i" ||
		fail "registry of $i: $(reg check "$M/$i/validation/registry.jsonl" "$M/$i" 2>&1)"
	assert_eq "## Verdict: pass" "$(last_line "$M/$i/change-validation.md")" "verdict of $i"
	[ "$(reg count "$M/$i/validation/registry.jsonl" status=interrupted)" -gt 0 ] ||
		fail "$i: no interrupted line in its registry"
done
check_docs
check_no_violation
for i in $ITEMS; do
	for n in plan 11-cpu 12-cpu 13-gpu 14-gpu review; do
		if p=$(live_pid "$i+$n"); then
			fail_with "$i+$n still runs at the end (pid $p)"
		fi
	done
done
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check of the mounted store failed: $out"
exit 0

