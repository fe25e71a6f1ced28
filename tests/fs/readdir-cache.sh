#!/usr/bin/env bash
# The kernel keeps the listings of an item's directory, its document directories, stages/,
# validation/ and validation/logs/ across opens (fs/fs_cache.c "Listings"); every change must
# still show at once in the next listing. Checked with each listing read (and so cached) before
# the change: stage and recipe logs the engine makes, a document the engine writes
# (change-validation.md), documents made, renamed and removed through the mount, a rerun's new log.
# Where the kernel has the fuse tracepoints, also checked: a second listing of a cached directory
# sends no readdir to the daemon, and one of .history/ (not cached) does.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_trace.sh"
export GATE_DIR=$T/gates # inherited by the daemon, and so by its recipes
mkdir -p "$GATE_DIR"
pipeline_item "$(plan_stage 09-gated 01-build)" "$(validate_stage)"
mkdir "$d/notes"
printf 'brief\n' >"$d/brief.md"

DIRS="$d $d/notes $d/stages $d/validation $d/validation/logs"
# list_all : reads every listing of DIRS (the kernel keeps them).
list_all()
{
	local x
	for x in $DIRS; do
		ls -a "$x" >/dev/null || fail "ls $x failed"
	done
}
# listed DIR PATTERN : the listing of DIR has a name matching the grep pattern PATTERN now (no
# waiting: the change it shows is already known to have happened).
listed()
{
	ls -a "$1" | grep -q -- "$2" || fail "ls $1 lacks '$2' though it exists: $(ls -a "$1" | tr '\n' ' ')"
}
unlisted()
{
	! ls -a "$1" | grep -q -- "$2" || fail "ls $1 still lists '$2': $(ls -a "$1" | tr '\n' ' ')"
}

list_all
list_all
n=$(requests_to "$M" FUSE_READDIRPLUS list_all)
if [ -n "$n" ]; then
	m=$(requests_to "$M" FUSE_READDIR list_all)
	assert_eq 0 "$((n + m))" "readdir requests for a second listing of cached directories"
	ls -a "$d/.history" >/dev/null
	n=$(requests_to "$M" FUSE_READDIRPLUS ls -a "$d/.history")
	m=$(requests_to "$M" FUSE_READDIR ls -a "$d/.history")
	[ "$((n + m))" -gt 0 ] || fail "a listing of .history/ sent no readdir: cached, though a" \
		"document's first revision adds to it unreported"
else
	echo "note: no fuse tracepoints in this kernel; the request counts are not checked"
fi

# Made through the mount, in every cached directory that takes documents.
printf 'one\n' >"$d/notes/a.md"
listed "$d/notes" '^a.md$'
printf 'two\n' >"$d/validation/extra.md"
listed "$d/validation" '^extra.md$'
list_all
mv "$d/notes/a.md" "$d/b.md"
unlisted "$d/notes" '^a.md$'
listed "$d" '^b.md$'
list_all
rm "$d/b.md"
unlisted "$d" '^b.md$'
list_all

# The engine's logs: the plan stage's, the validate stage's and each recipe's, with every
# listing cached before. A log is known to exist once the store has its run and a lookup of its
# path (which reads no listing) finds it; the listing must show it then.
command -v sqlite3 >/dev/null || exit 77
# log_of NAME N : the item-relative path of the Nth run of NAME (stage or recipe), if it exists.
log_of()
{
	sqlite3 "file:$STORE/packetfs.db?mode=ro" \
		"SELECT log_path FROM runs WHERE name = '$1' ORDER BY run_no LIMIT 1 OFFSET $(($2 - 1))"
}
# logged NAME N : the Nth run of NAME has a log, found by lookup.
logged()
{
	local p
	p=$(log_of "$1" "$2") && [ -n "$p" ] && [ -e "$d/$p" ]
}
# shown NAME N : waits until the Nth run of NAME is logged, then checks that the listing of the
# log's directory shows it at once.
shown()
{
	local p
	wait_for logged "$1" "$2"
	p=$(log_of "$1" "$2")
	listed "$d/$(dirname "$p")" "^$(basename "$p")\$"
}
ctl "$M" fix-1 advance
shown plan 1
shown validate 1
shown 09-gated 1
shown 01-build 1
list_all

# change-validation.md, written by the engine at the end of validate.
touch "$GATE_DIR/go-1" "$GATE_DIR/go-2" "$GATE_DIR/go-3"
wait_state "$M" fix-1 done
listed "$d" '^change-validation.md$'
assert_eq 2 "$(ls "$d/validation/logs" | wc -l)" "recipe logs listed"

# A rerun: a third log, in a directory whose listing the kernel holds.
list_all
ctl "$M" fix-1 "rerun 09-gated"
shown 09-gated 2
wait_state "$M" fix-1 done
assert_eq 3 "$(ls "$d/validation/logs" | wc -l)" "recipe logs listed after the rerun"
exit 0
