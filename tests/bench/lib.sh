# tests/bench/lib.sh - the benchmark's mounts and cleanup, its measuring and its building
# blocks; sourced by tests/bench/run.sh, which sets the globals they use (B, RES, NOTES, META,
# CHILD, MOUNTS, DAEMONS, SCALE, RUNS, PFS, ...) before it calls any of them.
# shellcheck shell=bash disable=SC2154

# --- mounts and cleanup ----------------------------------------------------------------------

# forget_mount MNT : drops MNT from the cleanup list.
forget_mount()
{
	local i
	for i in "${!MOUNTS[@]}"; do
		if [ "${MOUNTS[$i]}" = "$1" ]; then
			unset 'MOUNTS[i]' 'DAEMONS[i]'
		fi
	done
	MOUNTS=("${MOUNTS[@]}")
	DAEMONS=("${DAEMONS[@]}")
}

# wait_gone PID : waits (bounded, 60 s) until PID has exited.
wait_gone()
{
	local i
	for ((i = 0; i < 1200; i++)); do
		pid_alive "$1" || return 0
		sleep 0.05
	done
	die "process $1 still alive after 60 s"
}

# wait_answers PATH : polls (1 ms) until stat of PATH answers, bounded (300 s).
wait_answers()
{
	local i
	for ((i = 0; i < 300000; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.001
	done
	die "$1 does not answer after 300 s"
}

# timed_mount MNT PROBE CMD... : makes MNT (listed for cleanup: MOUNTS, DAEMONS) and runs CMD,
# which mounts a FUSE file system there and daemonizes; dies when CMD fails. Then waits until
# stat of MNT/PROBE answers (no wait when PROBE is empty). Sets MOUNT_MS to the time from the
# start of CMD until then, and DAEMON_PID to the pid of the process whose command line is CMD
# (empty when there is none).
timed_mount()
{
	local mnt=$1 probe=$2 t0 t1
	shift 2
	mkdir -p "$mnt"
	MOUNTS+=("$mnt")
	DAEMONS+=("")
	t0=${EPOCHREALTIME/./}
	"$@" </dev/null || die "$* failed"
	[ -z "$probe" ] || wait_answers "$mnt/$probe"
	t1=${EPOCHREALTIME/./}
	MOUNT_MS=$(div $((t1 - t0)) 1000)
	DAEMON_PID=$(pid_of_cmdline "$@")
	DAEMONS[${#DAEMONS[@]} - 1]=$DAEMON_PID
}

# pfs_mount STORE MNT : packetfs mount (daemonized; with -o PFS_MOUNT_OPTS when that is set);
# waits until stat of MNT/.packetfs/version answers. Sets PFS_PID, and MOUNT_MS to the time
# from the start of `packetfs mount` until that stat answered (timed_mount).
pfs_mount()
{
	timed_mount "$2" .packetfs/version "$PFS" mount "$1" "$2" ${PFS_MOUNT_OPTS:+-o "$PFS_MOUNT_OPTS"}
	PFS_PID=$DAEMON_PID
	[ -n "$PFS_PID" ] || die "no daemon found for $1 on $2"
}

# pfs_umount MNT : packetfs umount, then waits for its daemon to exit.
pfs_umount()
{
	local i pid=""
	for i in "${!MOUNTS[@]}"; do
		[ "${MOUNTS[$i]}" = "$1" ] && pid=${DAEMONS[$i]}
	done
	"$PFS" umount "$1" || die "packetfs umount $1 failed"
	[ -z "$pid" ] || wait_gone "$pid"
	forget_mount "$1"
}

# bind_mount SRC MNT [PROBE] : bindfs SRC MNT with bindfs's defaults; waits until stat of
# MNT/PROBE answers (when given). Sets BIND_PID, and MOUNT_MS as pfs_mount does.
bind_mount()
{
	timed_mount "$2" "${3:-}" "$BINDFS" "$1" "$2"
	BIND_PID=$DAEMON_PID
}

bind_umount()
{
	local i pid=""
	for i in "${!MOUNTS[@]}"; do
		[ "${MOUNTS[$i]}" = "$1" ] && pid=${DAEMONS[$i]}
	done
	fusermount3 -u "$1" || die "fusermount3 -u $1 failed"
	[ -z "$pid" ] || wait_gone "$pid"
	forget_mount "$1"
}

# kill_strays SIGNAL : signals the processes (other than this shell) whose working directory
# lies under $B: stage programs and recipes this run started.
kill_strays()
{
	local p
	for p in $(find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$B" -o -lname "$B/*" \) 2>/dev/null |
		cut -d/ -f3); do
		[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || kill "-$1" "$p" 2>/dev/null || true
	done
}

cleanup()
{
	local i p
	set +e
	trap '' INT TERM HUP PIPE
	cd /
	if [ -n "${CHILD:-}" ]; then
		kill "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		fusermount3 -u -z "${MOUNTS[$i]}" 2>/dev/null
	done
	for p in "${DAEMONS[@]}"; do
		[ -n "$p" ] || continue
		for _ in $(seq 100); do
			pid_alive "$p" || break
			sleep 0.05
		done
		kill -9 "$p" 2>/dev/null
	done
	kill_strays TERM
	sleep 0.2
	kill_strays KILL
	for p in "${MOUNTS[@]}"; do
		if timeout 5 mountpoint -q "$p" 2>/dev/null; then
			echo "tests/bench/run.sh: $p still mounted; leaving $B" >&2
			return
		fi
	done
	rm -rf "$B"
}

# --- measuring ---------------------------------------------------------------------------------

# scaled BASE [MIN] : BASE * SCALE rounded, at least MIN (default 1).
scaled()
{
	awk -v b="$1" -v s="$SCALE" -v m="${2:-1}" 'BEGIN { v = int(b * s + 0.5); if (v < m) v = m; print v }'
}

# run CMD... : runs CMD as a child and waits for it. A signal interrupts `wait` at once (it
# would wait for a foreground command to end), so an interrupted run cleans up at once; the
# cleanup ends the child (CHILD).
run()
{
	local rc=0
	"$@" <&0 & # (without <&0, an asynchronous command's stdin would be /dev/null)
	CHILD=$!
	wait "$CHILD" || rc=$?
	CHILD=""
	return "$rc"
}

# py ARG... : bench.py ARG... (through run); its output in PY_OUT.
py()
{
	run "${PY[@]}" "$@" >"$B/py.out" || return
	PY_OUT=$(<"$B/py.out")
}

# timed CMD... : runs CMD (through run); sets ELAPSED to its wall time in seconds.
timed()
{
	local t0 t1 rc=0
	t0=${EPOCHREALTIME/./}
	run "$@" || rc=$?
	t1=${EPOCHREALTIME/./}
	ELAPSED=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.6f", d / 1e6 }')
	return "$rc"
}

# div A B [MUL] : A / B * MUL as a decimal.
div()
{
	awk -v a="$1" -v b="$2" -v m="${3:-1}" 'BEGIN { printf "%.6f", a / b * m }'
}

# record WL METRIC UNIT BETTER TARGET VALUE : one measured value (BETTER: higher or lower).
record()
{
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RES"
	say "  $1 $2 $5: $6 $3"
}

# note WL TEXT : a sentence of WL's note in the report.
note()
{
	printf '%s\t%s\n' "$1" "$2" >>"$NOTES"
}

drop_caches()
{
	if [ "$DROP" = 1 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
}

# --- building blocks -----------------------------------------------------------------------------

# append_printf FILE N FORMAT : N lines appended to FILE from this shell, `printf FORMAT I >>FILE`
# for I = 0 ... N-1: one open, write and close each.
append_printf()
{
	local i
	for ((i = 0; i < $2; i++)); do
		# shellcheck disable=SC2059 # the format is the caller's
		printf "$3" "$i" >>"$1"
	done
}

# make_repo DIR : a git repository with a tiny C project on branch main (as tests/lib.sh).
make_repo()
{
	git init -q -b main "$1"
	printf '#include <stdio.h>\n\nint main(void)\n{\n\tprintf("hello\\n");\n\treturn 0;\n}\n' \
		>"$1/hello.c"
	printf 'hello: hello.c\n\t$(CC) -Wall -o hello hello.c\n' >"$1/Makefile"
	printf 'hello\n*.o\n' >"$1/.gitignore"
	printf '# hello\n\nA tiny C project.\n' >"$1/README.md"
	git -C "$1" add -A
	git -C "$1" commit -q -m "initial commit"
}

# write_pipeline FILE REPO RECIPES MAX_PARALLEL STAGE_JSON... : a pipeline.json (pipeline_json)
# without GPUs.
write_pipeline()
{
	local file=$1 repo=$2 recipes=$3 par=$4
	shift 4
	pipeline_json "$file" "$repo" "$recipes" "\"gpus\": 0, \"max_parallel_recipes\": $par," "$@"
}

# new_store DIR [PIPELINE] : a repository DIR/repo and a store DIR/store over it.
new_store()
{
	make_repo "$1/repo"
	if [ $# -gt 1 ]; then
		"$PFS" init "$1/store" --repo "$1/repo" --pipeline "$2" >/dev/null ||
			die "packetfs init $1/store failed"
	else
		"$PFS" init "$1/store" --repo "$1/repo" >/dev/null || die "packetfs init $1/store failed"
	fi
}

# mounted_store DIR : the folder DIR with a new store (new_store, the default pipeline) mounted
# on DIR/mnt (pfs_mount: PFS_PID, MOUNT_MS).
mounted_store()
{
	mkdir -p "$1"
	new_store "$1"
	pfs_mount "$1/store" "$1/mnt"
}

# fill MNT PREFIX START COUNT : COUNT items through the mount (see the header); sets
# ELAPSED to the time it took.
fill()
{
	py fill "$1" "$2" "$3" "$4" "$THREADS" || die "making items on $1 failed"
	ELAPSED=$PY_OUT
}

# state_of MNT ITEM
state_of()
{
	sed -n 's/^state: *//p' "$1/$2/status" 2>/dev/null | head -n 1
}

# wait_state MNT ITEM STATE : polls ITEM's status until STATE (failed/blocked end the wait).
wait_state()
{
	local st end=$((SECONDS + STATE_BOUND))
	while :; do
		st=$(state_of "$1" "$2")
		[ "$st" = "$3" ] && return 0
		case "$st" in
		failed | blocked) die "$2: state $st while waiting for $3: $(cat "$1/$2/status")" ;;
		esac
		[ "$SECONDS" -lt "$end" ] || die "$2: state still '$st' after ${STATE_BOUND}s, want $3"
		sleep 0.1
	done
}

# plan_doc RECIPE... : a plan.md naming the recipes.
plan_doc()
{
	printf '# Plan\n\n```validation-recipes\n'
	printf '%s\n' "$@"
	printf '```\n'
}

