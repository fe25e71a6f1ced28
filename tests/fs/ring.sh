#!/usr/bin/env bash
# FUSE over io_uring (-o io_uring, fs/fs_ring.c; docs/design.md "FUSE session options and
# why"). With the fuse module's enable_uring parameter set, a mount that asks for it serves its
# requests through the rings: creates, appends, a 5 MiB file written and read back, a rename, a
# truncate, removals, xattrs, an item made by mkdir, a denied open, and writers on both CPUs at
# once, each checked against what was written; the daemon's log counts the requests the rings
# served, and a read through /dev/fuse alone would not reach that count. A kill -9 of a ring
# daemon leaves a mount that fusermount3 -u takes down, and the store mounts again with every
# closed file kept. A value given to the option is refused. Without enable_uring the mount says
# why in its log and serves through /dev/fuse.
. "$(dirname "$0")/../lib.sh"
param=/sys/module/fuse/parameters/enable_uring
[ -w "$param" ] || { echo "SKIP: $param missing (a kernel without FUSE over io_uring)" >&2; exit 77; }
was=$(cat "$param")
restore_param() { echo "$was" >"$param"; }
CLEANUP_HOOKS+=(restore_param)

# served LOG : the count of the daemon's last "io_uring: N requests served" line in LOG.
served()
{
	sed -n 's/.*io_uring: \([0-9]*\) requests served$/\1/p' "$1" | tail -n 1
}

make_store
# The option takes no value: anything else is refused by name, and nothing is mounted.
mkdir -p "$T/mnt"
for v in io_uring=1 io_uring=0 io_uringx; do
	out=$("$PFS" mount "$STORE" "$T/mnt" -o "$v" 2>&1) && fail "-o $v mounted"
	assert_contains "$out" "packetfs: mount: $v: unknown mount option"
	mountpoint -q "$T/mnt" && fail "-o $v left a mount"
done
echo 1 >"$param"
MOUNT_OPTS="io_uring,log=$T/ring.log" mount_store
queues=$(awk -F'[-,]' '{ print $NF + 1 }' /sys/devices/system/cpu/possible)
assert_contains "$(cat "$T/ring.log")" "io_uring: $queues queues, 2 threads each"
new_item fix-1
d=$M/fix-1
ops=0
for i in $(seq 200); do
	echo "line $i" >>"$d/log.md"
done
ops=$((ops + 200 * 3))
assert_eq "$(wc -l <"$d/log.md")" 200
assert_eq "$(sed -n 137p "$d/log.md")" "line 137"
head -c 5M /dev/urandom >"$T/big"
cp "$T/big" "$d/big.bin"
cmp "$T/big" "$d/big.bin" || fail "a 5 MiB file read back differs"
for i in $(seq 50); do
	printf 'file %d\n' "$i" >"$d/f-$i.md"
done
ops=$((ops + 50 * 3))
mv "$d/f-1.md" "$d/renamed.md"
assert_file_eq "$d/renamed.md" $'file 1\n'
truncate -s 3 "$d/renamed.md"
assert_file_eq "$d/renamed.md" "fil"
rm "$d/f-2.md"
[ ! -e "$d/f-2.md" ] || fail "f-2.md still there after rm"
setfattr -n user.k -v v1 "$d/f-3.md"
assert_eq "$(getfattr --only-values -n user.k "$d/f-3.md")" v1
chmod 600 "$d/f-4.md"
out=$(su nobody -s /bin/sh -c "cat '$d/f-4.md'" 2>&1) && fail "nobody read a 0600 file: $out"
assert_contains "$out" "Permission denied"
# Writers on both CPUs at once: each queue serves its own CPU's callers. Each writer places
# itself before its first write (placed from outside, it could end before taskset runs).
for cpu in 0 1; do
	(
		[ "$(nproc)" -gt 1 ] && taskset -pc "$cpu" "$BASHPID" >/dev/null
		for i in $(seq 100); do echo "cpu $cpu $i" >>"$d/cpu-$cpu.md"; done
	) &
done
wait
ops=$((ops + 200 * 3))
for cpu in 0 1; do
	assert_eq "$(wc -l <"$d/cpu-$cpu.md")" 100
	assert_eq "$(tail -n 1 "$d/cpu-$cpu.md")" "cpu $cpu 100"
done
umount_store
n=$(served "$T/ring.log")
[ -n "$n" ] && [ "$n" -ge "$ops" ] || fail "the rings served ${n:-no} requests, fewer than the $ops sent"

# kill -9 while the rings wait: the kernel lets the mount go, and nothing closed is lost.
MOUNT_OPTS="io_uring,log=$T/ring.log" mount_store
echo "after kill" >"$d/kept.md"
kill_daemon
mountpoint -q "$M" && fail "the mount stayed after kill -9 and fusermount3 -u"
mount_store
assert_file_eq "$d/kept.md" $'after kill\n'
assert_eq "$(wc -l <"$d/log.md")" 200
cmp "$T/big" "$d/big.bin" || fail "the 5 MiB file differs after the remount"
umount_store

# Without enable_uring the kernel does not offer it: the log says so, /dev/fuse serves.
echo 0 >"$param"
MOUNT_OPTS="io_uring,log=$T/plain.log" mount_store
echo plain >"$d/plain.md"
assert_file_eq "$d/plain.md" $'plain\n'
umount_store
assert_contains "$(cat "$T/plain.log")" "io_uring: the kernel does not offer it"
assert_not_contains "$(cat "$T/plain.log")" "requests served"
exit 0
