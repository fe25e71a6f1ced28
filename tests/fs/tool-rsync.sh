#!/usr/bin/env bash
# rsync -a into an item as on a local disk: the tree, content, modes and mtimes; a second rsync
# after changes (a file that grows, one that shrinks: rsync's temp-file-then-rename path, and a
# deletion with --delete) updates exactly those files and leaves no temp file; a third rsync
# finds nothing to do; rsync out of the item gives the same tree back.
. "$(dirname "$0")/../lib.sh"
mount_item

src=$T/src
mkdir -p "$src/notes/deeper"
printf 'one\n' >"$src/notes/one.md"
printf 'two, a longer line that will shrink\n' >"$src/notes/deeper/two.md"
printf 'gone soon\n' >"$src/notes/gone.md"
head -c 200000 /dev/urandom >"$src/notes/blob.bin"
chmod 640 "$src/notes/one.md"
touch -d "2021-06-01 12:00:00 UTC" "$src/notes/one.md"
touch -d "2020-01-01 00:00:00 UTC" "$src/notes/deeper/two.md"
# Directory mtimes in another second than now: rsync leaves a directory's mtime alone when it
# is in the same second as the source's.
touch -d "2019-05-05 05:05:05 UTC" "$src/notes/deeper" "$src/notes"

# tree PATH : every path with its type, mode and mtime, sorted.
tree()
{
	(cd "$1" && find . -printf '%p %y %m %T@\n' | sort)
}

# leftovers : rsync temp files (.NAME.XXXXXX) anywhere under the copy.
leftovers()
{
	find "$d/notes" -name '.*' -printf '%P\n'
}

rsync -a "$src/notes/" "$d/notes/" || fail "rsync into the packet failed"
diff -r "$src/notes" "$d/notes" || fail "rsync copy differs"
assert_eq "$(tree "$src/notes")" "$(tree "$d/notes")" "tree after rsync -a"
assert_eq "" "$(leftovers)" "rsync temp files left after the first rsync"

# A second rsync after changes: one.md grows, two.md shrinks (same mtime as before, so only
# -c would notice otherwise; the size differs), gone.md is deleted.
printf 'one, changed and grown\n' >"$src/notes/one.md"
touch -d "2021-06-02 12:00:00 UTC" "$src/notes/one.md"
printf 'two\n' >"$src/notes/deeper/two.md"
touch -d "2020-01-01 00:00:00 UTC" "$src/notes/deeper/two.md"
rm "$src/notes/gone.md"
touch -d "2019-06-06 06:06:06 UTC" "$src/notes/deeper" "$src/notes"
out=$(rsync -a --delete -i "$src/notes/" "$d/notes/") || fail "second rsync failed: $out"
assert_eq "*deleting   gone.md
>f.s....... deeper/two.md
>f.st...... one.md" "$(printf '%s\n' "$out" | grep -v '^\.d' | sort)" "what the second rsync did"
assert_file_eq "$d/notes/one.md" $'one, changed and grown\n'
assert_eq 23 "$(stat -c %s "$d/notes/one.md")" "size of one.md after the second rsync"
assert_file_eq "$d/notes/deeper/two.md" $'two\n'
assert_eq 4 "$(stat -c %s "$d/notes/deeper/two.md")" "size of two.md after the second rsync"
[ ! -e "$d/notes/gone.md" ] || fail "gone.md still there after rsync --delete"
diff -r "$src/notes" "$d/notes" || fail "copy differs after the second rsync"
assert_eq "$(tree "$src/notes")" "$(tree "$d/notes")" "tree after the second rsync"
assert_eq "" "$(leftovers)" "rsync temp files left after the second rsync"

# Nothing changed: a third rsync transfers nothing.
out=$(rsync -a --delete -i "$src/notes/" "$d/notes/") || fail "third rsync failed: $out"
assert_eq "" "$out" "what the third rsync did"

# Out of the packet again.
mkdir "$T/out"
rsync -a "$d/notes/" "$T/out/" || fail "rsync out of the packet failed"
diff -r "$src/notes" "$T/out" || fail "rsync out differs"
assert_eq "$(tree "$src/notes")" "$(tree "$T/out")" "tree after rsync out"

umount_store
mount_store
d=$M/fix-1
diff -r "$src/notes" "$d/notes" || fail "copy differs after remount"
assert_eq "$(tree "$src/notes")" "$(tree "$d/notes")" "tree after remount"
exit 0
