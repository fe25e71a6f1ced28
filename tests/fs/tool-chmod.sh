#!/usr/bin/env bash
# chmod as on a local disk: octal and symbolic modes on documents and on a document
# subdirectory show in stat exactly, fchmod through python too; the content is unchanged by
# each; chown and fchown to the same owner succeed and change nothing; modes survive a remount.
. "$(dirname "$0")/../lib.sh"
mount_item
f=$d/notes.md

printf 'content that chmod must not touch\n' >"$f"
sum=$(file_sha256 "$f")
size=$(stat -c %s "$f")
assert_eq 644 "$(stat -c %a "$f")" "mode of a new document (umask 022)"

# assert_mode MODE WHAT : stat shows MODE, and the content is what it was.
assert_mode()
{
	assert_eq "$1" "$(stat -c %a "$f")" "mode after $2"
	assert_eq "$sum" "$(file_sha256 "$f")" "content after $2"
	assert_eq "$size" "$(stat -c %s "$f")" "size after $2"
}

for m in 600 640 755 700 444 400 664 750; do
	chmod "$m" "$f"
	assert_mode "$m" "chmod $m"
done
chmod 000 "$f"
assert_mode 0 "chmod 000"
assert_eq "----------" "$(stat -c %A "$f")" "mode string after chmod 000"
chmod u+rw,g+r "$f"
assert_mode 640 "chmod u+rw,g+r"
chmod a+x "$f"
assert_mode 751 "chmod a+x"
chmod go-x,o+r "$f"
assert_mode 744 "chmod go-x,o+r"
assert_eq "-rwxr--r--" "$(stat -c %A "$f")" "mode string after chmod go-x,o+r"

# A subdirectory of documents.
mkdir "$d/sub"
echo deep >"$d/sub/deep.md"
chmod 750 "$d/sub"
assert_eq 750 "$(stat -c %a "$d/sub")" "mode of sub/ after chmod 750"
assert_file_eq "$d/sub/deep.md" $'deep\n'
chmod 600 "$d/sub/deep.md"
assert_eq 600 "$(stat -c %a "$d/sub/deep.md")" "mode of sub/deep.md after chmod 600"

# fchmod, chown and fchown to the same owner.
python3 - "$f" <<'PY' || fail "fchmod/fchown through python"
import os, stat, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDONLY)
os.fchmod(fd, 0o620)
assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o620, oct(os.fstat(fd).st_mode)
assert stat.S_IMODE(os.stat(p).st_mode) == 0o620, oct(os.stat(p).st_mode)
st = os.fstat(fd)
os.fchown(fd, st.st_uid, st.st_gid)
os.fchown(fd, -1, -1)
os.close(fd)
st = os.stat(p)
os.chown(p, st.st_uid, st.st_gid)
assert (os.stat(p).st_uid, os.stat(p).st_gid) == (st.st_uid, st.st_gid)
assert stat.S_IMODE(os.stat(p).st_mode) == 0o620
PY
chown "$(id -u):$(id -g)" "$f" || fail "chown to the same owner failed"
assert_mode 620 "fchmod 620 and chown to the same owner"
assert_eq "$(id -u):$(id -g)" "$(stat -c %u:%g "$f")" "owner after chown to the same owner"

# A write keeps the mode.
chmod 640 "$f"
printf 'rewritten\n' >"$f"
assert_eq 640 "$(stat -c %a "$f")" "mode after rewriting the document"

umount_store
mount_store
d=$M/fix-1
assert_eq 640 "$(stat -c %a "$d/notes.md")" "mode of notes.md after remount"
assert_file_eq "$d/notes.md" $'rewritten\n'
assert_eq 750 "$(stat -c %a "$d/sub")" "mode of sub/ after remount"
assert_eq 600 "$(stat -c %a "$d/sub/deep.md")" "mode of sub/deep.md after remount"
exit 0
