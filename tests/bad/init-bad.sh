#!/usr/bin/env bash
# The command line refuses bad input precisely: missing repo, non-empty store directory, bad
# pipeline file (exit 1, "packetfs: what: why"); unknown command or missing arguments (exit 2).
. "$(dirname "$0")/../lib.sh"
make_repo

# run_pfs EXPECTED_STATUS ARGS... : runs packetfs, checks the status, leaves stderr in $err.
run_pfs()
{
	local want=$1 rc=0
	shift
	err=$("$PFS" "$@" 2>&1 >/dev/null </dev/null) || rc=$?
	[ "$rc" = "$want" ] || fail "packetfs $* exited $rc, expected $want: $err"
}

run_pfs 1 init "$T/s1" --repo "$T/no-such-repo"
assert_contains "$err" "packetfs: " "error of init with a missing repo"
[ ! -e "$T/s1" ] || fail "a failed init left $T/s1 behind"

mkdir "$T/plain"
run_pfs 1 init "$T/s2" --repo "$T/plain"
assert_contains "$err" "packetfs: " "error of init with a directory that is not a repository"
[ ! -e "$T/s2" ] || fail "a failed init left $T/s2 behind"

mkdir "$T/s3"
echo precious >"$T/s3/file"
run_pfs 1 init "$T/s3" --repo "$REPO"
assert_contains "$err" "packetfs: " "error of init into a non-empty directory"
assert_file_eq "$T/s3/file" $'precious\n'
assert_eq file "$(ls -A "$T/s3")" "contents of the non-empty directory"

printf '{"stages": [' >"$T/bad.json"
run_pfs 1 init "$T/s4" --repo "$REPO" --pipeline "$T/bad.json"
assert_contains "$err" "packetfs: " "error of init with a bad pipeline"
[ ! -e "$T/s4" ] || fail "a failed init left $T/s4 behind"
run_pfs 1 init "$T/s5" --repo "$REPO" --pipeline "$T/no-such-pipeline.json"
assert_contains "$err" "packetfs: " "error of init with a missing pipeline file"

run_pfs 2 frobnicate
assert_contains "$err" "packetfs: " "error of an unknown command"
run_pfs 2 init
run_pfs 2 init "$T/s6"
run_pfs 2 mount
run_pfs 2 init "$T/s7" --repo "$REPO" --bogus-option
[ ! -e "$T/s7" ] || fail "a usage error left $T/s7 behind"

mkdir "$T/mnt-x"
MOUNTS+=("$T/mnt-x")
DAEMON_PIDS+=("")
run_pfs 1 mount "$T/no-such-store" "$T/mnt-x"
mountpoint -q "$T/mnt-x" && fail "a missing store got mounted"
assert_contains "$err" "packetfs: " "error of mounting a missing store"
run_pfs 1 status "$T/no-such-store"
run_pfs 1 check "$T/no-such-store"

run_pfs 0 --version
out=$("$PFS" --version)
assert_contains "$out" "0.1.0" "packetfs --version"
run_pfs 0 --help
out=$("$PFS" --help 2>&1)
for c in init mount umount new status log check export import; do
	assert_contains "$out" "$c" "packetfs --help"
done
run_pfs 0 help mount

# The good case still works after all that.
make_store
run_pfs 0 check "$STORE"
exit 0
