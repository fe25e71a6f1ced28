#!/usr/bin/env bash
# Publish pushes over smart HTTP with basic authentication, the password coming from the
# daemon's user's credential helper (git's `store` helper, set in the ~/.gitconfig of the HOME
# the daemon was started with). The server is apache2, started by the test on a private port
# with a private configuration: git http-backend behind `Require valid-user` on every request,
# receive-pack included. Then, with a wrong password, publish fails with an authentication
# reason in last_error and git's message in the stage log; with no credentials at all it fails
# at once (no prompt waits); with the right ones the same item publishes.
. "$(dirname "$0")/../lib.sh"
APACHE=/usr/sbin/apache2
MODS=/usr/lib/apache2/modules
BACKEND=$(git --exec-path)/git-http-backend
for f in "$APACHE" "$MODS/mod_cgi.so" "$MODS/mod_authn_file.so" "$BACKEND" /usr/bin/htpasswd; do
	[ -e "$f" ] || { echo "SKIP: $f not found (Debian packages apache2, apache2-utils)" >&2; exit 77; }
done
make_repo

# Apache's own files in $A; what its children read (the repositories, the password file) in
# $W, which the user they run as (www-data, when root starts apache) must reach: so $W lies in
# /tmp itself, not in $T, whose parents may be closed to others.
A=$T/apache
W=$(mktemp -d /tmp/packetfs-www.XXXXXX)
EXTRA_DIRS+=("$W")
mkdir -p "$A/run" "$W/git"
git clone -q --bare "$REPO" "$W/git/remote.git"
git --git-dir="$W/git/remote.git" config http.receivepack true
htpasswd -cbB "$W/htpasswd" alice s3cret-pw 2>/dev/null
user_lines=""
if [ "$(id -u)" = 0 ]; then
	id www-data >/dev/null 2>&1 || { echo "SKIP: no user www-data for apache's children" >&2; exit 77; }
	user_lines=$'User www-data\nGroup www-data'
	chown -R www-data:www-data "$W"
fi
PORT=$(free_port)
cat >"$A/httpd.conf" <<EOF2
ServerRoot "$A"
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile "$A/run/httpd.pid"
DefaultRuntimeDir "$A/run"
ErrorLog "$A/error.log"
LogLevel warn
LoadModule mpm_prefork_module $MODS/mod_mpm_prefork.so
LoadModule authn_core_module $MODS/mod_authn_core.so
LoadModule authn_file_module $MODS/mod_authn_file.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule authz_user_module $MODS/mod_authz_user.so
LoadModule auth_basic_module $MODS/mod_auth_basic.so
LoadModule alias_module $MODS/mod_alias.so
LoadModule cgi_module $MODS/mod_cgi.so
LoadModule env_module $MODS/mod_env.so
$user_lines
StartServers 1
MinSpareServers 1
MaxSpareServers 2
SetEnv GIT_PROJECT_ROOT $W/git
SetEnv GIT_HTTP_EXPORT_ALL 1
ScriptAlias /git/ $BACKEND/
<Location /git/>
	AuthType Basic
	AuthName "packetfs test"
	AuthBasicProvider file
	AuthUserFile "$W/htpasswd"
	Require valid-user
</Location>
EOF2
# In the foreground, so that the test's cleanup (BG_PIDS) stops it, also after a failure; in a
# session of its own, because apache signals its whole process group when it stops.
bg setsid "$APACHE" -f "$A/httpd.conf" -DFOREGROUND
listening()
{
	pid_alive "$BG" || fail "apache2 did not start: $(cat "$A/error.log" 2>&1)"
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null
}
wait_for listening
URL=http://127.0.0.1:$PORT/git/remote.git
# Basic auth on every request: without credentials, even a read is refused.
GIT_TERMINAL_PROMPT=0 git ls-remote "$URL" >/dev/null 2>&1 && fail "the server let a read through without credentials"

# The daemon's user: HOME with a ~/.gitconfig naming a credential helper.
export HOME=$T/home
mkdir -p "$HOME"
CREDS=$HOME/git-credentials
git config --global credential.helper "store --file=$CREDS"
printf 'http://alice:s3cret-pw@127.0.0.1:%s\n' "$PORT" >"$CREDS"
chmod 600 "$CREDS"
git -C "$REPO" remote set-url origin "$URL"
push_pipeline "$T/pipeline.json"
make_store "$T/pipeline.json"
mount_store

new_item fix-1
ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
head=$(worktree_head fix-1)
assert_eq "$head" "$(remote_head "$W/git/remote.git" packetfs/fix-1)" "fix-1: the branch on the server"
assert_contains "$(publish_log fix-1)" "[packetfs] pushed packetfs/fix-1 to origin" "fix-1 publish log"
assert_contains "$(publish_log fix-1)" "To $URL" "fix-1 publish log (git's porcelain)"

# A wrong password: the server refuses it (and the store helper forgets it).
printf 'http://alice:wrong-pw@127.0.0.1:%s\n' "$PORT" >"$CREDS"
new_item fix-2
ctl "$M" fix-2 advance
assert_eq failed "$(settled fix-2)" "fix-2: state after a wrong password"
assert_eq publish "$(status_field "$M" fix-2 stage)" "fix-2: stage"
assert_eq "publish: push to origin refused: authentication failed ($URL/)" \
	"$(status_field "$M" fix-2 last_error)" "fix-2: last_error"
log=$(publish_log fix-2)
assert_contains "$log" "fatal: Authentication failed for '$URL/'" "fix-2 publish log (git's message)"
assert_not_contains "$log" "pw" "fix-2 publish log (no password)"
assert_eq "" "$(remote_head "$W/git/remote.git" packetfs/fix-2)" "fix-2: the branch on the server"

# No credentials at all: git may not prompt, so it fails at once.
: >"$CREDS"
ctl "$M" fix-2 "run publish"
assert_eq failed "$(settled fix-2)" "fix-2: state without credentials"
assert_eq "publish: push to origin refused: authentication failed (no username or password for http://127.0.0.1:$PORT: no credential helper gave one)" \
	"$(status_field "$M" fix-2 last_error)" "fix-2: last_error without credentials"
assert_contains "$(publish_log fix-2)" "terminal prompts disabled" "fix-2 publish log"

# The right password again: the same item publishes the head review judged.
printf 'http://alice:s3cret-pw@127.0.0.1:%s\n' "$PORT" >"$CREDS"
ctl "$M" fix-2 "run publish"
wait_state "$M" fix-2 done
assert_eq "$(worktree_head fix-2)" "$(remote_head "$W/git/remote.git" packetfs/fix-2)" \
	"fix-2: the branch on the server"
