# shellcheck shell=bash
# tests/forge.sh - remotes and a local stand-in for a forge, for the tests that publish:
# a pipeline that pushes (push_pipeline, push_item, publish_log, remote_head, free_port; the
# tests/pipeline/push-*.sh), a git server behind authentication (push-http.sh,
# brief-to-pr.sh), and the log of the stand-in gh (gh_log, field; also open-pr.sh). Sourced
# after tests/lib.sh:
#
#	. "$(dirname "$0")/../forge.sh"
#	forge_http_start            # apache2 + git http-backend, basic auth on every request
#	forge_home                  # HOME with a credential helper that knows the password
#	git -C "$REPO" remote set-url origin "$FORGE_URL"
#
# The server is apache2 on a private port of 127.0.0.1 with a private configuration: git
# http-backend behind `Require valid-user` on every request, receive-pack included. It runs in
# the foreground under bg (cleanup stops it, also after a failure); its served files live in a
# directory outside $T (EXTRA_DIRS, removed with $T). A host without apache2 skips the test
# (exit 77), saying which file is missing.

FORGE_USER=alice
FORGE_PASSWORD=s3cret-pw

# forge_http_start [SOURCE_REPO] : starts the server with a bare clone of SOURCE_REPO (default
# $REPO) and waits until it listens. Sets FORGE_URL (the repository's URL), FORGE_GIT_DIR (the
# bare repository the server serves), FORGE_PORT, FORGE_PID (apache's pid) and FORGE_LOG (its
# error log). Checks that a read without credentials is refused.
forge_http_start()
{
	local src=${1:-$REPO} apache=/usr/sbin/apache2 mods=/usr/lib/apache2/modules backend f
	local a w user_lines=""
	backend=$(git --exec-path)/git-http-backend
	for f in "$apache" "$mods/mod_cgi.so" "$mods/mod_authn_file.so" "$backend" /usr/bin/htpasswd; do
		[ -e "$f" ] || { echo "SKIP: $f not found (Debian packages apache2, apache2-utils)" >&2; exit 77; }
	done
	[ -n "$src" ] || fail "forge_http_start: no repository to serve (make_repo first)"
	# Apache's own files in $a; what its children read (the repositories, the password file)
	# in $w, which the user they run as (www-data, when root starts apache) must reach: so $w
	# lies in /tmp itself, not in $T, whose parents may be closed to others.
	a=$T/apache
	w=$(mktemp -d /tmp/packetfs-www.XXXXXX)
	EXTRA_DIRS+=("$w")
	mkdir -p "$a/run" "$w/git"
	git clone -q --bare "$src" "$w/git/remote.git"
	git --git-dir="$w/git/remote.git" config http.receivepack true
	htpasswd -cbB "$w/htpasswd" "$FORGE_USER" "$FORGE_PASSWORD" 2>/dev/null
	if [ "$(id -u)" = 0 ]; then
		id www-data >/dev/null 2>&1 || { echo "SKIP: no user www-data for apache's children" >&2; exit 77; }
		user_lines=$'User www-data\nGroup www-data'
		chown -R www-data:www-data "$w"
	fi
	FORGE_PORT=$(free_port)
	FORGE_LOG=$a/error.log
	cat >"$a/httpd.conf" <<EOF2
ServerRoot "$a"
ServerName 127.0.0.1
Listen 127.0.0.1:$FORGE_PORT
PidFile "$a/run/httpd.pid"
DefaultRuntimeDir "$a/run"
ErrorLog "$FORGE_LOG"
LogLevel warn
LoadModule mpm_prefork_module $mods/mod_mpm_prefork.so
LoadModule authn_core_module $mods/mod_authn_core.so
LoadModule authn_file_module $mods/mod_authn_file.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule authz_user_module $mods/mod_authz_user.so
LoadModule auth_basic_module $mods/mod_auth_basic.so
LoadModule alias_module $mods/mod_alias.so
LoadModule cgi_module $mods/mod_cgi.so
LoadModule env_module $mods/mod_env.so
$user_lines
StartServers 1
MinSpareServers 1
MaxSpareServers 2
SetEnv GIT_PROJECT_ROOT $w/git
SetEnv GIT_HTTP_EXPORT_ALL 1
ScriptAlias /git/ $backend/
<Location /git/>
	AuthType Basic
	AuthName "packetfs test"
	AuthBasicProvider file
	AuthUserFile "$w/htpasswd"
	Require valid-user
</Location>
EOF2
	# In the foreground, so that the test's cleanup (BG_PIDS) stops it, also after a failure;
	# in a session of its own, because apache signals its whole process group when it stops.
	bg setsid "$apache" -f "$a/httpd.conf" -DFOREGROUND
	FORGE_PID=$BG
	wait_for forge_listening
	# shellcheck disable=SC2034 # the tests read it
	FORGE_GIT_DIR=$w/git/remote.git
	FORGE_URL=http://127.0.0.1:$FORGE_PORT/git/remote.git
	# Basic auth on every request: without credentials, even a read is refused.
	if GIT_TERMINAL_PROMPT=0 git ls-remote "$FORGE_URL" >/dev/null 2>&1; then
		fail "the forge let a read through without credentials"
	fi
}

# forge_listening : the server accepts connections (fails the test when apache has died).
forge_listening()
{
	pid_alive "$FORGE_PID" || fail "apache2 did not start: $(cat "$FORGE_LOG" 2>&1)"
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$FORGE_PORT" 2>/dev/null
}

# forge_home : exports HOME=$T/home whose ~/.gitconfig names git's `store` credential helper
# with the file FORGE_CREDS, which holds the server's user and password (a test may rewrite
# it: forge_credentials PASSWORD). Export it before `packetfs mount`: the daemon pushes with
# the environment it was started with.
forge_home()
{
	export HOME=$T/home
	mkdir -p "$HOME"
	FORGE_CREDS=$HOME/git-credentials
	git config --global credential.helper "store --file=$FORGE_CREDS"
	forge_credentials "$FORGE_PASSWORD"
}

# forge_credentials PASSWORD : the credential helper's file names FORGE_USER with PASSWORD
# (empty PASSWORD: the file is empty, the helper knows nothing).
forge_credentials()
{
	if [ -n "$1" ]; then
		printf 'http://%s:%s@127.0.0.1:%s\n' "$FORGE_USER" "$1" "$FORGE_PORT" >"$FORGE_CREDS"
	else
		: >"$FORGE_CREDS"
	fi
	chmod 600 "$FORGE_CREDS"
}

# gh_log PREFIX... : the calls of the stand-in gh (tests/fixtures/bin/gh, state $GH_STUB_STATE)
# whose argv starts with PREFIX, one JSON object a line (argv, cwd, stdin, body, stdout, exit).
gh_log()
{
	python3 - "$GH_STUB_STATE.log" "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["argv"][:len(sys.argv) - 2] == sys.argv[2:]:
        print(json.dumps(o))
PY
}

# field KEY : the member KEY of the JSON object on the first line of stdin.
field() { python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())[sys.argv[1]])' "$1"; }

# push_pipeline FILE [PUBLISH_MEMBERS] : a pipeline.json (as pipeline_with) of plan, print, review
# (sound) and a publish without gate that pushes to the remote "origin" and then runs publish.sh,
# so that one advance takes an item through its push. PUBLISH_MEMBERS adds members to the publish
# stage (e.g. '"timeout_s": 5,').
push_pipeline()
{
	pipeline_with "$1" "$(plan_stage)" "$(print_stage)" "$(review_stage sound)" "$(publish_stage "${2:-}")"
}

# push_item [PUBLISH_MEMBERS] : the pipeline $T/pipeline.json of push_pipeline (with those
# PUBLISH_MEMBERS), its store mounted on $M and a new item fix-1 there (mount_item: d is its
# directory, r its registry).
push_item()
{
	push_pipeline "$T/pipeline.json" "$@"
	mount_item "$T/pipeline.json"
}

# publish_log ITEM : the text of the latest publish log of ITEM on $M.
publish_log()
{
	local f
	f=$(ls "$M/$1/stages" | grep -E '^[0-9]+-publish\.log$' | sort -n | tail -n 1)
	[ -n "$f" ] || fail "$1 has no publish log: $(ls "$M/$1/stages")"
	cat "$M/$1/stages/$f"
}

# remote_head GIT_DIR BRANCH : the commit BRANCH points at in the (bare) repository GIT_DIR, or
# nothing when it has no such branch.
remote_head()
{
	git --git-dir="$1" rev-parse -q --verify "refs/heads/$2" 2>/dev/null || true
}

# free_port : a TCP port of 127.0.0.1 that nothing listens on now.
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
