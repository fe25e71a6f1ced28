#!/usr/bin/env bash
# examples/watch.sh - prints every change on a packetfs mount as it happens.
#
#	examples/watch.sh MOUNT
#
# Prints one line per change, "<UTC time> <event> <path relative to MOUNT>", e.g.
#
#	2026-11-29T16:02:11.347Z CLOSE_WRITE,CLOSE fix-1/plan.md
#	2026-11-29T16:02:11.352Z MODIFY fix-1/stages/1-plan.log
#
# for every file (or directory) created, modified, written and closed, or moved in anywhere
# on the mount (inotify CREATE, MODIFY, CLOSE_WRITE, MOVED_TO): documents written by people and
# agents, and the engine's own changes (stage logs, status, status.json, events, the registry,
# evidence.md, change.diff). SPEC §3 promises these reach inotify like any write.
#
# Runs until killed. New directories (items, stages/, ...) are watched as they appear
# (inotifywait -r); the files a directory already holds when it appears are reported then as
# CREATE, since inotify can only watch a directory from the moment it is seen. Progress and
# errors of inotifywait go to stderr: "Watches established." means the watcher is ready.
# Exits 2 on bad usage, 1 when inotifywait ends (e.g. the mount went away).
set -u
export LC_ALL=C TZ=UTC

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: watch.sh MOUNT" >&2
	exit 2
fi
MOUNT=$(cd -- "$1" && pwd) || exit 2

# say EVENT PATH : one output line, stamped with the current UTC time (milliseconds).
say()
{
	local t=$EPOCHREALTIME
	printf '%(%Y-%m-%dT%H:%M:%S)T.%.3sZ %s %s\n' "${t%.*}" "${t#*.}" "$1" "${2#"$MOUNT"/}"
}

exec 3< <(exec inotifywait -m -r -e create,modify,close_write,moved_to \
	--format '%e %w%f' -- "$MOUNT")
WATCHER=$!
trap 'kill "$WATCHER" 2>/dev/null' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

while IFS= read -r line <&3; do
	ev=${line%% *}
	path=${line#* }
	say "$ev" "$path"
	case ",$ev," in
	*,ISDIR,*)
		# A directory appeared: report what it already holds (worktree/ is a symlink,
		# not followed).
		find "$path" -mindepth 1 -type f -print 2>/dev/null |
			while IFS= read -r f; do say CREATE "$f"; done
		;;
	esac
done
echo "watch.sh: inotifywait ended" >&2
exit 1
