#!/usr/bin/env bash
# The kernel caches entries and the attributes the engine calls stable (fs/fs_cache.c "Caching"); every
# change must still show at once. Checked with the kernel holding each file's attributes from a
# stat made before the change: views (status, status.json, events, evidence.md), registry.jsonl
# and a log while the engine changes them (the size stat gives is the size read); a sealed log
# keeps its size and mtime; change-validation.md and the item directory when the engine writes
# the document (created, then rewritten by a rerun: stat, cat and the document's last revision
# agree, its mtime moves); documents changed through the mount by other paths (rename over,
# truncate, another handle); the item's fixed directories when its row is written; an item
# archived through ctl is gone for stat at once, and its documents with it.
. "$(dirname "$0")/../lib.sh"
export GATE_DIR=$T/gates # inherited by the daemon, and so by its recipes
mkdir -p "$GATE_DIR"
pipeline_item "$(plan_stage 09-gated)" "$(validate_stage)"
OLD="2001-02-03 04:05:06 UTC" OLD_S=981173106

# same_size FILE... : stat's size of each FILE is the number of bytes a read gives. The stat
# comes first: a read makes the kernel ask the attributes again (the access time), so after one
# a stat could not show what the kernel held.
same_size()
{
	local f size
	for f in "$@"; do
		size=$(stat -c %s "$f")
		assert_eq "$(cat "$f" | wc -c)" "$size" "size of $f (stat against read)"
	done
}

VIEWS="$d/status $d/status.json $d/events $d/change.diff $d/validation/evidence.md
$d/validation/registry.jsonl $M/events"
# shellcheck disable=SC2086
same_size $VIEWS
printf 'brief\n' >"$d/brief.md"
touch -d "$OLD" "$d"
assert_eq "$OLD_S" "$(stat -c %Y "$d")" "mtime of the item after touch -d"
stat "$d/brief.md" "$d/validation" >/dev/null

# A run: the log grows under a kernel that has its attributes.
ctl "$M" fix-1 advance
log_exists()
{
	ls "$d/validation/logs" 2>/dev/null | grep -q -- '-09-gated-'
}
wait_for log_exists
log=$d/validation/logs/$(ls "$d/validation/logs" | grep -- '-09-gated-')
stat "$log" >/dev/null
for i in 1 2 3; do
	touch "$GATE_DIR/go-$i"
	wait_for grep -qx "gated line $i" "$log"
	same_size "$log"
	# shellcheck disable=SC2086
	same_size $VIEWS
done
wait_state "$M" fix-1 done
wait_for grep -q '^# packetfs: status validated' "$log"

# Sealed: final size, an mtime that stays, the same bytes on every read.
same_size "$log"
size=$(stat -c %s "$log") mtime=$(stat -c %.9Y "$log") sum=$(file_sha256 "$log")
assert_eq "$sum" "$(file_sha256 "$log")" "sha256 of the sealed log read twice"
assert_eq "$size" "$(stat -c %s "$log")" "size of the sealed log"
assert_eq "$mtime" "$(stat -c %.9Y "$log")" "mtime of the sealed log"
# shellcheck disable=SC2086
same_size $VIEWS
assert_contains "$(cat "$d/status")" "evidence: 1/1 validated" "status after the run"

# change-validation.md was created by the engine: the item directory changed, and the document
# reads whole.
[ "$(stat -c %Y "$d")" -gt "$OLD_S" ] || fail "mtime of the item did not move when the engine" \
	"created change-validation.md"
cv=$d/change-validation.md
same_size "$cv"
assert_contains "$(cat "$cv")" "## Verdict: pass" "change-validation.md"
assert_eq "$(cat "$d/.history/change-validation.md@$(last_rev "$d" change-validation.md)")" \
	"$(cat "$cv")" "change-validation.md against its last revision"

# Rewritten by the engine while the kernel holds its attributes and those of its directory.
touch -d "$OLD" "$d"
rev=$(last_rev "$d" change-validation.md) mtime=$(stat -c %.9Y "$cv")
stat "$d" >/dev/null
ctl "$M" fix-1 "rerun 09-gated"
rewritten()
{
	[ "$(last_rev "$d" change-validation.md)" -gt "$rev" ]
}
wait_for rewritten
wait_state "$M" fix-1 done
[ "$(stat -c %.9Y "$cv")" != "$mtime" ] || fail "mtime of change-validation.md did not move" \
	"when the engine rewrote it"
same_size "$cv" "$d/validation/registry.jsonl"
assert_eq 2 "$(wc -l <"$d/validation/registry.jsonl")" "registry lines after the rerun"
assert_eq "$(cat "$d/.history/change-validation.md@$(last_rev "$d" change-validation.md)")" \
	"$(cat "$cv")" "change-validation.md against its last revision after the rerun"
assert_eq "$OLD_S" "$(stat -c %Y "$d")" "mtime of the item after the engine rewrote a document"
# shellcheck disable=SC2086
same_size $VIEWS

# registry.jsonl's attributes are cached (the kernel asks none at a `>>`'s open): a line
# appended through the mount is stored longer than written ("source":"external"), a refused
# one not at all, and stat tells the size a read gives after each, for a kernel that held
# them. (The engine's own lines: the runs above.)
reg=$d/validation/registry.jsonl
stat "$reg" >/dev/null
printf '{"recipe":"99-manual","status":"validated","command":"true","note":"n","exit_code":0}\n' >>"$reg"
same_size "$reg"
assert_eq 3 "$(wc -l <"$reg")" "registry lines after a line appended through the mount"
assert_fails_with EINVAL sh_append "$reg" $'not json\n'
same_size "$reg"
assert_eq 3 "$(wc -l <"$reg")" "registry lines after a refused line"

# Documents changed through the mount by other paths than the one stat-ed.
printf 'one\n' >"$d/a.md"
same_size "$d/a.md"
printf 'a longer second version\n' >"$d/a.tmp"
mv "$d/a.tmp" "$d/a.md"
same_size "$d/a.md"
assert_file_eq "$d/a.md" $'a longer second version\n'
truncate -s 3 "$d/a.md"
same_size "$d/a.md"
assert_eq 3 "$(stat -c %s "$d/a.md")" "size of a.md after truncate"
exec 7>>"$d/a.md"
printf 'appended\n' >&7
same_size "$d/a.md"
exec 7>&-
same_size "$d/a.md"
assert_file_eq "$d/a.md" $'a lappended\n'

# The fixed directories are dated by the item's updated time (whole seconds): a write of the
# item row (a ctl command's result) moves them for a kernel that holds their attributes.
fixed="$d/stages $d/validation $d/validation/logs $d/.history"
# shellcheck disable=SC2086
stat $fixed >/dev/null
dated=$(stat -c %Y "$d/stages")
later()
{
	[ "$(date +%s)" -gt "$dated" ]
}
wait_for later
ctl "$M" fix-1 hold
# status itself is dated now (a view); the row's time is its "updated" line.
updated=$(date -d "$(status_field "$M" fix-1 updated)" +%s)
for f in $fixed; do
	[ "$(stat -c %Y "$f")" -gt "$dated" ] || fail "mtime of $f did not move with the item row"
	assert_eq "$updated" "$(stat -c %Y "$f")" "mtime of $f against the item's updated time"
done
ctl "$M" fix-1 release

# Archived through ctl: gone at once, for a kernel that had the item and its documents.
stat "$d" "$d/brief.md" "$d/a.md" "$reg" >/dev/null
ctl "$M" fix-1 archive
assert_fails_with ENOENT stat "$d"
assert_fails_with ENOENT stat "$d/brief.md"
assert_fails_with ENOENT stat "$reg"
assert_fails_with ENOENT cat "$d/a.md"
[ -d "$M/.archive/fix-1" ] || fail "no .archive/fix-1 after archive"
assert_file_eq "$M/.archive/fix-1/a.md" $'a lappended\n'
same_size "$M/.archive/fix-1/a.md" "$M/.archive/fix-1/change-validation.md" \
	"$M/.archive/fix-1/status" "$M/.archive/fix-1/validation/registry.jsonl"
exit 0
