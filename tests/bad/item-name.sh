#!/usr/bin/env bash
# Item names must match [a-z0-9][a-z0-9._-]{0,63}: anything else is EINVAL, names the root uses
# are EEXIST, and a refused mkdir creates nothing (no directory, no branch, no worktree). The
# person whose mkdir got EINVAL finds why in the mount's events (an item_refused event naming the
# name and the rule) and in the -o log= file.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
MOUNT_OPTS="log=$T/daemon.log" mount_store

before=$(ls -A "$M")
long65=$(printf 'a%.0s' $(seq 65))
for name in "Bad Name" UPPER Fix-1 "-lead" "_under" ".hidden" "tab	name" "$long65" "semi;colon" \
	"ümlaut"; do
	assert_fails_with EINVAL mkdir "$M/$name"
done
rule='invalid item name (use [a-z0-9][a-z0-9._-]{0,63})'
assert_eq "{\"type\":\"item_refused\",\"name\":\"Fix-1\",\"error\":\"$rule\"}" \
	"$(grep '"name":"Fix-1"' "$M/events" | sed 's/^{"ts":"[^"]*",/{/')" "the event of mkdir Fix-1"
assert_contains "$(cat "$T/daemon.log")" "warning: mkdir Fix-1: $rule" "the log of mkdir Fix-1"
# A name that is no UTF-8 is told with '?' for its bad bytes; the events stay JSON.
assert_fails_with EINVAL mkdir "$M/$(printf 'x\377y')"
assert_contains "$(tail -n 1 "$M/events")" '"name":"x?y"' "the event of a name that is no UTF-8"
python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]' \
	"$M/events" || fail "events is not JSON Lines after refused names"
assert_fails_with EEXIST mkdir "$M/events"
assert_fails_with EEXIST mkdir "$M/.packetfs"
assert_fails_with EEXIST mkdir "$M/.archive"
assert_fails_with EEXIST mkdir "$M/index.html"
rc=0
err=$("$PFS" new "$M" "Bad Name" 2>&1 </dev/null) || rc=$?
[ "$rc" = 1 ] || fail "packetfs new with a bad name exited $rc, expected 1: $err"
assert_contains "$err" "packetfs: " "error of packetfs new with a bad name"

assert_eq "$before" "$(ls -A "$M")" "mount root after refused mkdirs"
assert_eq "" "$(git -C "$REPO" for-each-ref refs/heads/packetfs/)" "packetfs branches"
assert_eq "" "$(ls -A "$STORE/worktrees")" "worktrees after refused mkdirs"

# The longest legal name (64) and the other legal characters are accepted.
long64=$(printf 'b%.0s' $(seq 64))
mkdir "$M/$long64" || fail "mkdir of a 64-character name failed"
mkdir "$M/0.fix_it-now" || fail "mkdir of 0.fix_it-now failed"
git -C "$REPO" rev-parse -q --verify "refs/heads/packetfs/$long64" >/dev/null ||
	fail "no branch for the 64-character item"
# Inside an item, directories are plain documents: any name goes.
mkdir "$M/0.fix_it-now/Notes Dir" || fail "mkdir of a directory inside an item failed"
exit 0
