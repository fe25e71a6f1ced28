#!/usr/bin/env bash
# pipeline/watch-engine with a daemon that does not override file modes: uid 0 without
# CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv drops them from its inheritable and
# bounding sets), as a daemon run by an ordinary user is. The notifier's first replay of a
# read-only view is refused; the daemon logs why, and from then on tells the notifier alone
# that the owner may write (fs/notify.h): every event watch-engine waits for still comes, and
# stat still shows everyone the modes the views and directories have.
# test-timeout: 180
. "$(dirname "$0")/../lib.sh"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
drop=-dac_override,-dac_read_search
MOUNT_WRAP="setpriv --inh-caps $drop --bounding-set $drop" \
	MOUNT_OPTS="log=$T/daemon.log" bash "$TESTS_DIR/pipeline/watch-engine.sh" ||
	fail "pipeline/watch-engine failed with a daemon that does not override modes"
assert_contains "$(cat "$T/daemon.log")" "notifier: the replay of " \
	"the daemon's log (the notifier's first replay refused)"
assert_contains "$(cat "$T/daemon.log")" "was refused (EACCES)" "the daemon's log"
exit 0
