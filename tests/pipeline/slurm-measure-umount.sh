#!/usr/bin/env bash
# The daemon unmounted (a plain umount) while a head run of a measured batch runs as a Slurm
# job: the job goes on past the umount, as any Slurm job; at the next mount that run is not
# followed again (its batch is gone with the daemon) but recorded once, as interrupted, with its
# side and its job, which is cancelled in Slurm (its log says so); the validate stage runs
# again, so the batch runs again from its first run, each run a job again, and ends with its
# verdict.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
need_slurm
copy_recipes slurm
printf '%s\n' '#!/bin/sh' '# summary: the benchmark, base against head' '# needs: none' \
	'# measure: base' '# repeat: 2' "exec '$FIXTURES/measure/bench.sh'" >"$RECIPES/07-bench.sh"
chmod +x "$RECIPES/07-bench.sh"
export BENCH_ORDER=$T/order
echo 600 >"$T/order.sleep"
slurm_item 07-bench
verdict_is() { [ "$(status_field "$M" fix-1 verdict)" = "$1" ]; }

ctl "$M" fix-1 advance
wait_for grep -q '^head ' "$T/order"
id=$(squeue --noheader --format=%i --name="packetfs-fix-1-07-bench" --states=RUNNING)
[[ "$id" =~ ^[0-9]+$ ]] || fail "no single running job of the head run: '$id'"
umount_store
assert_eq RUNNING "$(slurm_job_state "$id")" "job $id after umount"
rm "$T/order.sleep"
mount_store "$M"
wait_for verdict_is pass
assert_eq 1 "$(reg count "$r" recipe=07-bench status=interrupted)" "interrupted lines"
assert_eq head "$(reg field "$r" 0 side recipe=07-bench status=interrupted)" "the interrupted run's side"
assert_eq "$id" "$(reg field "$r" 0 job_id recipe=07-bench status=interrupted)" "its job"
assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of its job"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=07-bench status=interrupted)")" \
	"# packetfs: Slurm job $id of this measured run cancelled"
assert_eq validated "$(reg field "$r" -1 status recipe=07-bench)" "the recipe's line after the rerun"
assert_eq 3 "$(reg count "$r" recipe=07-bench status=validated side=base)" "base lines: one before, two after"
assert_eq 2 "$(reg count "$r" recipe=07-bench status=validated side=head)" "head lines after the rerun"
assert_eq 6 "$(python3 -c '
import json, sys
print(len({json.loads(l)["job_id"] for l in open(sys.argv[1]) if "side" in json.loads(l)}))' "$r")" \
	"distinct jobs of the runs"
[ -z "$(ls -A "$STORE/measure" 2>/dev/null)" ] || fail "checkouts left: $(ls "$STORE/measure")"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
