#!/usr/bin/env bash
# Directory times as on a local disk: touch -d (and -a, -m) sets the times of a document
# directory and of the item directory; creating, renaming (within, in or out), unlinking a
# document and making or removing a subdirectory move the mtime and ctime of the directory
# holding the entry to now, while writing to an existing document does not; the times survive a
# remount. Access times are not moved by reads (noatime): a document's atime is its last
# write's mtime unless set since.
. "$(dirname "$0")/../lib.sh"
mount_item
OLD="2001-02-03 04:05:06 UTC" OLD_S=981173106

# make_old DIR... : touch -d an old date on each DIR, checked.
make_old()
{
	local x
	for x in "$@"; do
		touch -d "$OLD" "$x" || fail "touch -d on directory $x failed"
		assert_eq "$OLD_S" "$(stat -c %Y "$x")" "mtime of $x after touch -d"
	done
}

# moves WHAT DIR... -- CMD... : makes each DIR old (make_old), runs CMD (WHAT says what it
# does), then checks that the mtime and ctime of each DIR are not before the time CMD started.
moves()
{
	local what=$1 x m c before
	local -a dirs=()
	shift
	while [ "$1" != -- ]; do
		dirs+=("$1")
		shift
	done
	shift
	make_old "${dirs[@]}"
	before=$(date +%s)
	"$@" || fail "$what: '$*' failed"
	for x in "${dirs[@]}"; do
		m=$(stat -c %Y "$x")
		c=$(stat -c %Z "$x")
		[ "$m" -ge "$before" ] || fail "$what: mtime of $x is $m, older than $before"
		[ "$c" -ge "$before" ] || fail "$what: ctime of $x is $c, older than $before"
	done
}

mkdir "$d/sub"

# touch -d on a directory sets its times; -a and -m one of them.
touch -d "2020-01-02 03:04:05.123456789 UTC" "$d/sub" "$d"
for x in "$d/sub" "$d"; do
	assert_eq 1577934245.123456789 "$(stat -c %.9Y "$x")" "mtime of $x after touch -d"
	assert_eq 1577934245.123456789 "$(stat -c %.9X "$x")" "atime of $x after touch -d"
done
touch -m -d "2021-02-03 04:05:06 UTC" "$d/sub" "$d"
touch -a -d "2022-03-04 05:06:07 UTC" "$d/sub" "$d"
for x in "$d/sub" "$d"; do
	assert_eq 1612325106 "$(stat -c %Y "$x")" "mtime of $x after touch -m -d, -a -d"
	assert_eq 1646370367 "$(stat -c %X "$x")" "atime of $x after touch -m -d, -a -d"
done

# Create, rename within, unlink: the directory holding the entry moves.
make_old "$d"
moves "touch of a new document in sub/" "$d/sub" -- touch "$d/sub/a.md"
assert_eq "$OLD_S" "$(stat -c %Y "$d")" "mtime of the item after a create in sub/"
moves "a redirect creating sub/b.md" "$d/sub" -- sh_write "$d/sub/b.md" $'text\n'
moves "a rename within sub/" "$d/sub" -- mv "$d/sub/a.md" "$d/sub/c.md"
moves "an unlink in sub/" "$d/sub" -- rm "$d/sub/c.md"

# A document created and held open with nothing written (python holds the one descriptor: no
# flush stores it): its directory moved at the create, before anything is stored; touch -d of the
# directory then wins over the create (the latest change).
make_old "$d/sub"
before=$(date +%s)
python3 - "$d/sub" "$before" "$OLD_S" <<'PY' || fail "directory times with a created document open"
import os, sys
sub, before, old = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = open(os.path.join(sub, "open.md"), "w")
st = os.stat(sub)
assert int(st.st_mtime) >= before and int(st.st_ctime) >= before, ("after the create", st)
assert "open.md" in os.listdir(sub)
os.utime(sub, (old, old))
st = os.stat(sub)
assert int(st.st_mtime) == old, ("after utime", st)
f.close()
assert os.stat(os.path.join(sub, "open.md")).st_size == 0
PY
rm "$d/sub/open.md"

# Writing to an existing document leaves its directory alone (as on a local disk).
make_old "$d/sub"
echo more >>"$d/sub/b.md"
printf 'new\n' >"$d/sub/b.md"
assert_eq "$OLD_S" "$(stat -c %Y "$d/sub")" "mtime of sub/ after writes to an existing document"

# Rename out of sub/ into the item's top level: both directories move.
moves "a rename from sub/ to the top level" "$d/sub" "$d" -- mv "$d/sub/b.md" "$d/b.md"
moves "a create in the item directory" "$d" -- touch "$d/top.md"
moves "an unlink in the item directory" "$d" -- rm "$d/top.md"

make_old "$d"
moves "mkdir in sub/" "$d/sub" -- mkdir "$d/sub/deeper"
assert_eq "$OLD_S" "$(stat -c %Y "$d")" "mtime of the item after mkdir in sub/"
moves "rmdir in sub/" "$d/sub" -- rmdir "$d/sub/deeper"
moves "mkdir in the item directory" "$d" -- mkdir "$d/other"
moves "a rename from the top level into other/" "$d" "$d/other" -- mv "$d/b.md" "$d/other/b.md"

# Access times: a write sets atime to the write's mtime; a read changes nothing.
printf 'x\n' >"$d/other/b.md"
assert_eq "$(stat -c %.9Y "$d/other/b.md")" "$(stat -c %.9X "$d/other/b.md")" \
	"atime after a write"
touch -a -d "$OLD" "$d/other/b.md"
cat "$d/other/b.md" >/dev/null
assert_eq "$OLD_S" "$(stat -c %X "$d/other/b.md")" "atime after touch -a -d and a read"
mv "$d/other/b.md" "$d/other/c.md"
assert_eq "$OLD_S" "$(stat -c %X "$d/other/c.md")" "atime after a rename"

# The times survive a remount.
touch -d "2019-09-09 09:09:09 UTC" "$d" "$d/sub"
touch -a -d "2018-08-08 08:08:08 UTC" "$d/sub"
umount_store
mount_store
d=$M/fix-1
assert_eq 1568020149 "$(stat -c %Y "$d")" "mtime of the item directory after remount"
assert_eq 1568020149 "$(stat -c %Y "$d/sub")" "mtime of sub/ after remount"
assert_eq 1533715688 "$(stat -c %X "$d/sub")" "atime of sub/ after remount"
assert_eq "$OLD_S" "$(stat -c %X "$d/other/c.md")" "atime of a document after remount"
exit 0
