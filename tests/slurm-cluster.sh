#!/usr/bin/env bash
# tests/slurm-cluster.sh start DIR | stop DIR : a one-node Slurm cluster for the tests of the
# slurm executor (tests/pipeline/slurm-*.sh), from Debian's slurm-wlm and munge packages.
#
# start writes a private configuration to DIR (slurm.conf, cgroup.conf, gres.conf with two
# stand-in GPUs, /dev/null and /dev/zero; the scheduler looks at pending jobs every second, not
# every minute, so a job the tests release starts at once), starts munged unless one answers
# already, then
# slurmctld and slurmd on ports of their own (so an installed cluster is left alone), and waits
# until the node takes jobs. It prints the line `SLURM_CONF=DIR/slurm.conf` that clients
# (sbatch, squeue, scontrol, scancel, and through them the packetfs daemon) need in their
# environment.
# PFS_SLURM_PORT sets slurmctld's port (slurmd takes the next one); by default the first pair
# from 16817 on where nothing listens, so that two runs of the suite on one machine each get a
# cluster of their own. Exit 0 when the cluster runs; 1 with the reason on stderr when it cannot
# start. Needs root.
# stop ends the daemons that start started (their pid files are in DIR). munged is shared: each
# cluster is listed in $USERS while it runs, and munged, when a cluster started it, is stopped
# with the last one listed (a listed directory that no longer exists is a run that died).
set -uo pipefail

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || {
	echo "usage: $0 start|stop DIR" >&2
	exit 2
}

# gone PID : whether the process has exited (a zombie counts: nobody may reap it).
gone()
{
	local st
	st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

USERS=/run/munge/packetfs-test-clusters

# cluster_key : this cluster's file in $USERS.
cluster_key()
{
	printf '%s/%s.cluster' "$USERS" "$(printf '%s' "$dir" | sha256sum | cut -c1-16)"
}

# munged_unused : drops this cluster (and those whose directory is gone) from $USERS; true when
# none is left.
munged_unused()
{
	local f
	rm -f "$(cluster_key)"
	for f in "$USERS"/*.cluster; do
		[ -f "$f" ] || continue
		[ -d "$(cat "$f")" ] || rm -f "$f"
	done
	! ls "$USERS"/*.cluster >/dev/null 2>&1
}

stop()
{
	local f p pids=() i
	# munged goes with the last cluster, when a cluster started it.
	if [ -d "$USERS" ] && munged_unused && [ -f "$USERS/munged.pid" ]; then
		mv -f "$USERS/munged.pid" "$dir/munged.started"
	fi
	for f in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.started; do
		[ -f "$f" ] || continue
		p=$(cat "$f" 2>/dev/null)
		[ -n "$p" ] && kill "$p" 2>/dev/null && pids+=("$p")
		rm -f "$f"
	done
	# They write their state files as they exit: wait, so that DIR can be removed.
	for p in "${pids[@]}"; do
		for i in $(seq 1 100); do
			gone "$p" && break
			sleep 0.1
		done
	done
	return 0
}

if [ "$cmd" = stop ]; then
	stop
	exit 0
fi

why()
{
	echo "slurm-cluster: $*" >&2
	[ -f "$dir/slurmctld.log" ] && tail -n 5 "$dir/slurmctld.log" >&2
	[ -f "$dir/slurmd.log" ] && tail -n 5 "$dir/slurmd.log" >&2
	stop
	exit 1
}

[ "$(id -u)" = 0 ] || why "needs root (slurmd runs jobs as their users)"
for p in slurmctld slurmd sbatch squeue scontrol munged; do
	command -v "$p" >/dev/null 2>&1 || why "$p is not installed (Debian: slurm-wlm munge)"
done
mkdir -p "$dir/state" "$dir/spool" || why "cannot make $dir"
host=$(hostname -s)
# One start at a time on a machine, so that two do not pick the same ports or both start munged;
# the lock goes with this process (the daemons it starts do not inherit it).
exec 9>/run/lock/packetfs-test-slurm-cluster.lock && flock 9 || why "cannot take the start lock"

# listening PORT : whether something accepts connections on PORT here.
listening()
{
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
if [ -n "${PFS_SLURM_PORT:-}" ]; then
	port=$PFS_SLURM_PORT
else
	port=16817
	while listening "$port" || listening "$((port + 1))"; do
		port=$((port + 2))
		[ "$port" -lt 17017 ] || why "no free pair of ports between 16817 and 17017"
	done
fi

# munge: the package made /etc/munge/munge.key; one munged per machine, shared by the clusters.
mkdir -p /run/munge "$USERS" && chown munge:munge /run/munge 2>/dev/null
printf '%s\n' "$dir" >"$(cluster_key)"
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	runuser -u munge -- /usr/sbin/munged 2>"$dir/munged.err" 9>&- || why "munged: $(cat "$dir/munged.err")"
	# munged forks into the background and writes its pid file.
	cp /run/munge/munged.pid "$USERS/munged.pid" 2>/dev/null ||
		pgrep -o -u munge -x munged >"$USERS/munged.pid"
	munge -n | unmunge >/dev/null 2>&1 || why "munge does not answer"
fi

cat >"$dir/slurm.conf" <<EOF
ClusterName=packetfs-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
ProctrackType=proctrack/pgid
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmdSpoolDir=$dir/spool
StateSaveLocation=$dir/state
SlurmUser=root
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MinJobAge=43200
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
printf 'NodeName=%s Name=gpu File=/dev/null\nNodeName=%s Name=gpu File=/dev/zero\n' \
	"$host" "$host" >"$dir/gres.conf"
export SLURM_CONF=$dir/slurm.conf

slurmctld -i >"$dir/slurmctld.out" 2>&1 9>&- || why "slurmctld did not start: $(tail -n 3 "$dir/slurmctld.out")"
slurmd >"$dir/slurmd.out" 2>&1 9>&- || why "slurmd did not start: $(tail -n 3 "$dir/slurmd.out")"
for _ in $(seq 1 150); do
	state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
	case "$state" in
	idle | mix | alloc) echo "SLURM_CONF=$SLURM_CONF"; exit 0 ;;
	down* | drain* | inval*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 ;;
	esac
	sleep 0.2
done
why "the node did not become idle (state: ${state:-none})"
