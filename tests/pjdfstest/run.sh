#!/usr/bin/env bash
# tests/pjdfstest/run.sh - runs pjdfstest, the POSIX file system test suite, inside an item of a
# packetfs mount.
#
#	bash tests/pjdfstest/run.sh [--target DIR] [--out FILE] [DIR_OR_FILE...]
#	bash tests/pjdfstest/run.sh --build-only | --list
#
# pjdfstest's source is ../shared/third_party/pjdfstest beside the source tree (PFS_PJDFSTEST_SRC
# names another); it is copied into build-pjdfstest/ at the root of the source tree and built
# there with autoconf (`autoreconf -ifs; ./configure; make pjdfstest`); nothing is fetched and
# nothing of it enters the source tree.
#
# By default the suite runs where SPEC §3 says it must pass: inside the item `posix` of a new store
# mounted with `-o allow_other,default_permissions` (and io_uring with PACKETFS_TEST_RING=1; the
# binary is PACKETFS_BIN, default build/cli/packetfs), as root, with the users pjdfstest acts as
# (uids 65534 and 65533) members of the store's group; the store and mount lie in a directory of
# TMPDIR (default /tmp) that they can reach. --target DIR runs it in DIR instead (e.g. a directory
# on ext4, to measure the baseline tests/pjdfstest/known-failures is checked against). Every test
# file (chmod/00.t, ...) is run with `prove` on its own, under a timeout of 900 s, four at a time
# (PFS_PJDFSTEST_JOBS), and counts as one test: its line "ok NAME" or "not ok NAME (failed tests:
# N,M...)" goes to stdout, in the files' order, and to FILE with --out; the TAP output of each
# failing file goes to build-pjdfstest/logs/NAME.log (DIR-NN.t). All of them run, or those named (a
# directory of pjdfstest's tests/, or one file, e.g. symlink/03.t).
#
# Exits 0 when every file ran (whatever its result), 1 when the suite could not be run (mount,
# item), 77 with a line "SKIP: why" when pjdfstest's source, autoconf, automake or prove is
# missing, or when not run as root (pjdfstest changes owners), 2 on a usage error. --list prints
# the test files' names; --build-only builds pjdfstest and runs nothing.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${PFS_PJDFSTEST_SRC:-$ROOT/../shared/third_party/pjdfstest}
BUILD=$ROOT/build-pjdfstest
PFS=${PACKETFS_BIN:-$ROOT/build/cli/packetfs}

TARGET=""
OUT=""
JOBS=${PFS_PJDFSTEST_JOBS:-4}
FILE_TIMEOUT=900
MODE=run
NAMES=()
while [ $# -gt 0 ]; do
	case "$1" in
	--list) MODE=list ;;
	--build-only) MODE=build ;;
	--target)
		TARGET=${2:?--target needs a directory}
		shift
		;;
	--out)
		OUT=${2:?--out needs a file}
		shift
		;;
	-h | --help)
		sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "tests/pjdfstest/run.sh: unknown option: $1" >&2
		exit 2
		;;
	*) NAMES+=("$1") ;;
	esac
	shift
done

skip()
{
	echo "SKIP: $*"
	exit 77
}

[ -f "$SRC/pjdfstest.c" ] || skip "no pjdfstest source at $SRC"

# The test files, as DIR/NN.t, sorted; only those named when names were given.
list_files()
{
	local f name
	(cd "$SRC/tests" && find . -name '*.t' -type f | sed 's|^\./||' | LC_ALL=C sort) |
		while IFS= read -r f; do
			if [ "${#NAMES[@]}" = 0 ]; then
				echo "$f"
				continue
			fi
			for name in "${NAMES[@]}"; do
				name=${name%/}
				if [ "$f" = "$name" ] || [ "${f%%/*}" = "$name" ]; then
					echo "$f"
					break
				fi
			done
		done
}

if [ "$MODE" = list ]; then
	list_files
	exit 0
fi

for tool in autoreconf automake prove make cc; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done

# build: copies the source into BUILD/src and builds pjdfstest there, unless it is built already
# from a source no newer.
build()
{
	local log=$BUILD/build.log
	mkdir -p "$BUILD"
	if [ ! -x "$BUILD/src/pjdfstest" ] || [ "$SRC/pjdfstest.c" -nt "$BUILD/src/pjdfstest" ]; then
		rm -rf "$BUILD/src"
		cp -r "$SRC" "$BUILD/src" || return 1
		if ! (cd "$BUILD/src" && autoreconf -ifs && ./configure && make pjdfstest) \
			>"$log" 2>&1; then
			echo "tests/pjdfstest/run.sh: building pjdfstest failed (see $log):" >&2
			tail -n 20 "$log" >&2
			return 1
		fi
	fi
}
build || exit 1
[ "$MODE" = build ] && exit 0
[ "$(id -u)" = 0 ] || skip "pjdfstest must run as root (it changes owners)"

FILES=$(list_files)
[ -n "$FILES" ] || {
	echo "tests/pjdfstest/run.sh: no test file matches: ${NAMES[*]}" >&2
	exit 2
}

WORK=""
MNT=""
MADE_USER=""
cleanup()
{
	[ -z "$MADE_USER" ] || userdel "$MADE_USER" 2>/dev/null
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then
		"$PFS" umount "$MNT" >/dev/null 2>&1 || fusermount3 -u -z "$MNT" 2>/dev/null
	fi
	[ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$TARGET" ]; then
	[ -x "$PFS" ] || {
		echo "tests/pjdfstest/run.sh: no packetfs binary at $PFS (build first)" >&2
		exit 1
	}
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/pjdfstest.XXXXXX")
	chmod 0755 "$WORK"
	git init -q -b main "$WORK/repo" &&
		echo pjdfstest >"$WORK/repo/README" &&
		git -C "$WORK/repo" add README &&
		git -C "$WORK/repo" -c user.name=pjdfstest -c user.email=pjdfstest@localhost \
			commit -q -m init || exit 1
	"$PFS" init "$WORK/store" --repo "$WORK/repo" >"$WORK/init.log" 2>&1 || {
		cat "$WORK/init.log" >&2
		exit 1
	}
	# pjdfstest acts as uids 65534 and 65533 (its tests' -u): the mount lets them in as
	# members of the store's group, 65534 (Debian's nogroup, nobody's primary group), and
	# 65533 is made for the run when the system has no such user.
	chgrp 65534 "$WORK/store" || exit 1
	if ! getent passwd 65533 >/dev/null; then
		useradd -u 65533 -g 65534 -M -N -d / -s /usr/sbin/nologin pfs-pjdfstest || exit 1
		MADE_USER=pfs-pjdfstest
	fi
	MNT=$WORK/mnt
	mkdir "$MNT"
	"$PFS" mount "$WORK/store" "$MNT" -o "allow_other,default_permissions${PACKETFS_TEST_RING:+,io_uring}" </dev/null || exit 1
	mkdir "$MNT/posix" || exit 1
	TARGET=$MNT/posix
fi
[ -d "$TARGET" ] || {
	echo "tests/pjdfstest/run.sh: no directory $TARGET" >&2
	exit 1
}

# run_one FILE: runs the test file FILE in TARGET and writes its result line to RES/FILE.
run_one()
{
	local f=$1 log rc=0 failed line
	log=$BUILD/logs/${f//\//-}.log
	(cd "$TARGET" && timeout -k 10 "$FILE_TIMEOUT" prove -v "$BUILD/src/tests/$f") >"$log" 2>&1 ||
		rc=$?
	if [ "$rc" = 0 ]; then
		line="ok $f"
		rm -f "$log"
	else
		failed=$(sed -n 's/^ *Failed tests*: *//p' "$log" | tr -d ' ' | paste -sd, -)
		[ "$rc" = 124 ] || [ "$rc" = 137 ] && failed="timed out after $FILE_TIMEOUT s"
		line="not ok $f (failed tests: ${failed:-exit status $rc})"
	fi
	echo "$line" >"$RES/${f//\//-}"
}

# The files run JOBS at a time (most of their time is sleep(1) between a change and the check
# of its ctime), in one directory: pjdfstest's names are random.
RES=$BUILD/results
rm -rf "$RES" "$BUILD/logs"
mkdir -p "$RES" "$BUILD/logs"
while IFS= read -r f; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	run_one "$f" &
done <<<"$FILES"
wait
[ -z "$OUT" ] || : >"$OUT"
while IFS= read -r f; do
	line=$(cat "$RES/${f//\//-}" 2>/dev/null) || line="not ok $f (failed tests: no result)"
	echo "$line"
	[ -z "$OUT" ] || echo "$line" >>"$OUT"
done <<<"$FILES"
exit 0
