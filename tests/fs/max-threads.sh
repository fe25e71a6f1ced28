#!/usr/bin/env bash
# The most FUSE workers that run at once (`-o max_threads=N`, default the CPUs the daemon may
# run on, from 2 to 10; docs/design.md "FUSE session options and why"): with one, a burst of
# parallel readers starts no thread and each reader reads what was written; a trigger whose
# handler waits for the pipeline's loop, and stages that write through the mount meanwhile,
# still run the pipeline to its publish gate. Bad values: tests/fs/idle-threads.sh.
. "$(dirname "$0")/../lib.sh"
export MOUNT_OPTS=max_threads=1
std_item 01-build
for j in $(seq 20); do echo "note $j" >"$d/notes-$j.md"; done

# threads : the daemon's threads now.
threads()
{
	ls /proc/"$DAEMON"/task | wc -l
}

before=$(threads)
for i in $(seq 8); do
	(for r in 1 2 3; do cat "$d"/notes-*.md >/dev/null; done) &
done
most=$before
while [ -n "$(jobs -rp)" ]; do
	n=$(threads)
	sleep 0.02
	[ "$n" -le "$most" ] || most=$n
done
wait
[ "$most" -le "$before" ] ||
	fail "the daemon went from $before threads to $most during 8 parallel readers"
assert_file_eq "$d/notes-20.md" $'note 20\n'
# one_waiting : the one worker waits in the FUSE device's read again.
one_waiting()
{
	[ "$(grep -lx fuse_dev_do_read /proc/"$DAEMON"/task/*/wchan 2>/dev/null | wc -l)" = 1 ]
}
wait_for one_waiting

printf 'Make the greeting say "new".\n' >"$d/brief.md"
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
assert_eq 1 "$(reg count "$r" recipe=01-build status=validated source=engine)" "validated lines"
assert_contains "$(cat "$d/change.md")" "iteration 1: changed the greeting" "change.md"
exit 0
