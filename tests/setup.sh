#!/usr/bin/env bash
# tests/setup.sh - the test suite's setup step: installs the Debian packages that building
# packetfs and running its tests need, where they are missing.
#
#	bash tests/setup.sh [--log FILE]
#
# tests/run.sh calls it first, so `bash tests/run.sh` still does everything on a fresh machine;
# run it once yourself before `meson test -C build` (which installs nothing). One dpkg-query
# call lists what of PACKAGES is not installed; apt-get update and apt-get install run only
# when something is, as root (or through sudo), their output going to FILE (a temporary file
# without --log; its tail goes to stderr when they fail). Idempotent: with everything in place
# it changes nothing and takes a fraction of a second. Without dpkg it says so and checks
# nothing.
#
# That is all the one-time setup the tests need: everything else is made per test (users and
# groups by tests/users.sh, servers such as sshd on private ports, loop file systems) or per
# run of the suite (the one-node Slurm cluster that tests/run.sh starts in its own directory,
# on ports free at that time, and stops at its end, so that no daemon outlives a run and two
# runs on one machine do not meet).
#
# Prints "# installing: PACKAGE..." when it installs. Exits 0 when every package is installed,
# 1 when some cannot be (not root and no sudo, or apt-get failed), 2 on a usage error.

set -uo pipefail

PACKAGES="build-essential meson ninja-build pkg-config libfuse3-dev fuse3 libsqlite3-dev libgit2-dev liburing-dev
libcjson-dev libuv1-dev libssl-dev libxml2-dev libzstd-dev git inotify-tools vim rsync util-linux coreutils curl
python3 attr sqlite3 slurm-wlm munge cmake python3-pytest apache2 apache2-utils openssh-server
openssh-client clang libclang-rt-dev autoconf automake emacs-nox libsystemd-dev libmount-dev libsmartcols-dev man-db
libncurses-dev tmux libxml2-utils chromium python3-junitparser"

LOG=""
while [ $# -gt 0 ]; do
	case "$1" in
	--log)
		LOG=${2:?--log needs a file}
		shift
		;;
	-h | --help)
		sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "tests/setup.sh: unknown argument: $1" >&2
		exit 2
		;;
	esac
	shift
done

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "# dpkg not found: not checking packages"
	exit 0
fi

# The packages of PACKAGES that dpkg does not list as installed (one it does not know at all
# is missing too).
# shellcheck disable=SC2086 # PACKAGES is a list of words
installed=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' $PACKAGES 2>/dev/null |
	awk '$1 == "installed" { print $2 }')
missing=()
for p in $PACKAGES; do
	grep -qx -- "$p" <<<"$installed" || missing+=("$p")
done
[ "${#missing[@]}" = 0 ] && exit 0

echo "# installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "tests/setup.sh: missing packages and not root: ${missing[*]}" >&2
		exit 1
	}
	sudo="sudo"
fi
if [ -z "$LOG" ]; then
	LOG=$(mktemp "${TMPDIR:-/tmp}/packetfs-apt.XXXXXX") || exit 1
	trap 'rm -f "$LOG"' EXIT
fi
$sudo apt-get update -q >"$LOG" 2>&1 &&
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >>"$LOG" 2>&1 || {
	tail -n 30 "$LOG" >&2
	echo "tests/setup.sh: apt-get install failed" >&2
	exit 1
}
exit 0
