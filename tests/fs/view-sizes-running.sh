#!/usr/bin/env bash
# The sizes of views remembered between stats (view-sizes.sh) follow the clock too: status counts
# the seconds of a running stage ("plan (9 s)", then "plan (10 s)") and report.html draws its bar
# to now, with no change of the store meanwhile (the stage prints nothing). Every half second
# for 12 s, the size a stat gives is the size a read gives: the same as a stat just before or
# just after the read (the clock moves between the two), in one of five tries.
. "$(dirname "$0")/../lib.sh"
sleeping_item

# same_size FILE : a read of FILE gives as many bytes as a stat next to it says.
same_size()
{
	local i s1 n s2
	for i in 1 2 3 4 5; do
		s1=$(stat -c %s "$1") n=$(cat "$1" | wc -c) s2=$(stat -c %s "$1")
		[ "$n" = "$s1" ] || [ "$n" = "$s2" ] && return 0
	done
	fail "size of ${1#"$M"/}: stat says $s1 and $s2, a read between them gives $n bytes"
}

for _ in $(seq 1 24); do
	for f in "$d/status" "$d/status.json" "$d/report.html"; do
		same_size "$f"
	done
	sleep 0.5
done
assert_contains "$(cat "$d/status")" "plan (1" "status after 10 s of the stage"
exit 0
