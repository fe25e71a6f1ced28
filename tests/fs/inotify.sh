#!/usr/bin/env bash
# inotify watchers on an item directory see writes through the mount (CLOSE_WRITE) and
# temp-file-then-rename saves (MOVED_TO), as on a local disk.
. "$(dirname "$0")/../lib.sh"
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
exit 0
