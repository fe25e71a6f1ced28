#!/usr/bin/env bash
# test-timeout: 180
# Carried runs count only at the carried head: an item whose head moved after its recipes ran
# (a commit by hand, one recipe run again) is exported and imported into a second store. The runs
# of the older head come as "imported" lines: kept byte for byte in registry.jsonl, shown in
# evidence.md with their reason, and never counted, not even once the branch is set back to the
# commit they ran at; the run at the carried head counts.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 03-fail

ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state after validate"
head1=$(worktree_head fix-1)
echo change >"$STORE/worktrees/fix-1/by-hand.txt"
git -C "$STORE/worktrees/fix-1" add by-hand.txt
git -C "$STORE/worktrees/fix-1" commit -q -m "by hand"
head2=$(worktree_head fix-1)
wait_for bash -c '[ "$(sed -n "s/^head: *//p" "$1")" = "$2" ]' _ "$d/status" "$head2"
ctl "$M" fix-1 "rerun 01-build"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=01-build)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
settled fix-1 >/dev/null
assert_eq "1/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence in the first store"
verdict=$(status_field "$M" fix-1 verdict)
verdict_head=$(status_field "$M" fix-1 verdict_head)
out=$("$PFS" export "$M" fix-1 "$T/export" 2>&1) || fail "packetfs export failed: $out"
umount_store

STORE2=$T/store2
out=$("$PFS" init "$STORE2" --repo "$REPO" --pipeline "$T/pipeline.json" 2>&1) ||
	fail "init of the second store failed: $out"
out=$("$PFS" import "$STORE2" "$T/export" fix-2 2>&1) || fail "packetfs import failed: $out"
assert_eq "2 1" "$(sqlite3 "$STORE2/packetfs.db" "SELECT COUNT(*) FROM registry WHERE \
source = 'imported'; SELECT COUNT(*) FROM registry WHERE source = 'engine'" | tr '\n' ' ' |
	sed 's/ $//')" "imported and engine lines"
out=$("$PFS" check "$STORE2" 2>&1) || fail "packetfs check of the second store: $out"
STORE=$STORE2
mount_store "$T/mnt2" "$STORE2"
d2=$T/mnt2/fix-2
cmp -s "$T/export/validation/registry.jsonl" "$d2/validation/registry.jsonl" ||
	fail "imported registry.jsonl differs"
assert_eq "$head2" "$(status_field "$T/mnt2" fix-2 head)" "imported head"
assert_eq "1/2 validated" "$(status_field "$T/mnt2" fix-2 evidence)" "imported evidence"
ev=$(cat "$d2/validation/evidence.md")
assert_contains "$ev" "imported: ran at ${head1:0:12}, not at the imported head ${head2:0:12}" \
	"evidence.md"
assert_contains "$(grep '^| 03-fail' "$d2/validation/evidence.md")" "missing" "03-fail row"
assert_eq "$verdict" "$(status_field "$T/mnt2" fix-2 verdict)" "imported verdict"
assert_eq "$verdict_head" "$(status_field "$T/mnt2" fix-2 verdict_head)" "imported verdict_head"

# The branch set back to the commit the imported runs ran at: they still do not count.
git -C "$STORE2/worktrees/fix-2" reset -q --hard "$head1"
wait_for bash -c '[ "$(sed -n "s/^head: *//p" "$1")" = "$2" ]' _ "$d2/status" "$head1"
assert_eq "0/2 validated" "$(status_field "$T/mnt2" fix-2 evidence)" "evidence at the old head"
exit 0
