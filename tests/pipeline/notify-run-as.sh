#!/usr/bin/env bash
# With "run_as": USER (SPEC §5), the daemon root, a notifier runs as USER too (uid, gid, HOME,
# USER), with the event on stdin, like the stage programs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
run_as_user
uid=$(id -u "$U")
gid=$(id -g "$U")
home=$(getent passwd "$U" | cut -d: -f6)
BIN=$TEAM_DIR/bin
OUT=$TEAM_DIR/out
mkdir -p "$BIN" "$OUT"
chown "$U" "$OUT"
cat >"$BIN/whoami.sh" <<'EOF2'
#!/bin/sh
# whoami.sh DIR : writes who runs it and the event it read to DIR/notified.
printf 'uid=%s gid=%s home=%s user=%s item=%s state=%s event=%s\n' "$(id -u)" "$(id -g)" \
	"$HOME" "$USER" "$PACKET_ITEM" "$PACKET_STATE" "$(cat)" >>"$1/notified"
EOF2
chmod 0755 "$BIN/whoami.sh"
copy_recipes
pipeline_json "$T/pipeline.json" "$REPO" "$RECIPES" "\"gpus\": 0, \"run_as\": \"$U\",
  \"notify\": [{\"on\": [\"done\"], \"run\": $(argv_json "$BIN/whoami.sh" "$OUT")}]," \
	'{"name": "plan"}'
STORE=$TEAM_DIR/store
out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$T/pipeline.json" 2>&1) ||
	fail "packetfs init failed: $out"
chgrp "$TEAM" "$STORE"
mount_team
new_item fix-1
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
wait_for test -s "$OUT/notified"
line=$(cat "$OUT/notified")
assert_contains "$line" "uid=$uid gid=$gid home=$home user=$U item=fix-1 state=done event={" \
	"the notifier's identity"
assert_contains "$line" '"type":"state","state":"done","stage":"plan"' "the event it read"
exit 0
