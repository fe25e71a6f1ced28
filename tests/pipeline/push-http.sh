#!/usr/bin/env bash
# Publish pushes over smart HTTP with basic authentication, the password coming from the
# daemon's user's credential helper (git's `store` helper, set in the ~/.gitconfig of the HOME
# the daemon was started with). The server is apache2, started by the test on a private port
# with a private configuration: git http-backend behind `Require valid-user` on every request,
# receive-pack included (tests/forge.sh). Then, with a wrong password, publish fails with an
# authentication reason in last_error and git's message in the stage log; with no credentials
# at all it fails at once (no prompt waits); with the right ones the same item publishes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
make_repo
forge_http_start
URL=$FORGE_URL
PORT=$FORGE_PORT
SERVER=$FORGE_GIT_DIR

# The daemon's user: HOME with a ~/.gitconfig naming a credential helper.
forge_home
git -C "$REPO" remote set-url origin "$URL"
push_item

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
head=$(worktree_head fix-1)
assert_eq "$head" "$(remote_head "$SERVER" packetfs/fix-1)" "fix-1: the branch on the server"
assert_contains "$(publish_log fix-1)" "[packetfs] pushed packetfs/fix-1 to origin" "fix-1 publish log"
assert_contains "$(publish_log fix-1)" "To $URL" "fix-1 publish log (git's porcelain)"

# A wrong password: the server refuses it (and the store helper forgets it).
forge_credentials wrong-pw
new_item fix-2
ctl "$M" fix-2 advance
assert_eq failed "$(settled fix-2)" "fix-2: state after a wrong password"
assert_eq publish "$(status_field "$M" fix-2 stage)" "fix-2: stage"
assert_eq "publish: push to origin refused: authentication failed ($URL/)" \
	"$(status_field "$M" fix-2 last_error)" "fix-2: last_error"
log=$(publish_log fix-2)
assert_contains "$log" "fatal: Authentication failed for '$URL/'" "fix-2 publish log (git's message)"
# The passwords themselves, not a fragment: the log holds temporary paths (mktemp's random
# letters), which a two-letter search could match.
assert_not_contains "$log" "wrong-pw" "fix-2 publish log (no password)"
assert_not_contains "$log" "$FORGE_PASSWORD" "fix-2 publish log (no password)"
assert_eq "" "$(remote_head "$SERVER" packetfs/fix-2)" "fix-2: the branch on the server"

# No credentials at all: git may not prompt, so it fails at once.
forge_credentials ""
ctl "$M" fix-2 "run publish"
assert_eq failed "$(settled fix-2)" "fix-2: state without credentials"
assert_eq "publish: push to origin refused: authentication failed (no username or password for http://127.0.0.1:$PORT: no credential helper gave one)" \
	"$(status_field "$M" fix-2 last_error)" "fix-2: last_error without credentials"
assert_contains "$(publish_log fix-2)" "terminal prompts disabled" "fix-2 publish log"

# The right password again: the same item publishes the head review judged.
forge_credentials "$FORGE_PASSWORD"
ctl "$M" fix-2 "run publish"
wait_state "$M" fix-2 done
assert_eq "$(worktree_head fix-2)" "$(remote_head "$SERVER" packetfs/fix-2)" \
	"fix-2: the branch on the server"
