#!/usr/bin/env bash
# Publish pushes over ssh as the daemon's user would: the key comes from the ssh agent the
# daemon inherited (SSH_AUTH_SOCK), the host from an ssh config alias, the ssh command from
# core.sshCommand in the user's ~/.gitconfig (`ssh -F ~/.ssh/config`: ssh reads the config of
# the passwd home, not $HOME, and the test must not touch that one). The server is an sshd
# started by the test on a private port with its own sshd_config, host key and authorized_keys.
# With the agent emptied (`ssh-add -D`), publish fails with an authentication reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
SSHD=/usr/sbin/sshd
for f in "$SSHD" /usr/bin/ssh /usr/bin/ssh-agent /usr/bin/ssh-add /usr/bin/ssh-keygen; do
	[ -x "$f" ] || { echo "SKIP: $f not found (Debian packages openssh-server, openssh-client)" >&2; exit 77; }
done
if [ ! -d /run/sshd ]; then
	# sshd's privilege separation directory (the package's service would make it).
	mkdir -p /run/sshd 2>/dev/null || { echo "SKIP: /run/sshd is missing and cannot be made" >&2; exit 77; }
fi
make_repo
S=$T/ssh
mkdir -p "$S/srv"
chmod 700 "$S"
git clone -q --bare "$REPO" "$S/srv/remote.git"
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -C packetfs-test -f "$S/id"
cp "$S/id.pub" "$S/authorized_keys"
PORT=$(free_port)
cat >"$S/sshd_config" <<EOF2
ListenAddress 127.0.0.1
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PidFile $S/sshd.pid
EOF2
# In a session of its own; the test's cleanup (BG_PIDS) ends it, also after a failure.
bg setsid "$SSHD" -D -f "$S/sshd_config" -p "$PORT" -E "$S/sshd.log"
listening()
{
	pid_alive "$BG" || fail "sshd did not start: $(cat "$S/sshd.log" 2>&1)"
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null
}
wait_for listening

# The daemon's user: an agent holding the key (and no key file left), HOME with an ssh config
# that names the server by an alias, and a ~/.gitconfig whose core.sshCommand reads that config.
eval "$(ssh-agent -s -a "$S/agent.sock")" >/dev/null
BG_PIDS+=("$SSH_AGENT_PID")
ssh-add -q "$S/id" 2>/dev/null
rm -f "$S/id"
export HOME=$T/home
mkdir -p "$HOME/.ssh"
cat >"$HOME/.ssh/config" <<EOF2
Host pfs-test-remote
	HostName 127.0.0.1
	Port $PORT
	User $(id -un)
	StrictHostKeyChecking accept-new
	UserKnownHostsFile $S/known_hosts
	IdentityFile $S/no-such-key
EOF2
git config --global core.sshCommand "ssh -F $HOME/.ssh/config"
git -C "$REPO" remote set-url origin "pfs-test-remote:$S/srv/remote.git"
push_item

ctl "$M" fix-1 advance
wait_state "$M" fix-1 done
assert_eq "$(worktree_head fix-1)" "$(remote_head "$S/srv/remote.git" packetfs/fix-1)" \
	"fix-1: the branch on the ssh server"
assert_contains "$(publish_log fix-1)" "[packetfs] pushed packetfs/fix-1 to origin" "fix-1 publish log"
grep -q "Accepted publickey for $(id -un)" "$S/sshd.log" || fail "sshd logged no key login: $(cat "$S/sshd.log")"

# The agent emptied: no key the server takes.
ssh-add -D 2>/dev/null
new_item fix-2
ctl "$M" fix-2 advance
assert_eq failed "$(settled fix-2)" "fix-2: state without a key"
assert_eq "publish: push to origin refused: authentication failed ($(id -un)@127.0.0.1: Permission denied (publickey))" \
	"$(status_field "$M" fix-2 last_error)" "fix-2: last_error"
assert_contains "$(publish_log fix-2)" "Permission denied (publickey)" "fix-2 publish log (ssh's message)"
assert_eq "" "$(remote_head "$S/srv/remote.git" packetfs/fix-2)" "fix-2: the branch on the server"
