#!/usr/bin/env bash
# A recursive removal of an item (SPEC §3) ends in one defined state: `rm -rf MOUNT/<item>`
# prints nothing and archives the item with every document readable under .archive/<item>/;
# shutil.rmtree and `find -delete` reach the same state; a remover that takes documents before it meets an
# entry of the engine's still finds them all in the archive; a single `rm` of a view is still
# EACCES and leaves the item live; while a stage runs nothing is deleted and the item stays.
. "$(dirname "$0")/../lib.sh"
mount_item

# fill ITEM : documents in ITEM (a title, a plan, a subdirectory, a symlink).
fill()
{
	local p=$M/$1
	printf '# Fix the thing\n\nbody\n' >"$p/brief.md"
	printf 'plan of %s\n' "$1" >"$p/plan.md"
	mkdir "$p/notes"
	printf 'note a\n' >"$p/notes/a.md"
	ln -s plan.md "$p/link.md"
}

# archived_whole ITEM : ITEM left the root and its archive holds every document.
archived_whole()
{
	local a=$M/.archive/$1
	[ ! -e "$M/$1" ] || fail "$1 still in the root: $(ls -A "$M/$1" 2>&1 | tr '\n' ' ')"
	[ -d "$a" ] || fail "$1 not under .archive: $(ls -A "$M/.archive")"
	assert_file_eq "$a/brief.md" $'# Fix the thing\n\nbody\n'
	assert_file_eq "$a/plan.md" "plan of $1"$'\n'
	assert_file_eq "$a/notes/a.md" $'note a\n'
	assert_eq plan.md "$(readlink "$a/link.md")" "$1: link.md in the archive"
	assert_eq "Fix the thing" "$(status_field "$M/.archive" "$1" title)" "$1: title in the archive"
}

# rm -rf: no message at all, exit 0.
fill fix-1
out=$(rm -rf "$M/fix-1" 2>&1) || fail "rm -rf failed: $out"
assert_eq "" "$out" "what rm -rf printed"
archived_whole fix-1

# Python's shutil.rmtree: done, or (before Python 3.13) one FileNotFoundError for the entry
# after the one that archived the item.
new_item fix-2
fill fix-2
python3 - "$M/fix-2" <<'PY' || fail "shutil.rmtree failed"
import shutil, sys
try:
    shutil.rmtree(sys.argv[1])
except FileNotFoundError:
    pass
PY
archived_whole fix-2

# find -delete: the same end state (find names each directory it can no longer open, and
# exits 1).
new_item fix-3
fill fix-3
find "$M/fix-3" -delete >/dev/null 2>&1 || true
archived_whole fix-3

# A remover that takes documents first: they are restored into the archive.
new_item fix-4
fill fix-4
python3 - "$M/fix-4" <<'PY' || fail "remover of documents first"
import os, sys
d = sys.argv[1]
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
names = os.listdir(fd)
os.unlink(os.path.join(d, "brief.md"))
os.unlink(os.path.join(d, "link.md"))
os.unlink(os.path.join(d, "notes", "a.md"))
os.rmdir(os.path.join(d, "notes"))
os.unlink(os.path.join(d, "plan.md"))
os.unlink(os.path.join(d, "status"))   # an engine's entry: the item is archived
try:
    os.unlink(os.path.join(d, "events"))
except FileNotFoundError:
    pass
else:
    raise SystemExit("events still there after the item was archived")
os.close(fd)
PY
archived_whole fix-4

# A single rm of a view, without reading the item: EACCES, the item stays live and whole.
new_item fix-5
fill fix-5
assert_fails_with EACCES rm -f "$M/fix-5/status"
[ -d "$M/fix-5" ] || fail "fix-5 left the root after rm of its status"
assert_file_eq "$M/fix-5/plan.md" $'plan of fix-5\n'

# A process that listed the item a while ago (a file manager) and now deletes a view: the
# ordinary EACCES, the item stays live (a removal is the steps right after an opendir).
python3 - "$M/fix-5" <<'PY' || fail "a late delete of status by a process that once listed the item"
import errno, os, sys, time
d = sys.argv[1]
os.listdir(d)
time.sleep(11)
try:
    os.unlink(os.path.join(d, "status"))
except PermissionError:
    pass
else:
    raise SystemExit("unlink of status 11 s after listing the item succeeded")
PY
[ -d "$M/fix-5" ] && [ -f "$M/fix-5/status" ] || fail "fix-5 was archived by a late delete of its status"

# Documents deleted one by one stay ordinary unlinks (history kept, item live).
rm "$M/fix-5/plan.md"
[ -d "$M/fix-5" ] && [ ! -e "$M/fix-5/plan.md" ] || fail "rm of plan.md did not just unlink it"

# The archive survives a remount.
umount_store
mount_store
for i in 1 2 3 4; do archived_whole fix-$i; done
exit 0
