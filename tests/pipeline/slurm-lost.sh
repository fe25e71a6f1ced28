#!/usr/bin/env bash
# A job that Slurm does not know (any more) is recorded interrupted, "Slurm does not know job
# ID", and does not disturb the jobs followed with it: the daemon reads all its jobs with one
# squeue, which leaves an unknown job out when asked for several and fails when asked for that
# one alone. The job ids are made unknown on a stopped daemon's store (the run rows name ids
# that Slurm never gave); the next daemon follows them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
slurm_item 10-wait 12-wait

# db SQL : runs SQL on the (unmounted) store.
db()
{
	python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute(sys.argv[2])
c.commit()' "$STORE/packetfs.db" "$1"
}

# Both jobs run; 10-wait's is made unknown, 12-wait's is real.
ctl "$M" fix-1 advance
wait_for bash -c 'test "$(cat "$1"/*-wait*.log 2>/dev/null | grep -c "^waiting for go")" = 2' _ \
	"$d/validation/logs"
kill_daemon
db "UPDATE runs SET job_id = '99999901' WHERE name = '10-wait' AND status = 'running'"
mount_store "$M"
wait_for grep -qs '"status":"interrupted"' "$r"
assert_eq "Slurm does not know job 99999901" "$(reg field "$r" 0 note recipe=10-wait)" \
	"10-wait note"
assert_eq 0 "$(reg count "$r" recipe=12-wait)" "12-wait lines while its job waits"
touch "$T/go"
settled fix-1 >/dev/null
assert_eq 1 "$(reg count "$r" recipe=12-wait status=validated)" "12-wait validated"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=12-wait)")" "went on" "12-wait log"

# The one job followed is unknown: squeue asked for it alone fails, and says why.
rm "$T/go"
ctl "$M" fix-1 "rerun 12-wait"
wait_for bash -c 'test "$(cat "$1"/*12-wait*.log | grep -c "^waiting for go")" = 2' _ \
	"$d/validation/logs"
kill_daemon
db "UPDATE runs SET job_id = '99999902' WHERE name = '12-wait' AND status = 'running'"
mount_store "$M"
settled fix-1 >/dev/null
assert_eq interrupted "$(reg field "$r" -1 status recipe=12-wait)" "12-wait status"
assert_eq "Slurm does not know job 99999902" "$(reg field "$r" -1 note recipe=12-wait)" \
	"12-wait note"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
# The real job behind the unknown id ends too (it waits for go).
touch "$T/go"
wait_for bash -c 'test -z "$(squeue -h -t PD,R,CG,CF -o %Z | grep -F "$1")"' _ "$STORE/worktrees/"
exit 0
