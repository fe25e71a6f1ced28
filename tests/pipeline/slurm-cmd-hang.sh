#!/usr/bin/env bash
# test-timeout: 240
# A Slurm command of the executor that hangs (here squeue, the poller's query: while it runs no
# other poll starts) has a deadline: its process group is killed and the poll counts as failed,
# and the next poll runs. Stand-ins for sbatch, squeue and scontrol on PATH: no cluster needed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"
WAIT_BOUND=120 # the deadline is 60 s

mkdir "$T/bin"
# sbatch: job 4242 at once.
printf '#!/bin/sh\necho 4242\n' >"$T/bin/sbatch"
# squeue: the first call hangs, with a child in its process group; later calls list no job.
cat >"$T/bin/squeue" <<EOS
#!/bin/sh
echo x >>"$T/squeue-calls"
if [ "\$(wc -l <"$T/squeue-calls")" = 1 ]; then
	sleep 300 &
	echo "\$\$ \$!" >"$T/squeue-pids"
	wait
fi
exit 0
EOS
# scontrol: knows no job.
printf '#!/bin/sh\necho "slurm_load_jobs error: Invalid job id specified" >&2\nexit 1\n' \
	>"$T/bin/scontrol"
standin_item
wait_for test -s "$T/squeue-pids"
read -r sq_pid sq_child <"$T/squeue-pids"
note "squeue hangs as $sq_pid (child $sq_child)"
wait_gone "$sq_pid"
wait_gone "$sq_child"
# The poller goes on: squeue runs again, and the job it does not list is looked up (scontrol
# knows none: the run ends as interrupted, the validation with it).
wait_for bash -c '[ "$(wc -l <"$1")" -ge 2 ]' _ "$T/squeue-calls"
settled fix-1 >/dev/null
assert_contains "$(cat "$M/fix-1/stages/3-validate.log")" "Slurm does not know job 4242" \
	"the validate log"
exit 0
