#!/usr/bin/env bash
# Bad ctl commands fail the write with EINVAL and change nothing (SPEC §4, §8): an unknown verb
# (also an over-long one), a missing or an extra argument, `run` of an unknown stage, `rerun`
# of an unknown recipe, a last line without newline (refused at close), and illegal commands
# while a stage runs (advance, run, rerun). After each, status (but for "updated" and the
# elapsed seconds of what runs),
# status.json, the item's events, stages/ and the registry are as they were; archive and rmdir
# while a stage runs are EBUSY. (Replaces tests/bad/ctl-unknown.sh.)
. "$(dirname "$0")/../lib.sh"
pipeline_item "$(stage_json plan plan.md sleep.sh "$T/pids")" "$(print_stage)"

# snapshot : everything a refused command must leave as it was.
snapshot()
{
	echo "--- status"
	grep -v '^updated:' "$d/status" | sed -E 's/\([0-9]+ s\)/(N s)/g'
	echo "--- status.json"
	sed -E 's/"updated"[[:space:]]*:[[:space:]]*"[^"]*"//; s/\([0-9]+ s\)/(N s)/g' "$d/status.json"
	echo "--- events"
	grep -c . "$d/events" || true
	echo "--- all events"
	grep -c . "$M/events" || true
	echo "--- stages"
	ls "$d/stages"
	echo "--- registry"
	cat "$d/validation/registry.jsonl"
	echo "--- documents"
	ls "$d"
}

# refused COMMAND... : each command line must fail with EINVAL and change nothing.
refused()
{
	local cmd before
	for cmd in "$@"; do
		before=$(snapshot)
		assert_fails_with EINVAL sh_write "$d/ctl" "$cmd"$'\n'
		assert_eq "$before" "$(snapshot)" "item after the refused command '$cmd'"
	done
}

long_arg=$(printf 'x%.0s' $(seq 300))
refused frobnicate "advance now" "approve please" "hold on" "release it" "archive all" \
	run rerun "run no-such-stage" "run plan print" "rerun 99-no-such-recipe" \
	"rerun 01-build 02-lint" averyveryverylongverbname "run $long_arg"

# A last line without a newline is applied on close: still refused, at close.
before=$(snapshot)
assert_fails_with EINVAL write_then_close "$d/ctl" TRUNC frobnicate
assert_eq "$before" "$(snapshot)" "item after a refused last line without newline"
assert_eq new "$(status_field "$M" fix-1 state)" "state after refused commands"
[ -z "$(ls "$d/stages")" ] || fail "a refused command started a stage: $(ls "$d/stages")"

# Illegal while a stage runs: advance, run STAGE, rerun RECIPE.
ctl "$M" fix-1 advance
wait_state "$M" fix-1 running
wait_for test -s "$T/pids"
wait_for grep -q "sleeping as" "$d"/stages/*-plan.log
refused advance "run print" "run plan" "rerun 02-lint" frobnicate
assert_eq running "$(status_field "$M" fix-1 state)" "state after refused commands"
assert_eq plan "$(status_field "$M" fix-1 stage)" "stage after refused commands"
assert_eq 1 "$(ls "$d/stages" | grep -Ecx '[0-9]+-plan\.log')" "plan runs"
# archive while a stage runs is EBUSY, and so is rmdir.
assert_fails_with EBUSY sh_write "$d/ctl" $'archive\n'
assert_fails_with EBUSY rmdir "$d"
[ -d "$d" ] || fail "item gone after a refused archive"
ctl "$M" fix-1 cancel
wait_state "$M" fix-1 failed
exit 0
