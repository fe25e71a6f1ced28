#!/usr/bin/env bash
# A document held open for reading only keeps attributes the kernel may cache, as a closed one
# does (fs/fs_cache.c "Caching"); one held open for writing does not (its commits move its
# times, which the kernel does not see). Every change must still show at once. Checked with a
# reader holding the document open and the kernel holding its attributes (stat by path and
# through the reader's descriptor, before and after each change): an append through another
# handle, a writer held open and stat-ed while it writes, then closed, a truncate and a chmod
# by path. What both stats show then is what a fresh mount shows (no cache) once the reader
# closed. Where the kernel has the fuse tracepoints, also checked: a stat through the reader's
# descriptor sends no getattr, one while a writer holds the document open does, `cat` of a
# 4 MiB document sends at most two (not one per read) and no flush (a writer's close does).
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_trace.sh"
mount_item

ATTRS='%s %a %.9Y %.9Z'
# seen WHAT : size, mode, mtime and ctime of the document, by path and through the reader's
# descriptor (the kernel may hold them); both must agree. Prints them.
seen()
{
	local by_path by_fd
	by_path=$(stat -c "$ATTRS" "$d/doc.md")
	by_fd=$(stat -L -c "$ATTRS" "$FD")
	assert_eq "$by_path" "$by_fd" "attributes by path and through the reader's descriptor $1"
	echo "$by_path"
}
# fresh EXPECTED WHAT : once the reader has closed, a new mount (nothing cached) shows EXPECTED.
fresh()
{
	umount_store
	mount_store
	assert_eq "$1" "$(stat -c "$ATTRS" "$d/doc.md")" "attributes on a fresh mount against $2"
}

printf 'one\n' >"$d/doc.md"
exec 3<"$d/doc.md"
FD=/proc/$$/fd/3
seen "held open for reading" >/dev/null
printf 'two\n' >>"$d/doc.md"
seen "after an append through another handle" >/dev/null
assert_file_eq "$d/doc.md" "one
two
"
# A writer held open: stat-ed while it writes; its close commits.
exec 4>>"$d/doc.md"
printf 'three\n' >&4
assert_eq 14 "$(stat -L -c %s "$FD")" "size while a writer holds it open"
seen "while a writer holds it open" >/dev/null
exec 4>&-
a=$(seen "after the writer's close")
exec 3<&-
fresh "$a" "those after the writer's close"

exec 3<"$d/doc.md"
seen "held open again" >/dev/null
truncate -s 3 "$d/doc.md"
assert_eq 3 "$(stat -L -c %s "$FD")" "size through the reader's descriptor after truncate -s 3"
chmod 600 "$d/doc.md"
a=$(seen "after truncate and chmod")
assert_eq 600 "$(stat -L -c %a "$FD")" "mode through the reader's descriptor after chmod 600"
assert_file_eq "$d/doc.md" "one"
exec 3<&-
fresh "$a" "those after truncate and chmod"

# What the kernel is spared (where it can be counted). stat3 : three stats through the reader's
# descriptor, 20 ms apart (a timeout of 0 may still hold within one clock tick of the kernel).
stat3()
{
	local i
	for i in 1 2 3; do
		stat -L "$FD" >/dev/null
		sleep 0.02
	done
}
head -c 4194304 /dev/zero >"$d/big.bin"
exec 3<"$d/big.bin"
FD=/proc/$$/fd/3
stat -L "$FD" >/dev/null
n=$(requests_to "$M" FUSE_GETATTR stat3)
if [ -n "$n" ]; then
	assert_eq 0 "$n" "getattr requests for stats through a descriptor open for reading"
	cat "$d/big.bin" >/dev/null
	n=$(requests_to "$M" FUSE_GETATTR cat "$d/big.bin")
	[ "$n" -le 2 ] || fail "cat of a 4 MiB document sent $n getattr requests (at most 2 expected)"
	# A close of a descriptor opened only to read commits nothing, and sends nothing; a
	# writer's close commits (FLUSH).
	assert_eq 0 "$(requests_to "$M" FUSE_FLUSH cat "$d/big.bin")" "flush requests for cat"
	n=$(requests_to "$M" FUSE_FLUSH sh -c "echo x >'$d/flushed.md'")
	[ "$n" -ge 1 ] || fail "a writer's close sent no flush request"
	exec 4>>"$d/big.bin"
	n=$(requests_to "$M" FUSE_GETATTR stat3)
	[ "$n" -ge 2 ] || fail "stats while a writer holds the document open sent $n getattr" \
		"requests: cached, though its commits move its times unseen"
	exec 4>&-
else
	echo "note: no fuse tracepoints here (or not root); the request counts are not checked"
fi
exec 3<&-
