#!/usr/bin/env bash
# inotify watchers on an item directory see writes through the mount (CLOSE_WRITE) and
# temp-file-then-rename saves (MOVED_TO), as on a local disk; a watcher of a view sees the
# engine's own change of it (CLOSE_WRITE of the mount's events after a mkdir) through the
# notifier's replay (fs/notify.h), whose handles are opened without FLUSH: where the kernel's
# fuse tracepoint is readable, that replay sends none.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_trace.sh"
mount_item

bg inotifywait -m -e close_write,moved_to,create --format '%e %f' "$d" >"$T/events.txt" \
	2>"$T/inotify.err"
wait_for grep -q 'Watches established' "$T/inotify.err"

echo hello >"$d/notes.md"
wait_for grep -qx 'CREATE notes.md' "$T/events.txt"
wait_for grep -qx 'CLOSE_WRITE,CLOSE notes.md' "$T/events.txt"

printf 'plan v2\n' >"$d/.plan.md.tmp"
mv "$d/.plan.md.tmp" "$d/plan.md"
wait_for grep -qx 'MOVED_TO plan.md' "$T/events.txt"

sed -i 's/v2/v3/' "$d/plan.md"
wait_for bash -c '[ "$(grep -cx "MOVED_TO plan.md" "$1")" -ge 2 ]' _ "$T/events.txt"
assert_file_eq "$d/plan.md" $'plan v3\n'

# replayed NAME : makes the item NAME and waits (at most 20 s) until a watcher of the mount's
# events has seen its CLOSE_WRITE (the replay of the item_created event) into T/replay.txt.
# Always returns 0, so that requests_to, which runs it, always switches its tracing off again:
# what the watcher saw is checked after.
replayed()
{
	local w
	inotifywait -e close_write -t 20 "$M/events" >"$T/replay.txt" 2>"$T/replay.err" &
	w=$!
	wait_for grep -q 'Watches established' "$T/replay.err"
	mkdir "$M/$1"
	wait "$w" || true
}
n=$(requests_to "$M" FUSE_FLUSH replayed second)
[ -n "$n" ] || replayed second # no tracepoint to count with: the replay alone
assert_contains "$(cat "$T/replay.txt")" "CLOSE_WRITE" \
	"what a watcher of events saw after mkdir second ($(cat "$T/replay.err"))"
[ -z "$n" ] || assert_eq 0 "$n" "FLUSH requests while the notifier replayed a change"
exit 0
