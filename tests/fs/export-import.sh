#!/usr/bin/env bash
# packetfs export writes an item's packet as plain files; packetfs import makes an item of such
# a folder (refused while the store is mounted), named as in the export unless NAME is given, and
# says what it imported. Symlinks, FIFOs, sockets and device nodes (as root) go out and come back
# as what they are.
. "$(dirname "$0")/../lib.sh"
mount_item
printf 'The brief.\n' >"$d/brief.md"
printf '# Plan\n' >"$d/plan.md"
mkdir "$d/notes"
printf 'deep\n' >"$d/notes/deep.md"
ln -s notes/deep.md "$d/link"
ln -s /nowhere "$d/notes/dangling"
mkfifo -m 0640 "$d/pipe"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
mknod "$d/null" c 1 3

# nodes_of DIR : the symlinks, FIFOs, sockets and devices below DIR, as find describes them.
nodes_of()
{
	(cd "$1" && find . -mindepth 1 -path ./.history -prune -o ! -type f ! -type d ! -name worktree \
		-printf '%p %y %m %l\n' | sort)
	stat -c '%Hr:%Lr' "$1/null"
}

out=$("$PFS" export "$STORE" fix-1 "$T/export" 2>&1) || fail "packetfs export failed: $out"
assert_file_eq "$T/export/brief.md" $'The brief.\n'
assert_file_eq "$T/export/plan.md" $'# Plan\n'
assert_file_eq "$T/export/notes/deep.md" $'deep\n'
[ -e "$T/export/worktree" ] && fail "export wrote the worktree link"
nodes=$(nodes_of "$d")
assert_eq "$nodes" "$(nodes_of "$T/export")" "the exported symlinks, FIFO, socket and device"
out=$("$PFS" export "$STORE" no-such-item "$T/export2" 2>&1) && fail "export of an unknown item succeeded"
assert_contains "$out" "packetfs: " "error of export of an unknown item"

rc=0
out=$("$PFS" import "$STORE" "$T/export" fix-copy 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "import into a mounted store exited $rc, expected 1: $out"
assert_contains "$out" "packetfs: " "error of import into a mounted store"

umount_store
out=$("$PFS" import "$STORE" "$T/export" fix-copy 2>&1) || fail "packetfs import failed: $out"
# It says what it imported.
head=$(git -C "$REPO" rev-parse packetfs/fix-1)
assert_eq "imported fix-copy from $T/export: the export of fix-1 at ${head:0:12}, 0 runs, registry lines: 0 counted, 0 kept as imported" \
	"$out" "the output of packetfs import"
# Without NAME, the item is named as in the export (its manifest), not after DIR: here taken.
rc=0
out=$("$PFS" import "$STORE" "$T/export" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status of an import whose name is taken"
assert_eq "packetfs: import: fix-1: item exists (give another NAME)" "$out" "import without NAME"
git clone -q "$REPO" "$T/repo2"
"$PFS" init "$T/store2" --repo "$T/repo2" >/dev/null 2>&1 || fail "packetfs init of a second store failed"
out=$("$PFS" import "$T/store2" "$T/export" 2>&1) || fail "packetfs import without NAME failed: $out"
assert_contains "$out" "imported fix-1 from $T/export: the export of fix-1" "import without NAME"
assert_eq fix-1 "$("$PFS" status "$T/store2" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["item"])')" \
	"the item an import without NAME made"
rc=0
out=$("$PFS" import "$STORE" "$T/export" "Bad Name" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "import with a bad name exited $rc, expected 1: $out"
mount_store
assert_file_eq "$M/fix-copy/brief.md" $'The brief.\n'
assert_file_eq "$M/fix-copy/notes/deep.md" $'deep\n'
assert_eq "$nodes" "$(nodes_of "$M/fix-copy")" "the imported symlinks, FIFO, socket and device"
assert_file_eq "$M/fix-copy/link" $'deep\n'
assert_file_eq "$M/fix-1/brief.md" $'The brief.\n'
git -C "$REPO" rev-parse -q --verify refs/heads/packetfs/fix-copy >/dev/null ||
	fail "the imported item has no branch"
exit 0
