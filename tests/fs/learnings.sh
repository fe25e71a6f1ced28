#!/usr/bin/env bash
# MOUNT/learnings/ holds project-wide documents with history (SPEC §3, §5): plain documents
# (also named like an item's views), .history of each, kept across remounts; it is not an item
# (no ctl, no status, not in `packetfs status`), and cannot be made, removed or renamed. Its times
# are those of the store (not 1970-01-01).
# (pipeline/env.sh: every stage gets its path in PACKET_LEARNINGS.)
. "$(dirname "$0")/../lib.sh"
make_repo
before=$(date +%s)
make_store
mount_store

[ -d "$M/learnings" ] || fail "no learnings directory: $(ls -A "$M")"
# Its times are the store's, not the epoch's (1970-01-01).
for f in %Y %Z %X; do
	t=$(stat -c "$f" "$M/learnings")
	[ "$t" -ge $((before - 1)) ] || fail "learnings/ has the time $t ($f), before the store was made"
done
ls "$M" | grep -qx learnings || fail "learnings not listed in the root"
[ -z "$(ls -A "$M/learnings" | grep -v '^\.history$')" ] ||
	fail "a new store's learnings is not empty: $(ls -A "$M/learnings")"

printf '# Build\n\nRun make clean first.\n' >"$M/learnings/build.md"
printf 'Run make clean before make.\n' >"$M/learnings/build.md"
mkdir "$M/learnings/ci"
echo "flaky: test-net" >"$M/learnings/ci/notes.md"
echo "a document, not a view" >"$M/learnings/status"
assert_file_eq "$M/learnings/build.md" $'Run make clean before make.\n'
assert_file_eq "$M/learnings/status" $'a document, not a view\n'
[ ! -e "$M/learnings/ctl" ] || fail "learnings has a ctl"
[ ! -e "$M/learnings/worktree" ] || fail "learnings has a worktree"
assert_file_eq "$M/learnings/.history/build.md@1" $'# Build\n\nRun make clean first.\n'
assert_file_eq "$M/learnings/.history/build.md@2" $'Run make clean before make.\n'

assert_fails_with EEXIST mkdir "$M/learnings"
assert_fails_with EPERM rmdir "$M/learnings"
assert_fails_with EPERM mv "$M/learnings" "$M/other"
"$PFS" status "$M" | grep -q learnings && fail "packetfs status lists learnings as an item"

umount_store
mount_store
assert_file_eq "$M/learnings/build.md" $'Run make clean before make.\n'
assert_file_eq "$M/learnings/ci/notes.md" $'flaky: test-net\n'
assert_file_eq "$M/learnings/.history/build.md@1" $'# Build\n\nRun make clean first.\n'
exit 0
