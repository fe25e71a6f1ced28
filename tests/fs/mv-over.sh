#!/usr/bin/env bash
# rename: onto a new name, over an existing document, temp-file-then-rename saves, and the
# refusals (RENAME_NOREPLACE onto an existing name, across items).
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
new_item fix-2
d=$M/fix-1

echo old >"$d/b.md"
echo new >"$d/a.md"
mv -f "$d/a.md" "$d/b.md"
assert_file_eq "$d/b.md" $'new\n'
[ ! -e "$d/a.md" ] || fail "a.md still exists after mv over b.md"
ls -A "$d" | grep -qx a.md && fail "a.md still listed after mv"

mv "$d/b.md" "$d/c.md"
assert_file_eq "$d/c.md" $'new\n'
[ ! -e "$d/b.md" ] || fail "b.md still exists after mv to c.md"

# The way editors save: write a temp file, then rename it over the document.
echo "plan v1" >"$d/plan.md"
printf 'plan v2\n' >"$d/.plan.md.tmp"
mv "$d/.plan.md.tmp" "$d/plan.md"
assert_file_eq "$d/plan.md" $'plan v2\n'
[ ! -e "$d/.plan.md.tmp" ] || fail "temp file left behind"
python3 - "$d" <<'PY'
import os, sys
d = sys.argv[1]
with open(os.path.join(d, "plan.md.new"), "w") as f:
    f.write("plan v3\n")
    f.flush()
    os.fsync(f.fileno())
os.replace(os.path.join(d, "plan.md.new"), os.path.join(d, "plan.md"))
PY
assert_file_eq "$d/plan.md" $'plan v3\n'

# Rename into a subdirectory and back.
mkdir "$d/drafts"
mv "$d/c.md" "$d/drafts/c.md"
assert_file_eq "$d/drafts/c.md" $'new\n'
mv "$d/drafts/c.md" "$d/c.md"
assert_file_eq "$d/c.md" $'new\n'

# mv -T --no-clobber semantics through renameat2(RENAME_NOREPLACE).
echo keep >"$d/keep.md"
assert_fails_with EEXIST python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 1) != 0:
    e = ctypes.get_errno()
    sys.exit(os.strerror(e))
' "$d/c.md" "$d/keep.md"
assert_file_eq "$d/keep.md" $'keep\n'
assert_file_eq "$d/c.md" $'new\n'

# Across items: EXDEV, and both sides unchanged.
assert_fails_with EXDEV python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' \
	"$d/c.md" "$M/fix-2/c.md"
assert_file_eq "$d/c.md" $'new\n'
[ ! -e "$M/fix-2/c.md" ] || fail "c.md appeared in fix-2"

umount_store
mount_store
d=$M/fix-1
assert_file_eq "$d/plan.md" $'plan v3\n'
assert_file_eq "$d/c.md" $'new\n'
[ ! -e "$d/a.md" ] || fail "a.md is back after remount"
exit 0
