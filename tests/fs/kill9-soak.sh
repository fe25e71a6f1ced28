#!/usr/bin/env bash
# The kill -9 soak: a workload of every kind of write the store keeps (new documents, rewrites
# that add revisions, external registry lines appended with >>, temp-then-rename saves, hard
# links, user.* xattrs, subdirectories) runs in an item while a stage of another item prints
# (2,000 lines a second, so that 200 cycles keep its logs small); the daemon is killed with
# SIGKILL at a random moment; the store mounts again.
# After each cycle: `packetfs check` finds the store clean, every acknowledged operation of the
# cycle is there exactly once (tests/fixtures/soak.py: lost, doubled, corrupt; those of every
# cycle so far, every 25th cycle and at the end), and the interrupted stage run says so in its
# log. The suite runs 8 cycles; the full soak runs on demand:
#
#	PFS_SOAK_CYCLES=200 PFS_TEST_TIMEOUT=3600 bash tests/run.sh fs/kill9-soak
#
# test-timeout: 300
. "$(dirname "$0")/../lib.sh"
cycles=${PFS_SOAK_CYCLES:-8}
make_repo
pipeline_store "{\"name\": \"plan\", \"run\": $(stage_run talk.sh 200)}"
new_item docs
new_item talk
d=$M/docs

ctl "$M" talk "run plan"
journals=()
# A random moment up to 0.5 s after the workload's first acknowledged operation, the same
# sequence for a given seed.
RANDOM=${PFS_SOAK_SEED:-4242}
for c in $(seq 1 "$cycles"); do
	wait_for test -n "$(newest_stage_log talk)"
	log=$(newest_stage_log talk)
	wait_for grep -q '^line 100$' "$M/talk/stages/$log"
	journal=$T/journal-$c.jsonl
	journals+=("$journal")
	python3 "$FIXTURES/soak.py" work "$d" "$journal" "$c" 2>"$T/work-$c.err" &
	worker=$!
	wait_for grep -q '"state": "ack"' "$journal"
	sleep "0.$((RANDOM % 6))"
	kill_daemon
	wait "$worker" || fail "cycle $c: the workload failed otherwise than by losing its mount: $(cat "$T/work-$c.err")"
	mount_store "$M"
	wait_for grep -q 'interrupted' "$M/talk/stages/$log"
	out=$("$PFS" check "$STORE" 2>&1) || fail "cycle $c: packetfs check after kill -9: $out"
	# This cycle's operations each time; those of every cycle so far every 25th cycle and last.
	if [ "$((c % 25))" = 0 ] || [ "$c" = "$cycles" ]; then
		out=$(python3 "$FIXTURES/soak.py" check "$d" "${journals[@]}" 2>&1) ||
			fail "cycle $c (all cycles): $out"
	else
		out=$(python3 "$FIXTURES/soak.py" check "$d" "$journal" 2>&1) || fail "cycle $c: $out"
	fi
	note "cycle $c: $(echo "$out" | head -n 1); $(echo "$out" | tail -n 1)"
done
echo "$cycles cycles: $(echo "$out" | tail -n 1)"
