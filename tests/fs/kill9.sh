#!/usr/bin/env bash
# Once close() returns, the content is committed: it survives kill -9 of the daemon, the store
# mounts again, and `packetfs check` finds it clean.
. "$(dirname "$0")/../lib.sh"
mount_item

echo "survives kill -9" >"$d/notes.md"
for i in $(seq 1 20); do
	echo "revision $i" >"$d/counter.md"
done
mkdir "$d/sub"
printf 'nested\n' >"$d/sub/deep.md"
python3 - "$d/fsynced.md" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"fsynced\n")
os.fsync(fd)
os.close(fd)
PY

old=$DAEMON
kill_daemon

mount_store "$M"
[ "$DAEMON" != "$old" ] || fail "the same daemon pid after kill -9"
d=$M/fix-1
assert_file_eq "$d/notes.md" $'survives kill -9\n'
assert_file_eq "$d/counter.md" $'revision 20\n'
assert_file_eq "$d/sub/deep.md" $'nested\n'
assert_file_eq "$d/fsynced.md" $'fsynced\n'
last=$(ls "$d/.history" | sed -n 's/^counter\.md@//p' | sort -n | tail -n 1)
assert_file_eq "$d/.history/counter.md@$last" $'revision 20\n'
assert_eq new "$(status_field "$M" fix-1 state)" "state after restart"

out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after kill -9 failed: $out"

# The mount works as before.
echo "after restart" >"$d/after.md"
assert_file_eq "$d/after.md" $'after restart\n'
exit 0
