#!/usr/bin/env bash
# inotify watchers on an item directory see writes through the mount (CLOSE_WRITE) and
# temp-file-then-rename saves (MOVED_TO), as on a local disk; a watcher of a view sees the
# engine's own change of it (CLOSE_WRITE of the mount's events after a mkdir) through the
# notifier's replay (fs/notify.h), whose handles are opened without FLUSH: where the kernel's
# fuse tracepoint is readable, that replay sends none, and the replayer's walks keep what the
# kernel may cache: over five items made one after another, it asks fewer attributes than twice
# the opens it makes (the file it opens, and now and then a directory the engine's change
# dropped; when every reply to it had a timeout of 0, each walk asked again for every directory
# on its path: 2.6 per open).
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

# made N : replayed for N new items, one after another; what the watcher saw each time goes to
# T/made.txt. Always returns 0 (as replayed).
made()
{
	local i
	for ((i = 1; i <= $1; i++)); do
		replayed "made-$i"
		echo "made-$i: $(cat "$T/replay.txt")" >>"$T/made.txt"
	done
}
read -r getattrs opens < <(REQUESTS_COMM=packetfs-replay requests_to "$M" FUSE_GETATTR,FUSE_OPEN \
	made 5) || true
[ -n "${opens:-}" ] || made 5 # no tracepoint to count with: the replays alone
assert_eq 5 "$(grep -c CLOSE_WRITE "$T/made.txt")" \
	"replays seen for 5 new items ($(cat "$T/made.txt"))"
if [ -n "${opens:-}" ]; then
	[ "$opens" -ge 5 ] || fail "the replayer opened $opens files for 5 new items"
	[ "$getattrs" -lt $((2 * opens)) ] ||
		fail "the replayer asked $getattrs attributes for its $opens opens"
fi
exit 0
