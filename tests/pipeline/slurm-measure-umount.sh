#!/usr/bin/env bash
# The daemon unmounted (a plain umount) while a head run of a measured batch runs as a Slurm
# job: the job goes on past the umount, as any Slurm job; at the next mount that run is not
# followed again (its batch is gone with the daemon) but recorded once, as interrupted, with its
# side and its job, which is cancelled in Slurm (its log says so); the validate stage runs
# again, so the batch runs again from its first run, each run a job again, and ends with its
# verdict.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
. "$TESTS_DIR/lib_measure.sh"
slurm_head_run
umount_store
assert_eq RUNNING "$(slurm_job_state "$id")" "job $id after umount"
slurm_head_run_again "$id"
exit 0
