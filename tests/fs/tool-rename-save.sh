#!/usr/bin/env bash
# The temp-file-then-rename save that editors and libraries do (write a temp file in the same
# directory, fsync it, rename it over the document, fsync the directory), by python and by a
# shell: exact content and size, mode of the temp file, no temp file left, the listing holds the
# document once, .history gains the saved content, and all of it survives a remount.
. "$(dirname "$0")/../lib.sh"
mount_item

v1=$'plan v1, the first and longest version of the plan\n'
printf '%s' "$v1" >"$d/plan.md"
assert_file_eq "$d/plan.md" "$v1"

# python, the way atomic-write libraries do it: mkstemp, write, fsync, chmod, replace, fsync dir.
python3 - "$d" <<'PY' || fail "python temp-file-then-rename save failed"
import os, sys, tempfile
d = sys.argv[1]
target = os.path.join(d, "plan.md")
fd, tmp = tempfile.mkstemp(dir=d, prefix=".plan.md.", suffix=".tmp")
os.write(fd, b"plan v2\n")
os.fsync(fd)
os.fchmod(fd, 0o644)
os.close(fd)
os.replace(tmp, target)
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(dfd)
os.close(dfd)
with open(target, "rb") as f:
    got = f.read()
assert got == b"plan v2\n", "read back after the save: %r" % got
assert not os.path.exists(tmp), "temp file still there"
PY
assert_doc "$d/plan.md" $'plan v2\n'
assert_eq 644 "$(stat -c %a "$d/plan.md")" "mode after the python save"
assert_eq "plan.md " "$(doc_names "$d")" "documents after the python save"
assert_file_eq "$d/.history/plan.md@$(last_rev "$d" plan.md)" $'plan v2\n'

# A shell: write the temp file, fsync it (sync FILE), rename it over the document.
printf 'plan v3\nwith a second line\n' >"$d/.plan.md.tmp"
sync "$d/.plan.md.tmp" || fail "sync of the temp file failed"
mv -f "$d/.plan.md.tmp" "$d/plan.md"
assert_doc "$d/plan.md" $'plan v3\nwith a second line\n'
[ ! -e "$d/.plan.md.tmp" ] || fail "temp file left behind by the shell save"
assert_eq "plan.md " "$(doc_names "$d")" "documents after the shell save"
assert_file_eq "$d/.history/plan.md@$(last_rev "$d" plan.md)" $'plan v3\nwith a second line\n'

# Again, a shorter save through the same steps, in a subdirectory.
mkdir "$d/notes"
printf 'a long first version of the notes\n' >"$d/notes/n.md"
printf 'short\n' >"$d/notes/n.md.new"
sync "$d/notes/n.md.new" || fail "sync of notes/n.md.new failed"
mv -f "$d/notes/n.md.new" "$d/notes/n.md"
assert_doc "$d/notes/n.md" $'short\n'
assert_eq "n.md " "$(ls -A "$d/notes" | tr '\n' ' ')" "listing of notes/ after the shell save"

umount_store
mount_store
d=$M/fix-1
assert_doc "$d/plan.md" $'plan v3\nwith a second line\n'
assert_doc "$d/notes/n.md" $'short\n'
assert_eq "notes plan.md " "$(doc_names "$d")" "documents after remount"
exit 0
