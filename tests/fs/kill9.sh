#!/usr/bin/env bash
# Once close() returns, the content is committed: it survives kill -9 of the daemon, the store
# mounts again, and `packetfs check` finds it clean. So does what fsync through a read-only
# descriptor committed of another descriptor's writes, that one still open.
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
# What a descriptor still open wrote, committed by fsync through another, read-only one.
python3 - "$d/held.md" "$T/held-ready" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"held open\n")
open(sys.argv[2], "w").close()
time.sleep(600)
PY
holder=$!
wait_for test -e "$T/held-ready"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)' \
	"$d/held.md" || fail "fsync through a read-only descriptor failed"

old=$DAEMON
kill_daemon
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

mount_store "$M"
[ "$DAEMON" != "$old" ] || fail "the same daemon pid after kill -9"
d=$M/fix-1
assert_file_eq "$d/notes.md" $'survives kill -9\n'
assert_file_eq "$d/counter.md" $'revision 20\n'
assert_file_eq "$d/sub/deep.md" $'nested\n'
assert_file_eq "$d/fsynced.md" $'fsynced\n'
assert_file_eq "$d/held.md" $'held open\n'
last=$(ls "$d/.history" | sed -n 's/^counter\.md@//p' | sort -n | tail -n 1)
assert_file_eq "$d/.history/counter.md@$last" $'revision 20\n'
assert_eq new "$(status_field "$M" fix-1 state)" "state after restart"

out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after kill -9 failed: $out"

# The mount works as before.
echo "after restart" >"$d/after.md"
assert_file_eq "$d/after.md" $'after restart\n'
exit 0
