# tests/lib.sh - helpers shared by the integration tests (tests/{fs,pipeline,bad}/*.sh).
#
# Each test script sources this file, then builds what it needs on a fresh store and mount:
#
#	. "$(dirname "$0")/../lib.sh"
#	make_repo
#	make_store
#	mount_store
#
# or, for the usual shapes, with one call that also makes the item fix-1 (d, its directory; r,
# its registry): mount_item (a store without pipeline), std_item RECIPE... (the usual
# five-stage pipeline whose plan names the RECIPEs) or pipeline_item STAGE_JSON... (the stages
# given, e.g. "$(plan_stage 01-build)" "$(print_stage)" "$(validate_stage)").
#
# Design: every test owns one temporary directory $T (mktemp -d) holding its git repository,
# its bare remote, its store, its mount points and its scratch files. An EXIT trap always
# lazily unmounts every mount the test made (fusermount3 -u -z), ends the daemons, ends any
# process still working under $T (stage programs, recipes, watchers), then removes $T.
# Nothing waits for a fixed time: wait_for polls a condition every 50 ms up to a bound, and a
# bound that runs out is a failure with a message, never a timed assertion on speed.
#
# Environment: PACKETFS_BIN overrides the binary under test (default build/cli/packetfs of the
# source tree); PFS_WAIT_BOUND overrides the polling bound in seconds (default 30);
# PFS_KEEP=1 keeps $T after the test for inspection (mounts are still undone).
#
# tests/lib_pipeline.sh (pipelines, stages, items) is sourced at the end of this file. Topic
# libraries, sourced after this file by the tests that need them: tests/forge.sh
# (remotes, a git server, the stand-in gh), tests/slurm.sh (the slurm executor's pipeline and
# jobs), tests/trees.sh (process trees that a run leaves behind).

set -euo pipefail

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
FIXTURES="$TESTS_DIR/fixtures"
PFS=${PACKETFS_BIN:-$ROOT/build/cli/packetfs}
WAIT_BOUND=${PFS_WAIT_BOUND:-30}
TEST_NAME="$(basename "$(dirname "$0")")/$(basename "$0" .sh)"

# json_escape, argv_json, pid_alive, pid_of_cmdline
# shellcheck source=common.sh
. "$TESTS_DIR/common.sh"

# Git identity for every commit the tests and the stage programs make.
export GIT_AUTHOR_NAME="packetfs tests" GIT_AUTHOR_EMAIL="tests@packetfs.invalid"
export GIT_COMMITTER_NAME="packetfs tests" GIT_COMMITTER_EMAIL="tests@packetfs.invalid"
export GIT_CONFIG_NOSYSTEM=1 LC_ALL=C

T=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-test.XXXXXX")
T=$(cd "$T" && pwd -P)
MOUNTS=()       # every mount point this test mounted
DAEMON_PIDS=()  # daemon pid of each entry of MOUNTS (parallel array)
BG_PIDS=()      # background helpers (watchers, tail -f) started by the test
EXTRA_DIRS=()   # directories outside $T the test made (a server's files that another user must
                # reach), removed with $T
CLEANUP_HOOKS=() # functions cleanup calls once the mounts are undone and the processes under $T
                # ended, before $T is removed (tests/loopfs.sh unmounts its file system)

# Items on a mount, so that failure diagnostics can show their status.
STORE="" M="" REPO="" ORIGIN=""

if [ ! -x "$PFS" ]; then
	echo "$TEST_NAME: packetfs binary not found at $PFS (build first, or set PACKETFS_BIN)" >&2
	exit 1
fi

# fail MESSAGE... : prints the message and ends the test with status 1.
fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

note()
{
	echo "# $*"
}

# pids_under DIR : pids of processes whose cwd lies in DIR or whose command line names a path
# in it, one a line.
pids_under()
{
	{
		find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$1" -o -lname "$1/*" \) 2>/dev/null
		grep -lsF -- "$1/" /proc/[0-9]*/cmdline 2>/dev/null
	} | cut -d/ -f3 | sort -u
}

# kill_strays SIGNAL : sends SIGNAL to every process working in $T, except this shell and its
# ancestors.
kill_strays()
{
	local p a=$$
	local -A keep=()
	while [ -n "$a" ] && [ "$a" != 0 ] && [ "$a" != 1 ]; do
		keep[$a]=1
		a=$(awk '/^PPid:/ { print $2 }' "/proc/$a/status" 2>/dev/null || true)
	done
	for p in $(pids_under "$T"); do
		[ -n "${keep[$p]:-}" ] || kill "-$1" "$p" 2>/dev/null || true
	done
}

dump_diagnostics()
{
	local m item
	echo "--- diagnostics ($TEST_NAME, $T)" >&2
	for m in "${MOUNTS[@]}"; do
		timeout 5 mountpoint -q "$m" 2>/dev/null || continue
		for item in "$m"/*/; do
			[ -e "$item/ctl" ] || continue # an item (learnings/ is not)
			echo "--- $item status" >&2
			timeout 5 cat "$item/status" >&2 2>&1 || true
			echo "--- $item ls" >&2
			timeout 5 ls -la "$item" "$item/stages" "$item/validation" "$item/validation/logs" \
				2>&1 | grep -v '^$' | head -60 >&2 || true
			for f in "$item"/stages/*.log; do
				[ -f "$f" ] || continue
				echo "--- $f" >&2
				timeout 5 tail -n 15 "$f" >&2 2>&1 || true
			done
		done
	done
}

cleanup()
{
	local rc=$1 i p
	set +e
	trap '' PIPE
	cd /
	if [ "$rc" != 0 ]; then
		dump_diagnostics || true
	fi
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for i in "${!MOUNTS[@]}"; do
		fusermount3 -u -z "${MOUNTS[$i]}" 2>/dev/null || true
	done
	# A daemon whose mount is gone ends by itself; give it a bounded moment, then force it.
	for i in "${!DAEMON_PIDS[@]}"; do
		p=${DAEMON_PIDS[$i]}
		[ -n "$p" ] || continue
		for _ in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$p" 2>/dev/null || true
	done
	kill_strays TERM || true
	kill_strays KILL || true
	for i in "${!CLEANUP_HOOKS[@]}"; do
		"${CLEANUP_HOOKS[$i]}" || true
	done
	for i in "${!MOUNTS[@]}"; do
		if timeout 5 mountpoint -q "${MOUNTS[$i]}" 2>/dev/null; then
			echo "$TEST_NAME: ${MOUNTS[$i]} still mounted; leaving $T" >&2
			return
		fi
	done
	if [ -z "${PFS_KEEP:-}" ]; then
		rm -rf "$T" "${EXTRA_DIRS[@]}"
	else
		echo "# kept $T ${EXTRA_DIRS[*]}" >&2
	fi
}
trap 'rc=$?; trap - EXIT; cleanup $rc; exit $rc' EXIT
trap 'exit 130' INT TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

# wait_for [-t SECONDS] CMD... : runs CMD every 50 ms until it succeeds; fails the test with a
# message when the bound (default $WAIT_BOUND seconds) runs out.
wait_for()
{
	local bound=$WAIT_BOUND
	if [ "${1:-}" = -t ]; then
		bound=$2
		shift 2
	fi
	local end=$(( $(date +%s%N) + bound * 1000000000 ))
	while ! "$@" >/dev/null 2>&1; do
		if [ "$(date +%s%N)" -gt "$end" ]; then
			fail "waited ${bound}s in vain for: $*"
		fi
		sleep 0.05
	done
}

# wait_gone PID : waits (bounded) until the process PID no longer exists (pid_alive); fails the
# test when the bound runs out.
wait_gone()
{
	local pid=$1 end=$(( $(date +%s%N) + WAIT_BOUND * 1000000000 ))
	while pid_alive "$pid"; do
		if [ "$(date +%s%N)" -gt "$end" ]; then
			fail "process $pid still alive after ${WAIT_BOUND}s"
		fi
		sleep 0.05
	done
}


# stage_run SCRIPT ARG... : the "run" array for a fixture stage program.
stage_run()
{
	local script=$1
	shift
	argv_json /bin/bash "$FIXTURES/stages/$script" "$@"
}

# make_repo [DIR] : a git repository with a tiny C project on branch main (REPO), and a bare
# clone of it (ORIGIN) configured as its remote "origin".
make_repo()
{
	local dir=${1:-$T/repo}
	mkdir -p "$dir"
	REPO="$dir/work"
	ORIGIN="$dir/origin.git"
	git init -q -b main "$REPO"
	cat >"$REPO/hello.c" <<'EOF'
#include <stdio.h>

int main(void)
{
	printf("hello, old world\n");
	return 0;
}
EOF
	cat >"$REPO/Makefile" <<'EOF'
hello: hello.c
	$(CC) -Wall -o hello hello.c
EOF
	printf 'hello\n*.o\n' >"$REPO/.gitignore"
	printf '# hello\n\nA tiny C project.\n' >"$REPO/README.md"
	git -C "$REPO" add -A
	git -C "$REPO" commit -q -m "initial commit"
	git clone -q --bare "$REPO" "$ORIGIN"
	git -C "$REPO" remote add origin "$ORIGIN"
}

# copy_recipes [SET...] : copies the fixture recipes (tests/fixtures/recipes), and those of each
# further fixture SET (tests/fixtures/SET/*.sh, e.g. junit), to $T/recipes (executable) and sets
# RECIPES.
copy_recipes()
{
	local set
	RECIPES="$T/recipes"
	mkdir -p "$RECIPES"
	cp "$FIXTURES"/recipes/* "$RECIPES/"
	for set in "$@"; do
		cp "$FIXTURES/$set"/*.sh "$RECIPES/"
	done
	chmod +x "$RECIPES"/*
}

# manual_procedure [HEADER...] : writes $RECIPES/10-manual.md, a procedure (no command of its
# own: a stage records its runs) with the header lines HEADER (e.g. "# needs: 01-build").
manual_procedure()
{
	printf '%s\n' '<!-- # summary: the greeting reads as the plan says -->' "$@" '# timeout: 60' \
		'' 'Print the greeting and check that it says "new".' >"$RECIPES/10-manual.md"
	chmod 644 "$RECIPES/10-manual.md"
}

# std_pipeline FILE : writes the usual five-stage pipeline built of fixture stage programs
# (pipeline_with): plan, print, validate, a review that loops back to print, and a publish behind
# the gate approve. Tunables (environment of the call): PLAN_RECIPES (names the plan lists, default
# "01-build 02-lint"), PRINT_ARGS (arguments of print.sh), ASSESSMENT (review's verdict, default
# sound), MAX_ITER (default 3), GPUS (the "gpus" member, default 0), EXTRA (extra top-level
# members, e.g. '"max_doc_size": 1024,').
std_pipeline()
{
	# shellcheck disable=SC2086
	pipeline_with "$1" "$(plan_stage ${PLAN_RECIPES:-01-build 02-lint})" "$(print_stage ${PRINT_ARGS:-})" \
		"$(validate_stage)" "$(review_loop "${MAX_ITER:-3}" review.sh "${ASSESSMENT:-sound}")" \
		"$(publish_stage '"gate": "approve",')"
}

# make_store [PIPELINE_FILE] : `packetfs init` of a new store $STORE over $REPO.
make_store()
{
	[ -n "$REPO" ] || make_repo
	STORE="$T/store"
	local out
	if [ $# -gt 0 ]; then
		out=$("$PFS" init "$STORE" --repo "$REPO" --pipeline "$1" 2>&1) ||
			fail "packetfs init failed: $out"
	else
		out=$("$PFS" init "$STORE" --repo "$REPO" 2>&1) || fail "packetfs init failed: $out"
	fi
	[ -d "$STORE" ] || fail "packetfs init made no store directory"
}

# find_daemon STORE MNT : pid of the daemon serving STORE on MNT (empty if none).
find_daemon()
{
	pid_of_cmdline -p "$PFS" mount "$1" "$2"
}

# mount_store [MNT] [STORE] : `packetfs mount STORE MNT` (daemonized), then waits until the
# mount answers (MNT/.packetfs/version exists). Sets M (the mount point) and DAEMON.
# MOUNT_OPTS, when set, is passed as -o MOUNT_OPTS; PACKETFS_TEST_RING=1 adds io_uring to them
# (tests/fs/ring.sh runs the file system tests so). MOUNT_WRAP, when set, is a command (words
# split at spaces) the daemon is started through, such as setpriv with capabilities to drop.
mount_store()
{
	local mnt=${1:-$T/mnt} store=${2:-$STORE} out opts=()
	mkdir -p "$mnt"
	MOUNTS+=("$mnt")
	DAEMON_PIDS+=("")
	[ -z "${MOUNT_OPTS:-}" ] || opts=(-o "$MOUNT_OPTS")
	[ -z "${PACKETFS_TEST_RING:-}" ] || opts=(-o "${MOUNT_OPTS:+$MOUNT_OPTS,}io_uring")
	# shellcheck disable=SC2086 # MOUNT_WRAP is words
	out=$(${MOUNT_WRAP:-} "$PFS" mount "$store" "$mnt" "${opts[@]}" 2>&1 </dev/null) ||
		fail "packetfs mount failed: $out"
	wait_for test -e "$mnt/.packetfs/version"
	M=$mnt
	DAEMON=$(find_daemon "$store" "$mnt")
	[ -n "$DAEMON" ] || fail "no daemon process found for $store on $mnt"
	DAEMON_PIDS[${#DAEMON_PIDS[@]} - 1]=$DAEMON
}

# kill_daemon : kill -9 of the daemon serving $M; waits until it is gone and lazily unmounts
# what it left (mount_store "$M" mounts the store again).
kill_daemon()
{
	local old=$DAEMON
	kill -9 "$old"
	wait_gone "$old"
	forget_daemon "$old"
	fusermount3 -u -z "$M"
}

# forget_daemon PID : drops a daemon that is known to be gone from the cleanup list.
forget_daemon()
{
	local i
	for i in "${!DAEMON_PIDS[@]}"; do
		[ "${DAEMON_PIDS[i]}" = "$1" ] && DAEMON_PIDS[i]=""
	done
	return 0
}

# umount_store [MNT] : `packetfs umount MNT`, then waits until its daemon has exited.
umount_store()
{
	local mnt=${1:-$M} out i
	out=$("$PFS" umount "$mnt" 2>&1) || fail "packetfs umount failed: $out"
	for i in "${!MOUNTS[@]}"; do
		if [ "${MOUNTS[$i]}" = "$mnt" ] && [ -n "${DAEMON_PIDS[$i]}" ]; then
			wait_gone "${DAEMON_PIDS[$i]}"
			DAEMON_PIDS[i]=""
		fi
	done
	mountpoint -q "$mnt" && fail "$mnt still mounted after packetfs umount"
	return 0
}

# status_field MNT ITEM KEY : the value of "KEY: value" in MNT/ITEM/status.
status_field()
{
	sed -n "s/^$3: *//p" "$1/$2/status" | head -n 1
}

# wait_state MNT ITEM STATE : polls ITEM's status until its state is STATE (bounded). A state
# that is failed or blocked (other than STATE) ends the wait at once: nothing leaves those by
# itself.
wait_state()
{
	local mnt=$1 item=$2 want=$3 st=""
	local end=$(( $(date +%s%N) + WAIT_BOUND * 1000000000 ))
	while :; do
		st=$(status_field "$mnt" "$item" state 2>/dev/null || true)
		[ "$st" = "$want" ] && return 0
		case "$st" in
		failed | blocked)
			[ -z "${WAIT_STATE_PATIENT:-}" ] &&
				fail "$item: state $st while waiting for $want: $(cat "$mnt/$item/status" 2>&1)"
			;;
		esac
		if [ "$(date +%s%N)" -gt "$end" ]; then
			fail "$item: state still '$st' after ${WAIT_BOUND}s, want $want:" \
				"$(cat "$mnt/$item/status" 2>&1)"
		fi
		sleep 0.05
	done
}

# ctl MNT ITEM COMMAND : writes one command line to the item's ctl; fails the test on error.
ctl()
{
	local out
	out=$( { printf '%s\n' "$3" >"$1/$2/ctl"; } 2>&1) || fail "ctl '$3' failed: $out"
}

# assert_eq EXPECTED ACTUAL [WHAT]
assert_eq()
{
	if [ "$1" != "$2" ]; then
		fail "${3:-value}: expected '$1', got '$2'"
	fi
}

# assert_contains HAYSTACK NEEDLE [WHAT]
assert_contains()
{
	case "$1" in
	*"$2"*) ;;
	*) fail "${3:-text} does not contain '$2': $1" ;;
	esac
}

# assert_contains_each HAYSTACK WHAT NEEDLE... : HAYSTACK contains every NEEDLE (assert_contains,
# WHAT naming HAYSTACK in the failure message).
assert_contains_each()
{
	local text=$1 what=$2 needle
	shift 2
	for needle in "$@"; do
		assert_contains "$text" "$needle" "$what"
	done
}

assert_not_contains()
{
	case "$1" in
	*"$2"*) fail "${3:-text} contains '$2': $1" ;;
	esac
}

# assert_file_eq FILE EXPECTED_CONTENT
assert_file_eq()
{
	local got
	got=$(cat "$1" && printf x) || fail "cannot read $1"
	got=${got%x}
	[ "$got" = "$2" ] || fail "$1: expected content '$2', got '$got'"
}

# assert_doc FILE CONTENT : FILE holds exactly CONTENT, and the size stat reports matches it.
assert_doc()
{
	assert_file_eq "$1" "$2"
	assert_eq "$(printf '%s' "$2" | wc -c)" "$(stat -c %s "$1")" "size of $1"
}

errno_text()
{
	case "$1" in
	EINVAL) echo "Invalid argument" ;;
	EACCES) echo "Permission denied" ;;
	EPERM) echo "Operation not permitted" ;;
	EEXIST) echo "File exists" ;;
	EFBIG) echo "File too large" ;;
	ENOENT) echo "No such file or directory" ;;
	EBUSY) echo "Device or resource busy" ;;
	ENOTEMPTY) echo "Directory not empty" ;;
	EISDIR) echo "Is a directory" ;;
	ENOTDIR) echo "Not a directory" ;;
	EXDEV) echo "Invalid cross-device link" ;;
	*) echo "$1" ;;
	esac
}

# assert_fails_with ERRNO_NAME|TEXT CMD... : CMD must fail and its output must carry the
# error text (EINVAL -> "Invalid argument", ...). Use bash -c for redirections.
assert_fails_with()
{
	local want out rc=0
	want=$(errno_text "$1")
	shift
	out=$("$@" 2>&1 </dev/null) || rc=$?
	[ "$rc" != 0 ] || fail "'$*' succeeded, expected failure with '$want'; output: $out"
	assert_contains "$out" "$want" "error of '$*'"
}

# sh_write FILE TEXT : printf TEXT > FILE in a child shell (for assert_fails_with).
sh_write()
{
	bash -c 'printf "%s" "$2" > "$1"' _ "$1" "$2"
}

# sh_append FILE TEXT : printf TEXT >> FILE in a child shell.
sh_append()
{
	bash -c 'printf "%s" "$2" >> "$1"' _ "$1" "$2"
}

# write_then_close FILE APPEND|TRUNC TEXT : one open(2) of FILE for writing (O_APPEND or
# O_TRUNC), one write(2) of TEXT, then close(2): for a last line without a newline, which the
# mount judges at close. Exits 0 when the close succeeds; a close that fails exits 1 with the
# error's text (strerror) on stderr (for assert_fails_with).
write_then_close()
{
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | getattr(os, "O_" + sys.argv[2]))
os.write(fd, sys.argv[3].encode())
try:
    os.close(fd)
except OSError as e:
    sys.exit(os.strerror(e.errno))
' "$@"
}

# bg COMMAND... : starts a helper in the background, ended by cleanup. Sets BG.
bg()
{
	"$@" &
	BG=$!
	BG_PIDS+=("$BG")
}

# new_item NAME : mkdir of an item on $M, checked.
new_item()
{
	mkdir "$M/$1" || fail "mkdir $M/$1 failed"
	[ -f "$M/$1/status" ] || fail "new item $1 has no status file"
}

# file_sha256 FILE
file_sha256()
{
	sha256sum "$1" | cut -d' ' -f1
}

# hex_of FILE : the bytes of FILE as lowercase hex digits, all on one line.
hex_of()
{
	od -An -v -tx1 "$1" | tr -d ' \n'
}

# doc_names ITEM_DIR : the documents at the top of an item directory (its listing less the
# entries every item has), sorted, each followed by a space.
doc_names()
{
	ls -A "$1" | grep -vxE '\.history|change\.diff|compute-env\.md|ctl|events|report\.html|stages|status|status\.json|validation|worktree' |
		sort | tr '\n' ' '
}

# revs ITEM_DIR PATH : the revision numbers ITEM_DIR/.history lists for the item-relative PATH
# (a document in a subdirectory lives in .history/SUBDIR/NAME@REV), ascending, one a line.
revs()
{
	local dir=$1/.history base=${2##*/} f rev
	case $2 in */*) dir=$dir/${2%/*} ;; esac
	[ -d "$dir" ] || return 0
	for f in "$dir/$base"@*; do
		rev=${f#"$dir/$base"@}
		if [[ $rev =~ ^[0-9]+$ ]]; then
			echo "$rev"
		fi
	done | sort -n
}

# last_rev ITEM_DIR PATH : the latest revision number of PATH in ITEM_DIR/.history (empty if none).
last_rev()
{
	revs "$1" "$2" | tail -n 1
}

# reg count|field|check REGISTRY ... : see tests/fixtures/registry.py.
reg()
{
	python3 "$FIXTURES/registry.py" "$@"
}

STATUS_KEYS="item title state stage iteration branch base head verdict assessment evidence gpus
last_error updated"

# check_status MNT ITEM : status has every key of SPEC §4 once, a known state, an RFC 3339 UTC
# "updated"; status.json is one JSON object with the same keys and the same state.
check_status()
{
	local st key n
	st=$(cat "$1/$2/status") || fail "cannot read $2/status"
	for key in $STATUS_KEYS; do
		n=$(printf '%s\n' "$st" | grep -c "^$key:" || true)
		[ "$n" = 1 ] || fail "status has $n '$key:' lines: $st"
	done
	case "$(status_field "$1" "$2" state)" in
	new | queued | running | waiting | blocked | failed | done) ;;
	*) fail "status state is not a known state: $st" ;;
	esac
	status_field "$1" "$2" updated |
		grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|\+00:00)$' ||
		fail "status updated is not RFC 3339 UTC: $(status_field "$1" "$2" updated)"
	python3 - "$1/$2/status.json" "$(status_field "$1" "$2" state)" $STATUS_KEYS <<'PY' ||
import json, sys
o = json.load(open(sys.argv[1]))
assert isinstance(o, dict), o
missing = [k for k in sys.argv[3:] if k not in o]
assert not missing, "status.json lacks %s: %r" % (missing, o)
assert o["state"] == sys.argv[2], "status.json state %r, status says %r" % (o["state"], sys.argv[2])
PY
		fail "status.json does not match status"
}

# last_line FILE : the last non-empty line of FILE.
last_line()
{
	grep -v '^[[:space:]]*$' "$1" | tail -n 1
}

# newest_stage_log ITEM : the name of the newest stage log of ITEM on $M (empty when none).
newest_stage_log()
{
	ls "$M/$1/stages" | sort -n | tail -n 1
}

# worktree_head ITEM : the commit checked out in the item's worktree.
worktree_head()
{
	git -C "$STORE/worktrees/$1" rev-parse HEAD
}

# assert_head FULL_SHA VALUE WHAT : VALUE is the commit FULL_SHA, abbreviated to 7+ digits or not.
assert_head()
{
	if [ "${#2}" -lt 7 ] || [ "${1#"$2"}" = "$1" ]; then
		fail "$3: expected commit $1, got '$2'"
	fi
}

# shellcheck source=lib_pipeline.sh
. "$TESTS_DIR/lib_pipeline.sh"
