#!/usr/bin/env bash
# The FUSE workers that wait for requests (`-o max_idle_threads=N`, default 4, docs/design.md
# "FUSE session options and why"): after a burst of parallel readers the daemon keeps at most N
# threads waiting in the FUSE device, and still serves; a value of it or of max_threads
# (tests/fs/max-threads.sh) that is not a number from 1 to 64 is refused by name before
# anything is mounted.
. "$(dirname "$0")/../lib.sh"
make_store
mkdir -p "$T/mnt"
for opt in max_idle_threads max_threads; do
	for v in 0 65 x 3x -1 +4 123; do
		out=$("$PFS" mount "$STORE" "$T/mnt" -o "$opt=$v" 2>&1) && fail "-o $opt=$v mounted"
		assert_contains "$out" "packetfs: mount: $opt=$v: not a number from 1 to 64"
		mountpoint -q "$T/mnt" && fail "-o $opt=$v left a mount"
	done
done

# waiting_workers : the daemon's threads asleep in the FUSE device's read.
waiting_workers()
{
	grep -lx fuse_dev_do_read /proc/"$DAEMON"/task/*/wchan 2>/dev/null | wc -l
}

# burst N : N parallel readers of every document, twice over.
burst()
{
	local i
	for ((i = 0; i < $1; i++)); do
		(for r in 1 2; do cat "$M"/fix-*/notes-*.md >/dev/null; done) &
	done
	wait
}

# settled_at_most N : waits until at most N workers wait in the device (the others end after
# their last request); fails after 10 s.
settled_at_most()
{
	local n end=$((SECONDS + 10))
	while n=$(waiting_workers) && [ "$n" -gt "$1" ]; do
		[ $SECONDS -lt $end ] || fail "$n workers wait for requests, more than $1"
		sleep 0.1
	done
	[ "$n" -ge 1 ] || fail "no worker waits for requests"
}

# Ten workers at most (the default is the CPUs, which on a small machine caps the idle ones
# too): the idle bound is what each mount shows.
for limit in 2 4; do
	if [ "$limit" = 4 ]; then
		MOUNT_OPTS=max_threads=10 mount_store
	else
		MOUNT_OPTS=max_idle_threads=$limit,max_threads=10 mount_store
	fi
	[ -e "$M/fix-1" ] || {
		for i in 1 2 3; do
			new_item "fix-$i"
			for j in $(seq 20); do echo "note $i $j" >"$M/fix-$i/notes-$j.md"; done
		done
	}
	burst 8
	settled_at_most "$limit"
	assert_file_eq "$M/fix-3/notes-20.md" $'note 3 20\n'
	umount_store
done
exit 0
