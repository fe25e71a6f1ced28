#!/bin/sh
# webhook.sh - a packetfs notifier that posts each event it is given to a chat webhook
# (Slack, Mattermost, Rocket.Chat and the like take {"text": "..."}), with curl.
#
# Wire it into .packetfs/pipeline.json (the daemon's environment must hold the URL, so export
# PACKETFS_WEBHOOK_URL before `packetfs mount`, or set it in the systemd unit):
#
#   "notify": [{"on": ["waiting", "blocked", "failed", "done"],
#               "run": ["/usr/share/packetfs/examples/notify/webhook.sh"]}]
#
# packetfs runs it with the event as one JSON object on stdin and PACKET_ITEM, PACKET_STATE,
# PACKET_EVENT, PACKET_STAGE (and PACKET_DIR when the store is mounted) in its environment.
# The message names the item, its state and stage; the reason of a failed or blocked item
# (last_error) follows when python3 is there to read it from the event. curl gives up after
# 10 seconds (packetfs's own timeout_s, 30 s by default, ends anything slower).
set -eu

url=${PACKETFS_WEBHOOK_URL:?PACKETFS_WEBHOOK_URL is not set: the webhook URL to post to}
event=$(cat)

# json_string TEXT : TEXT as a JSON string literal (backslash, quote, tab and newline escaped,
# other control characters dropped).
json_string()
{
	printf '%s' "$1" | tr -d '\001-\010\013-\037' | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g' |
		awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }' |
		sed 's/^/"/; s/$/"/'
}

why=""
if command -v python3 >/dev/null 2>&1; then
	why=$(printf '%s' "$event" |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("last_error", ""))' \
			2>/dev/null) || why=""
fi

case "$PACKET_EVENT" in
state) text="packetfs: $PACKET_ITEM is $PACKET_STATE (stage ${PACKET_STAGE:-none})" ;;
*) text="packetfs: $PACKET_ITEM: $PACKET_EVENT (state $PACKET_STATE, stage ${PACKET_STAGE:-none})" ;;
esac
[ -z "$why" ] || text="$text: $why"
[ -z "${PACKET_DIR:-}" ] || text="$text
$PACKET_DIR"

printf '{"text": %s}\n' "$(json_string "$text")" |
	curl --silent --show-error --fail --max-time 10 \
		-H 'Content-Type: application/json' --data-binary @- "$url"
