#!/usr/bin/env bash
# The webhook notifier of examples/notify (SPEC §5): wired into pipeline.json as its comment
# says, it posts {"text": ...} for each event to the URL in PACKETFS_WEBHOOK_URL (the daemon's
# environment) - here a local HTTP receiver that records the bodies. The item fails, with its
# reason in the message.
. "$(dirname "$0")/../lib.sh"
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 77; }
python3 "$FIXTURES/notify/receiver.py" "$T/port" "$T/bodies" &
BG_PIDS+=($!)
wait_for test -s "$T/port"
export PACKETFS_WEBHOOK_URL="http://127.0.0.1:$(cat "$T/port")/hooks/packetfs"

make_repo
EXTRA="\"notify\": [{\"on\": [\"waiting\", \"blocked\", \"failed\", \"done\"],
  \"run\": $(argv_json "$ROOT/examples/notify/webhook.sh")}]," \
	pipeline_store "$(stage_json plan plan.md fail.sh)"
new_item fix-1
ctl "$M" fix-1 advance
WAIT_STATE_PATIENT=1 wait_state "$M" fix-1 failed
wait_for test -s "$T/bodies"
sleep 1
python3 - "$T/bodies" "$M" <<'PY' || fail "the webhook got: $(cat "$T/bodies")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
msg = json.loads(lines[0])
assert list(msg) == ["text"], msg
text = msg["text"]
assert text.startswith("packetfs: fix-1 is failed (stage plan): plan: exited with code 3"), text
assert text.endswith("\n%s/fix-1" % sys.argv[2]), text
PY
exit 0
