#!/usr/bin/env bash
# test-timeout: 180
# packetfs export is all or nothing, and packetfs import takes nothing but a whole export.
#
# The store's repository belongs to another user (as with "run_as"). Root exports root's store:
# git is told to trust the repository the store's owner chose, and the export is whole. Root
# exports a store that belongs to that user: git's safe.directory check refuses the repository,
# the error names the cause (the owner's uid) and DIR is not there at all, nor a temporary
# sibling of it; the user exports their store themselves. Export refuses a DIR that holds files
# and fills an empty one. Import refuses, storing nothing, what an export that failed used to
# leave (documents, logs, an empty bundle, no manifest), a folder of plain files, an empty
# bundle and a bundle whose sha256 is not the manifest's, each saying which; a whole export
# imports.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is missing" >&2; exit 77; }
make_user U
uid=$(id -u "$U")

make_repo "$TEAM_DIR/repo"
make_store
mount_store
new_item fix-1
printf 'The brief.\n' >"$M/fix-1/brief.md"
printf '# Plan\n' >"$M/fix-1/plan.md"
umount_store
# The user's store: a copy of root's, over the same repository, the user's; the repository too.
mkdir -m 0755 "$TEAM_DIR/u"
cp -a "$STORE" "$TEAM_DIR/u/store"
chown -R "$U:$U" "$TEAM_DIR/u" "$TEAM_DIR/repo"

# counts : the items and runs of root's store, and the branches of the repository.
counts()
{
	sqlite3 "$STORE/packetfs.db" "SELECT COUNT(*) FROM items; SELECT COUNT(*) FROM runs" | tr '\n' ' '
	git -c safe.directory='*' -C "$REPO" for-each-ref --format='%(refname)' refs/heads | tr '\n' ' '
}

# no_trace DIR : neither DIR nor a temporary sibling of it exists.
no_trace()
{
	[ ! -e "$1" ] || fail "a failed export left $1: $(cd "$1" && find . | sort | head -20)"
	local left
	left=$(find "$(dirname "$1")" -maxdepth 1 -name ".$(basename "$1").export-*" 2>/dev/null || true)
	[ -z "$left" ] || fail "a failed export left $left"
}

# Root's store, the user's repository: trusted, whole.
out=$("$PFS" export "$STORE" fix-1 "$T/out/good" 2>&1) || fail "export of root's store failed: $out"
for f in .packetfs/export.json .packetfs/branch.bundle brief.md plan.md; do
	[ -s "$T/out/good/$f" ] || fail "the export has no $f"
done
assert_eq "$(sha256sum <"$T/out/good/.packetfs/branch.bundle" | cut -c1-64)" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bundle_sha256"])' \
		"$T/out/good/.packetfs/export.json")" "the manifest's bundle_sha256"
assert_eq "" "$(find "$T/out" -maxdepth 1 -name '.*')" "temporary directories after an export"

# The user's store, as root: refused, naming the cause; nothing written, no parent made.
rc=0
out=$("$PFS" export "$TEAM_DIR/u/store" fix-1 "$T/new/half" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "export of another user's store exited $rc, expected 1: $out"
note "$out"
assert_contains "$out" "packetfs: export: git bundle create: repository $REPO is owned by uid $uid, not by the caller (git's safe.directory check): " \
	"refusal of another user's repository"
no_trace "$T/new/half"
[ ! -e "$T/new" ] || fail "a failed export left the parent it made, $T/new"
# Into an existing empty directory: that stays as it was.
mkdir "$T/empty"
rc=0
out=$("$PFS" export "$TEAM_DIR/u/store" fix-1 "$T/empty" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "export of another user's store into an empty directory exited $rc: $out"
assert_eq "" "$(ls -A "$T/empty")" "the empty directory after a failed export"
no_trace "$T/empty/x"
assert_eq "" "$(find "$T" -maxdepth 1 -name '.empty.export-*')" "temporary directories after a failed export"

# The user exports their store themselves.
out=$(run_as "$U" "$PFS" export "$TEAM_DIR/u/store" fix-1 "$TEAM_DIR/u/out" 2>&1) ||
	fail "export of the user's store as the user failed: $out"
[ -s "$TEAM_DIR/u/out/.packetfs/export.json" ] || fail "the user's export has no manifest"

# A DIR that holds files is refused and left as it was; an empty one takes the export.
mkdir "$T/full"
echo mine >"$T/full/mine.txt"
rc=0
out=$("$PFS" export "$STORE" fix-1 "$T/full" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "export into a directory with files exited $rc: $out"
assert_contains "$out" "packetfs: export: $T/full: exists and is not empty" "export into a full directory"
assert_eq "mine.txt" "$(ls -A "$T/full")" "the full directory after the refused export"
out=$("$PFS" export "$STORE" fix-1 "$T/empty" 2>&1) || fail "export into an empty directory failed: $out"
[ -s "$T/empty/.packetfs/export.json" ] || fail "the export into an empty directory has no manifest"

# refused DIR WHY : import of DIR exits 1 saying WHY, and the store and repository are unchanged.
refused()
{
	local before rc=0
	before=$(counts)
	out=$("$PFS" import "$STORE" "$1" fix-2 2>&1) || rc=$?
	[ "$rc" = 1 ] || fail "import of $1 exited $rc, expected 1: $out"
	assert_contains "$out" "packetfs: import: $1: $2" "refusal of $1"
	note "$out"
	assert_eq "$before" "$(counts)" "the store after the refused import of $1"
}

# What an export that failed on the bundle used to leave: no manifest, an empty bundle.
cp -a "$T/out/good" "$T/half"
rm "$T/half/.packetfs/export.json"
: >"$T/half/.packetfs/branch.bundle"
refused "$T/half" "not a packetfs export (no .packetfs/export.json): its .packetfs/ holds no manifest"
# A folder of plain files.
mkdir "$T/plain"
printf 'A brief.\n' >"$T/plain/brief.md"
refused "$T/plain" "not a packetfs export (no .packetfs/export.json): a folder of plain files"
# A whole manifest, an empty bundle.
cp -a "$T/out/good" "$T/nobundle"
: >"$T/nobundle/.packetfs/branch.bundle"
refused "$T/nobundle" "not a whole packetfs export: .packetfs/branch.bundle is empty"
# Another bundle of the same project in its place: git would take it, its hash does not match.
cp -a "$T/out/good" "$T/otherbundle"
git -c safe.directory='*' -C "$REPO" bundle create -q "$T/otherbundle/.packetfs/branch.bundle" \
	main packetfs/fix-1
refused "$T/otherbundle" ".packetfs/branch.bundle: sha256 "

# The whole export imports.
out=$("$PFS" import "$STORE" "$T/out/good" fix-2 2>&1) || fail "import of the whole export failed: $out"
mount_store
assert_file_eq "$M/fix-2/brief.md" $'The brief.\n'
exit 0
