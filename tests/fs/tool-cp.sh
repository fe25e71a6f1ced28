#!/usr/bin/env bash
# cp into an item as on a local disk: a single file to a new name, over a longer document (no
# old bytes left), into a directory, a binary file; cp -r of a tree (names and content); cp -a
# keeps the mtime and mode of files and directories, without complaint; tar reads the copied
# tree back out.
. "$(dirname "$0")/../lib.sh"
mount_item

src=$T/src
mkdir -p "$src/notes/deeper" "$src/notes/empty-dir"
printf 'one\n' >"$src/notes/one.md"
printf 'two\n' >"$src/notes/deeper/two.md"
: >"$src/notes/empty.md"
printf '#!/bin/sh\necho run\n' >"$src/notes/run.sh"
head -c 300000 /dev/urandom >"$src/notes/blob.bin"
chmod 755 "$src/notes/run.sh"
chmod 600 "$src/notes/deeper/two.md"
chmod 750 "$src/notes/deeper"
touch -d "2021-06-01 12:00:00 UTC" "$src/notes/one.md"
touch -d "2020-02-03 04:05:06 UTC" "$src/notes/run.sh"
touch -d "2019-01-01 00:00:00 UTC" "$src/notes/deeper/two.md"
touch -d "2018-07-08 09:10:11 UTC" "$src/notes/deeper" "$src/notes/empty-dir"
touch -d "2017-03-04 05:06:07 UTC" "$src/notes"

# Single files: to a new name, over a longer document, into a directory.
cp "$src/notes/one.md" "$d/one.md"
assert_file_eq "$d/one.md" $'one\n'
assert_eq 4 "$(stat -c %s "$d/one.md")" "size of one.md"
printf 'a much longer document that cp overwrites\n' >"$d/over.md"
cp "$src/notes/one.md" "$d/over.md"
assert_file_eq "$d/over.md" $'one\n'
assert_eq 4 "$(stat -c %s "$d/over.md")" "size of over.md after cp over it"
mkdir "$d/into"
cp "$src/notes/deeper/two.md" "$src/notes/blob.bin" "$d/into/"
assert_file_eq "$d/into/two.md" $'two\n'
cmp "$src/notes/blob.bin" "$d/into/blob.bin" || fail "into/blob.bin differs after cp"
assert_eq 300000 "$(stat -c %s "$d/into/blob.bin")" "size of into/blob.bin"
assert_eq "blob.bin two.md " "$(ls -A "$d/into" | tr '\n' ' ')" "listing of into/"

# cp -r: the tree, names and content.
cp -r "$src/notes" "$d/cp-r"
diff -r "$src/notes" "$d/cp-r" || fail "cp -r copy differs"
assert_eq "$(cd "$src/notes" && find . | sort)" "$(cd "$d/cp-r" && find . | sort)" "names after cp -r"

# cp -a: also mtimes and modes, of files and directories, and no error output.
err=$(cp -a "$src/notes" "$d/cp-a" 2>&1) || fail "cp -a failed: $err"
assert_eq "" "$err" "cp -a error output"
diff -r "$src/notes" "$d/cp-a" || fail "cp -a copy differs"
want=$(cd "$src/notes" && find . -printf '%p %y %m %T@\n' | sort)
got=$(cd "$d/cp-a" && find . -printf '%p %y %m %T@\n' | sort)
assert_eq "$want" "$got" "names, types, modes and mtimes after cp -a"
[ -x "$d/cp-a/run.sh" ] || fail "run.sh lost its execute bit"
assert_eq run "$("$d/cp-a/run.sh")" "output of the copied script"

# And out again with tar.
tar -C "$d" -cf "$T/packet.tar" cp-a || fail "tar of the packet failed"
mkdir "$T/out"
tar -C "$T/out" -xpf "$T/packet.tar" || fail "tar -x failed"
diff -r "$src/notes" "$T/out/cp-a" || fail "tree out of tar differs"
assert_eq "$(stat -c %Y "$src/notes/one.md")" "$(stat -c %Y "$T/out/cp-a/one.md")" \
	"mtime of one.md out of tar"
exit 0
