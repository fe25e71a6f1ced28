#!/usr/bin/env bash
# touch as on a local disk: it creates an empty document (size 0, listed, mode from the umask);
# touch -d sets mtime and atime to the second and nanosecond; -m and -a set one of them;
# touch -r copies them; touch of an existing document keeps its content and size and moves its
# mtime to now; times survive a remount. An O_RDWR open that writes nothing changes nothing
# (content, size, mtime, revisions).
. "$(dirname "$0")/../lib.sh"
mount_item

# touch creates an empty document.
(umask 022 && touch "$d/new.md")
[ -f "$d/new.md" ] || fail "touch did not create new.md"
assert_eq 0 "$(stat -c %s "$d/new.md")" "size of a touched new document"
assert_file_eq "$d/new.md" ""
assert_eq 644 "$(stat -c %a "$d/new.md")" "mode of a document touched under umask 022"
assert_eq "new.md " "$(doc_names "$d")" "documents after touch"
(umask 077 && touch "$d/private.md")
assert_eq 600 "$(stat -c %a "$d/private.md")" "mode of a document touched under umask 077"
mkdir "$d/sub"
touch "$d/sub/deep.md"
assert_eq 0 "$(stat -c %s "$d/sub/deep.md")" "size of a touched document in a subdirectory"
assert_eq "deep.md " "$(ls -A "$d/sub" | tr '\n' ' ')" "listing of sub/ after touch"

# touch -d sets mtime and atime, to the nanosecond.
touch -d "2020-01-02 03:04:05.123456789 UTC" "$d/new.md"
assert_eq 1577934245.123456789 "$(stat -c %.9Y "$d/new.md")" "mtime after touch -d"
assert_eq 1577934245.123456789 "$(stat -c %.9X "$d/new.md")" "atime after touch -d"
touch -m -d "2021-02-03 04:05:06 UTC" "$d/new.md"
assert_eq 1612325106 "$(stat -c %Y "$d/new.md")" "mtime after touch -m -d"
assert_eq 1577934245 "$(stat -c %X "$d/new.md")" "atime after touch -m -d"
touch -a -d "2022-03-04 05:06:07 UTC" "$d/new.md"
assert_eq 1612325106 "$(stat -c %Y "$d/new.md")" "mtime after touch -a -d"
assert_eq 1646370367 "$(stat -c %X "$d/new.md")" "atime after touch -a -d"
touch -r "$d/new.md" "$d/sub/deep.md"
assert_eq 1612325106 "$(stat -c %Y "$d/sub/deep.md")" "mtime after touch -r"

# touch of an existing document keeps its content and moves its mtime to now.
printf 'keep me\nand me\n' >"$d/plan.md"
touch -d "2019-09-09 09:09:09 UTC" "$d/plan.md"
assert_eq 1568020149 "$(stat -c %Y "$d/plan.md")" "mtime of plan.md after touch -d"
before=$(date +%s)
touch "$d/plan.md"
after=$(date +%s)
mtime=$(stat -c %Y "$d/plan.md")
if [ "$mtime" -lt "$before" ] || [ "$mtime" -gt "$after" ]; then
	fail "mtime after touch of an existing document is $mtime, not between $before and $after"
fi
assert_file_eq "$d/plan.md" $'keep me\nand me\n'
assert_eq 15 "$(stat -c %s "$d/plan.md")" "size after touch of an existing document"
touch -d "2019-09-09 09:09:09 UTC" "$d/plan.md"
assert_file_eq "$d/plan.md" $'keep me\nand me\n'

# An O_RDWR open that writes nothing changes nothing.
revs_before=$(revs "$d" plan.md)
python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR))' "$d/plan.md"
assert_file_eq "$d/plan.md" $'keep me\nand me\n'
assert_eq 1568020149 "$(stat -c %Y "$d/plan.md")" "mtime after an O_RDWR open that wrote nothing"
assert_eq "$revs_before" "$(revs "$d" plan.md)" "revisions after an O_RDWR open that wrote nothing"

umount_store
mount_store
d=$M/fix-1
assert_eq 1612325106 "$(stat -c %Y "$d/new.md")" "mtime of new.md after remount"
assert_eq 1568020149 "$(stat -c %Y "$d/plan.md")" "mtime of plan.md after remount"
assert_file_eq "$d/plan.md" $'keep me\nand me\n'
assert_eq 0 "$(stat -c %s "$d/new.md")" "size of new.md after remount"
assert_eq "new.md plan.md private.md sub " "$(doc_names "$d")" "documents after remount"
exit 0
