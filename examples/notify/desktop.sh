#!/bin/sh
# desktop.sh - a packetfs notifier that shows each event it is given as a desktop notification
# (notify-send, from the libnotify-bin package): the item and its state as the summary, the
# stage and the reason of a failure as the body.
#
# Wire it into .packetfs/pipeline.json:
#
#   "notify": [{"on": ["waiting", "blocked", "failed", "done"],
#               "run": ["/usr/share/packetfs/examples/notify/desktop.sh"]}]
#
# notify-send needs the desktop session's bus: mount the store from inside that session (so
# that the daemon inherits DBUS_SESSION_BUS_ADDRESS), or set the address in the environment
# the daemon starts with. packetfs runs the notifier with the event as one JSON object on stdin
# and PACKET_ITEM, PACKET_STATE, PACKET_EVENT and PACKET_STAGE in its environment.
set -eu

event=$(cat)
why=""
if command -v python3 >/dev/null 2>&1; then
	why=$(printf '%s' "$event" |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("last_error", ""))' \
			2>/dev/null) || why=""
fi

urgency=normal
case "$PACKET_STATE" in
failed | blocked) urgency=critical ;;
esac
if [ "$PACKET_EVENT" = state ]; then
	summary="packetfs: $PACKET_ITEM is $PACKET_STATE"
else
	summary="packetfs: $PACKET_ITEM: $PACKET_EVENT"
fi
body="stage: ${PACKET_STAGE:-none}"
[ -z "$why" ] || body="$body
$why"

exec notify-send --app-name=packetfs --urgency="$urgency" "$summary" "$body"
