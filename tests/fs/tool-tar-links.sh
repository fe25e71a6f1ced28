#!/usr/bin/env bash
# tar -c of a tree with symlinks (relative, absolute, dangling, to a directory, in a
# subdirectory) and a FIFO, tar -x of it into a packet: the packet's tree is the original's
# (types, link targets, content, modes, mtimes), listed alike by find; tar -c of the packet
# gives an archive that lists alike too; a remount keeps it.
. "$(dirname "$0")/../lib.sh"
mount_item

src=$T/src
mkdir -p "$src/tree/sub/deeper"
printf 'top\n' >"$src/tree/a.md"
printf 'deep\n' >"$src/tree/sub/deeper/b.md"
chmod 0600 "$src/tree/sub/deeper/b.md"
ln -s a.md "$src/tree/rel"
ln -s ../a.md "$src/tree/sub/up"
ln -s /usr/bin/env "$src/tree/abs"
ln -s missing "$src/tree/dangling"
ln -s sub/deeper "$src/tree/dirlink"
mkfifo -m 0620 "$src/tree/sub/pipe"
touch -h -d '2021-05-06 07:08:09Z' "$src/tree/rel" "$src/tree/sub/pipe" "$src/tree/a.md"
tar -C "$src" -cf "$T/tree.tar" tree || fail "tar -c of the source tree"

# describe DIR : every entry below DIR with its type, mode, size (regular files), link target
# and mtime, sorted; and the sha256 of each regular file.
describe()
{
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %l %TY-%Tm-%Td %TT\n' | sed 's/\.[0-9]*$//' | sort)
	(cd "$1" && find . -type f -exec sha256sum {} + | sort -k2)
}

# same_tree WHAT : the packet's tree is the source's, or the test fails showing the difference.
same_tree()
{
	local diffs
	diffs=$(diff <(describe "$src/tree") <(describe "$d/tree") | tr "\n" ";") || fail "$1: $diffs"
}

tar -C "$d" -xf "$T/tree.tar" || fail "tar -x into a packet"
same_tree "the packet's tree after tar -x"
assert_file_eq "$d/tree/dirlink/b.md" $'deep\n'
assert_file_eq "$d/tree/sub/up" $'top\n'

# tar -c of the packet lists what tar -c of the source lists.
tar -C "$d" -cf "$T/back.tar" tree || fail "tar -c of the packet"
list()
{
	tar -tvf "$1" | awk '{print $1, $3, $6, $7, $8}' | sort
}
assert_eq "$(list "$T/tree.tar")" "$(list "$T/back.tar")" "tar -tv of the packet's archive"

# Extracting again over the tree (tar replaces links and the FIFO) changes nothing.
tar -C "$d" -xf "$T/tree.tar" || fail "tar -x over the extracted tree"
same_tree "the packet's tree after a second tar -x"

umount_store
mount_store
same_tree "the packet's tree after a remount"
echo ok
