#!/usr/bin/env bash
# A push that hangs (an ssh command that never answers) is a process of the publish stage like
# any stage program: `cancel` ends it, the stage's timeout_s ends it, and so does the daemon's
# shutdown - each time with git's whole process tree gone, nothing pushed and the publish
# program not run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../forge.sh"
make_repo
cat >"$T/hang.sh" <<EOS
#!/bin/sh
echo \$\$ >"$T/hang.pid"
exec sleep 600
EOS
chmod +x "$T/hang.sh"
git -C "$REPO" config core.sshCommand "$T/hang.sh"
git -C "$REPO" remote set-url origin "ssh://nowhere.invalid/origin.git"
push_item '"timeout_s": 4,'

# hanging COMMAND : writes COMMAND to fix-1's ctl, then waits until its push hangs in hang.sh;
# sets HANG to the pid of its sleep.
hanging()
{
	rm -f "$T/hang.pid"
	ctl "$M" fix-1 "$1"
	wait_for test -s "$T/hang.pid"
	HANG=$(cat "$T/hang.pid")
	pid_alive "$HANG" || fail "the hanging ssh command is gone already"
	assert_eq running "$(status_field "$M" fix-1 state)" "state while the push hangs"
	assert_eq publish "$(status_field "$M" fix-1 stage)" "stage while the push hangs"
}

# ended WHY : the publish stage failed with last_error WHY, the hanging process is gone, nothing
# was pushed and the publish program did not run.
ended()
{
	assert_eq failed "$(settled fix-1)" "state after: $1"
	assert_eq "$1" "$(status_field "$M" fix-1 last_error)" "last_error"
	wait_gone "$HANG"
	assert_eq "" "$(remote_head "$ORIGIN" packetfs/fix-1)" "the branch in the remote"
	assert_not_contains "$(publish_log fix-1)" "pull request opened" "publish log"
}

hanging advance
ctl "$M" fix-1 cancel
ended "publish: cancelled (signal 15)"
assert_contains "$(publish_log fix-1)" "(cancel)" "publish log after cancel"

# timeout_s (4 s) ends it.
hanging "run publish"
ended "publish: timed out (signal 15)"
assert_contains "$(publish_log fix-1)" "(timeout)" "publish log after the timeout"

# The daemon's shutdown ends it too.
hanging "run publish"
umount_store
wait_gone "$HANG"
assert_eq "" "$(remote_head "$ORIGIN" packetfs/fix-1)" "the branch in the remote after umount"
