#!/usr/bin/env bash
# Writing nothing to ctl from a process the daemon cannot identify (it runs in its own pid
# namespace, so the kernel gives it pid 0 for every caller outside): the advance waits for
# the release, which the kernel sends after close(2) returned. `: > ctl; head -1 ctl` must
# still read `advance: ok` and status the stage it started, every time, from bash and from
# dash, and a command written after it must come after it. The items are held, so an advance
# not yet applied shows as ctl's previous result (`hold: ok`) and an empty stage in status.
. "$(dirname "$0")/../lib.sh"
make_repo
pipeline_with "$T/pipeline.json" "$(plan_stage 02-lint)" "$(print_stage)"
make_store "$T/pipeline.json"
mkdir -p "$T/mnt"
MOUNTS+=("$T/mnt")
unshare --pid --fork "$PFS" mount "$STORE" "$T/mnt" -f </dev/null >"$T/daemon.log" 2>&1 &
DAEMON_PIDS+=("$!")
wait_for test -e "$T/mnt/.packetfs/version"
M=$T/mnt
TRIES=${CTL_PIDNS_TRIES:-20}

for sh in bash dash; do
	command -v "$sh" >/dev/null || fail "$sh is not installed"
	for i in $(seq 1 "$TRIES"); do
		item=$sh-$i
		new_item "$item"
		ctl "$M" "$item" hold
		got=$("$sh" -c ': > "$1/ctl"; head -n 1 "$1/ctl"' "$sh" "$M/$item") ||
			fail "$sh: : > ctl; head -1 ctl failed"
		assert_eq "advance: ok" "$got" "$sh, try $i: ctl's first line after : > ctl"
		# and status, read right after the close, shows the stage that advance started.
		new_item "$item-st"
		ctl "$M" "$item-st" hold
		got=$("$sh" -c ': > "$1/ctl"; sed -n "s/^stage: //p" "$1/status"' "$sh" "$M/$item-st") ||
			fail "$sh: : > ctl; sed status failed"
		assert_eq plan "$got" "$sh, try $i: the stage in status after : > ctl"
	done
done

# A command written right after the empty write is applied after its advance: ctl reads the
# answer to that command, not the advance's. The command is release, which every state takes
# (a cancel would be refused once the fast plan stage advance started had already ended).
new_item order
ctl "$M" order hold
bash -c ': > "$1/ctl"; echo release > "$1/ctl"' bash "$M/order" || fail ": > ctl; echo release > ctl failed"
assert_eq "release: ok" "$(head -n 1 "$M/order/ctl")" "ctl's first line after advance then release"
exit 0
