#!/usr/bin/env bash
# Hard links in a packet as on a local disk: ln gives a document a second name with the same
# inode number and a link count of 2; what is written, chmod-ed or set as an attribute through
# one name shows through the other; rm of one name leaves the other, also while open for
# writing (the writes go on to the file); mv between two names of one file does nothing;
# refused: a directory (EPERM), another item (EXDEV), a generated file (EACCES), an existing
# name (EEXIST). tar -x and rsync -aH (as root) of a tree with hard links
# make the same links, as do export and import; a remount keeps them; .history and `packetfs log` show the revisions
# (link(2) makes one of the new name); an archived item shows them read-only.
. "$(dirname "$0")/../lib.sh"
mount_item

# link_errno SRC DST : link(2) SRC DST through python3 (ln refuses directories itself); prints
# the errno's name, or "ok".
link_errno()
{
	python3 - "$1" "$2" <<'PY'
import errno, os, sys
try:
    os.link(sys.argv[1], sys.argv[2])
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}

printf 'one\n' >"$d/a.md"
ino=$(stat -c %i "$d/a.md")
ln "$d/a.md" "$d/b.md" || fail "ln in a packet"
mkdir "$d/sub"
ln "$d/b.md" "$d/sub/c.md" || fail "ln into a subdirectory"
assert_eq "3 $ino 3 $ino 3 $ino" "$(stat -c '%h %i' "$d/a.md" "$d/b.md" "$d/sub/c.md" | tr '\n' ' ' | sed 's/ $//')" \
	"link counts and inode numbers of three names"
printf 'two\n' >>"$d/b.md"
assert_file_eq "$d/a.md" $'one\ntwo\n'
assert_file_eq "$d/sub/c.md" $'one\ntwo\n'
chmod 0600 "$d/sub/c.md"
assert_eq "600 600" "$(stat -c %a "$d/a.md" "$d/b.md" | tr '\n' ' ' | sed 's/ $//')" "chmod through another name"
setfattr -n user.origin -v agent "$d/a.md" || fail "setfattr"
assert_eq agent "$(getfattr --only-values -n user.origin "$d/sub/c.md")" "an attribute through another name"
# An editor's save through one name (write in place, as vim with backupcopy=yes).
printf 'three\n' >"$d/sub/c.md"
assert_file_eq "$d/a.md" $'three\n'
assert_eq "$(ls -i "$d/a.md" | cut -d' ' -f1)" "$(ls -i "$d/b.md" | cut -d' ' -f1)" "ls -i of two names"

# Refused, with nothing made.
assert_eq EPERM "$(link_errno "$d/sub" "$d/sub2")" "link of a directory"
new_item fix-2
assert_eq EXDEV "$(link_errno "$d/a.md" "$M/fix-2/a.md")" "link into another item"
assert_eq EACCES "$(link_errno "$d/status" "$d/status2")" "link of a generated file"
assert_eq EEXIST "$(link_errno "$d/a.md" "$d/sub/c.md")" "link over an existing name"
assert_eq ENOENT "$(link_errno "$d/none.md" "$d/x.md")" "link of a missing file"
for p in "$d/sub2" "$M/fix-2/a.md" "$d/status2" "$d/x.md"; do
	[ -e "$p" ] && fail "a refused link left $p"
done
assert_eq 3 "$(stat -c %h "$d/a.md")" "link count after refusals"

# mv between two names of one file changes nothing (rename(2)); rm takes one name.
python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$d/a.md" "$d/b.md" ||
	fail "rename between two names of one file"
assert_eq "3 3" "$(stat -c %h "$d/a.md" "$d/b.md" | tr '\n' ' ' | sed 's/ $//')" "both names stay"
rm "$d/a.md" || fail "rm of one name"
assert_eq "2 $ino" "$(stat -c '%h %i' "$d/b.md")" "the other names after rm"
assert_file_eq "$d/b.md" $'three\n'
mv "$d/b.md" "$d/d.md"
assert_eq 2 "$(stat -c %h "$d/sub/c.md")" "link count after mv of a name"

# A document open for writing whose name is unlinked while another name stays: the writes go
# on to the file, as on a local disk.
printf 'open\n' >"$d/w1.md"
ln "$d/w1.md" "$d/w2.md"
exec 3>>"$d/w1.md"
printf 'before\n' >&3
rm "$d/w1.md"
printf 'after\n' >&3
exec 3>&-
assert_file_eq "$d/w2.md" $'open\nbefore\nafter\n'
assert_eq 1 "$(stat -c %h "$d/w2.md")" "link count of the name left"

# tar -x and rsync -aH of a tree with hard links.
src=$T/src
mkdir -p "$src/tree/x"
printf 'shared\n' >"$src/tree/f1"
ln "$src/tree/f1" "$src/tree/x/f2"
ln "$src/tree/f1" "$src/tree/f3"
printf 'alone\n' >"$src/tree/g"
mkfifo "$src/tree/p1"
chown 65534:65534 "$src/tree/g"
# describe DIR : each entry with its type, link count, mode and owner, the entries that share
# an inode grouped by it (numbered by first appearance), and each regular file's sha256.
describe()
{
	(cd "$1" && find . -mindepth 1 -printf '%i %p %y %n %m %u\n' | sort -k2 |
		awk '{ if (!($1 in g)) g[$1] = ++n; $1 = "inode" g[$1]; print }')
	(cd "$1" && find . -type f -exec sha256sum {} + | sort -k2)
}
# shape DIR : describe DIR without the owners (export writes files as its caller's).
shape()
{
	describe "$1" | awk 'NF == 6 { $6 = "" } { print }'
}
tar -C "$src" -cf "$T/tree.tar" tree || fail "tar -c"
tar -C "$d" -xf "$T/tree.tar" || fail "tar -x of hard links into a packet"
diffs=$(diff <(describe "$src/tree") <(describe "$d/tree") | tr '\n' ';') || fail "after tar -x: $diffs"
# (GNU tar archives FIFOs alone, rsync -H their links too.)
cp -a "$src/tree" "$src/tree2"
ln "$src/tree2/p1" "$src/tree2/x/p2"
rsync -aH "$src/tree2/" "$d/rsynced/" || fail "rsync -aH as root into a packet"
diffs=$(diff <(describe "$src/tree2") <(describe "$d/rsynced") | tr '\n' ';') || fail "after rsync -aH: $diffs"

# .history: the link made a revision of the new name; a write through any name of a file is
# a revision of the name the mount reaches the file by (its first, here a.md: the kernel
# hands writes to an inode, not to a name).
assert_file_eq "$d/.history/b.md@1" $'one\n'
assert_file_eq "$d/.history/a.md@2" $'one\ntwo\n'
log=$("$PFS" log "$STORE" fix-1 2>&1) || fail "packetfs log: $log"
assert_contains_each "$log" "sub/c.md@1" "link"

check_links()
{
	assert_eq "2 2" "$(stat -c %h "$d/d.md" "$d/sub/c.md" | tr '\n' ' ' | sed 's/ $//')" "link counts ($1)"
	assert_eq "$(stat -c %i "$d/d.md")" "$(stat -c %i "$d/sub/c.md")" "one inode number ($1)"
	assert_file_eq "$d/d.md" $'three\n'
	diffs=$(diff <(describe "$src/tree") <(describe "$d/tree") | tr '\n' ';') || fail "$1: $diffs"
}
check_links "made"
umount_store
mount_store
check_links "after a remount"
printf 'four\n' >"$d/sub/c.md"
assert_file_eq "$d/d.md" $'four\n'
ln "$d/d.md" "$d/e.md" || fail "ln after a remount"
assert_eq 3 "$(stat -c %h "$d/sub/c.md")" "link count after a remount's ln"

# export writes the names of one file as hard links; import of that folder keeps them.
"$PFS" export "$STORE" fix-1 "$T/out" || fail "packetfs export"
assert_eq "3 3 3" "$(stat -c %h "$T/out/d.md" "$T/out/e.md" "$T/out/sub/c.md" | tr '\n' ' ' | sed 's/ $//')" \
	"exported names of one file"
assert_eq "$(stat -c %i "$T/out/d.md")" "$(stat -c %i "$T/out/sub/c.md")" "exported as one inode"
diffs=$(diff <(shape "$src/tree") <(shape "$T/out/tree") | tr '\n' ';') || fail "exported tree: $diffs"
umount_store
"$PFS" import "$STORE" "$T/out" fix-3 || fail "packetfs import"
mount_store
i3=$M/fix-3
assert_eq "3 3" "$(stat -c %h "$i3/d.md" "$i3/sub/c.md" | tr '\n' ' ' | sed 's/ $//')" "imported links"
assert_eq "$(stat -c %i "$i3/d.md")" "$(stat -c %i "$i3/e.md")" "imported as one inode"
diffs=$(diff <(shape "$src/tree") <(shape "$i3/tree") | tr '\n' ';') || fail "imported tree: $diffs"
printf 'five\n' >"$i3/e.md"
assert_file_eq "$i3/sub/c.md" $'five\n'
assert_file_eq "$d/d.md" $'four\n'

# Archived: read-only, the links still there.
rmdir "$d" || fail "archiving fix-1"
a=$M/.archive/fix-1
assert_eq "3 3" "$(stat -c %h "$a/d.md" "$a/e.md" | tr '\n' ' ' | sed 's/ $//')" "an archived file's links"
assert_eq EACCES "$(link_errno "$a/d.md" "$a/f.md")" "link in an archived item"
echo ok
