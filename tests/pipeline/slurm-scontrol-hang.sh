#!/usr/bin/env bash
# Crash recovery asks Slurm (scontrol) for the job of a run whose sbatch never answered; a
# scontrol that hangs must not hang the mount: it is killed, with its process group, once its
# deadline passed, the mount comes up, and the run is recorded interrupted with the reason in its
# log. Stand-ins for sbatch, squeue and scontrol on PATH: no cluster needed.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm.sh"

mkdir "$T/bin"
# sbatch: never answers (the job id is never recorded); squeue: no jobs.
printf '#!/bin/sh\n: >"%s/sbatch-called"\nexec sleep 300\n' "$T" >"$T/bin/sbatch"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/squeue"
# scontrol: hangs (far past the 10 s deadline), with a child in its process group.
printf '#!/bin/sh\nsleep 150 &\necho "$$ $!" >"%s/scontrol-pids"\nwait\n' "$T" >"$T/bin/scontrol"
standin_item
wait_for test -e "$T/sbatch-called"
wait_state "$M" fix-1 running
assert_eq validate "$(status_field "$M" fix-1 stage)" "stage while sbatch hangs"

kill_daemon
start=$(date +%s)
mount_store "$M"
took=$(( $(date +%s) - start ))
note "the mount came up after ${took} s"
# scontrol's deadline is 10 s; the bound leaves room for a busy machine, and none for a wait on
# the stand-in's 150 s.
[ "$took" -lt 60 ] || fail "the mount took ${took} s: crash recovery waited for scontrol"
[ -s "$T/scontrol-pids" ] || fail "crash recovery did not ask scontrol"
read -r sc_pid sc_child <"$T/scontrol-pids"
wait_gone "$sc_pid"
wait_gone "$sc_child"

# The run is recorded interrupted, and its log says why its job is unknown.
wait_for test -s "$r"
assert_eq 1 "$(reg count "$r" recipe=01-build status=interrupted source=engine)" \
	"interrupted lines of 01-build"
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=01-build)")
assert_contains "$log" "the Slurm job of this run is unknown: scontrol did not answer within 10 s" \
	"the interrupted run's log"
ctl "$M" fix-1 cancel
exit 0
