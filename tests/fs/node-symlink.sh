#!/usr/bin/env bash
# Symlinks in a packet as on a local disk: ln -s of relative, absolute and dangling targets,
# readlink, ls -l, stat -c %F and the size (the target's length), cat through a link (to a
# document, through a subdirectory, and out of the mount), rename and unlink of a link, a link
# in a subdirectory and in MOUNT/learnings/; .history keeps each revision of a link as a link,
# `packetfs log` lists them, and a remount keeps everything. A target of PATH_MAX bytes is
# refused with ENAMETOOLONG.
. "$(dirname "$0")/../lib.sh"
mount_item

printf 'the plan\n' >"$d/plan.md"
mkdir "$d/sub"
printf 'deep\n' >"$d/sub/deep.md"
printf 'outside\n' >"$T/outside.txt"

ln -s plan.md "$d/rel" || fail "ln -s of a relative target"
ln -s "$T/outside.txt" "$d/abs" || fail "ln -s of an absolute target out of the mount"
ln -s ../plan.md "$d/sub/up" || fail "ln -s in a subdirectory"
ln -s sub/deep.md "$d/down" || fail "ln -s into a subdirectory"
ln -s nowhere.md "$d/dangling" || fail "ln -s of a dangling target"
ln -s /usr/bin/python3 "$d/py" || fail "ln -s to /usr/bin/python3"

check_links()
{
	assert_eq plan.md "$(readlink "$d/rel")" "readlink rel ($1)"
	assert_eq "$T/outside.txt" "$(readlink "$d/abs")" "readlink abs ($1)"
	assert_eq ../plan.md "$(readlink "$d/sub/up")" "readlink sub/up ($1)"
	assert_eq nowhere.md "$(readlink "$d/dangling")" "readlink dangling ($1)"
	assert_eq "symbolic link" "$(stat -c %F "$d/rel")" "stat -c %F ($1)"
	assert_eq 7 "$(stat -c %s "$d/rel")" "size of a link: the target's length ($1)"
	assert_eq "$(id -u) 777" "$(stat -c '%u %a' "$d/rel")" "owner and mode of a link ($1)"
	assert_eq "regular file" "$(stat -L -c %F "$d/rel")" "stat -L through a link ($1)"
	assert_file_eq "$d/rel" $'the plan\n'
	assert_file_eq "$d/abs" $'outside\n'
	assert_file_eq "$d/sub/up" $'the plan\n'
	assert_file_eq "$d/down" $'deep\n'
	assert_contains "$(ls -l "$d")" "rel -> plan.md" "ls -l ($1)"
	[ -L "$d/dangling" ] && [ ! -e "$d/dangling" ] || fail "dangling link is a link to nothing ($1)"
	"$d/py" -c 'print("ran")' | grep -qx ran || fail "running python3 through a link ($1)"
	assert_eq l "$(find "$d" -maxdepth 1 -name rel -printf %y)" "find -type of a link (readdir d_type) ($1)"
}
check_links "made"

# Writing through a link writes the target; the link stays a link.
printf 'the plan, amended\n' >"$d/rel"
assert_file_eq "$d/plan.md" $'the plan, amended\n'
[ -L "$d/rel" ] || fail "a write through a link left no link"
printf 'the plan\n' >"$d/plan.md"

# A dangling link comes alive when its target is made (the kernel makes it through the link).
printf 'made through\n' >"$d/dangling"
assert_file_eq "$d/nowhere.md" $'made through\n'
rm "$d/nowhere.md"
[ -L "$d/dangling" ] && [ ! -e "$d/dangling" ] || fail "dangling again after rm of its target"

# Rename and unlink act on the link, not on its target.
mv "$d/rel" "$d/rel2" || fail "mv of a link"
assert_eq plan.md "$(readlink "$d/rel2")" "readlink after mv"
[ -e "$d/rel" ] && fail "old name of a renamed link still there"
assert_file_eq "$d/plan.md" $'the plan\n'
mv "$d/rel2" "$d/rel"
ln -s gone "$d/tmp-link"
rm "$d/tmp-link" || fail "rm of a link"
[ -L "$d/tmp-link" ] && fail "rm left the link"
# A link replaced by rename over it, and a link renamed over a document.
ln -s plan.md "$d/over"
printf 'x\n' >"$d/victim.md"
mv "$d/over" "$d/victim.md" || fail "mv of a link over a document"
[ -L "$d/victim.md" ] || fail "a link renamed over a document is a link"
rm "$d/victim.md"

# ln -s onto an existing name: EEXIST; ln -sf replaces it.
assert_fails_with EEXIST ln -s other "$d/rel"
ln -s x "$d/force" && ln -sf plan.md "$d/force" || fail "ln -sf"
assert_eq plan.md "$(readlink "$d/force")" "readlink after ln -sf"

# Targets up to PATH_MAX - 1 bytes; one of PATH_MAX is refused by the kernel or by us.
long=$(printf 'a%.0s' $(seq 1 4095))
ln -s "$long" "$d/long" || fail "ln -s of a 4095-byte target"
assert_eq 4095 "$(readlink "$d/long" | tr -d '\n' | wc -c)" "length of a 4095-byte target"
assert_eq 4095 "$(stat -c %s "$d/long")" "size of a link with a 4095-byte target"
python3 - "$d/toolong" <<'PY' || fail "a target of PATH_MAX bytes was not refused with ENAMETOOLONG"
import errno, os, sys
try:
    os.symlink("b" * 4096, sys.argv[1])
except OSError as e:
    sys.exit(0 if e.errno == errno.ENAMETOOLONG else 1)
sys.exit(1)
PY

# A link in MOUNT/learnings/.
ln -s ../fix-1/plan.md "$M/learnings/plan-link" || fail "ln -s in learnings/"
assert_file_eq "$M/learnings/plan-link" $'the plan\n'

# .history: every revision of a link reads back as a link to the target it had then.
ln -sf sub/deep.md "$d/force"
assert_eq "symbolic link" "$(stat -c %F "$d/.history/force@1")" ".history of a link is a link"
assert_eq x "$(readlink "$d/.history/force@1")" "revision 1 of force"
last=$(last_rev "$d" force)
assert_eq sub/deep.md "$(readlink "$d/.history/force@$last")" "latest revision of force"
assert_eq "symbolic link" "$(stat -c %F "$d/.history/sub/up@1")" ".history of sub/up"
log=$("$PFS" log "$STORE" fix-1 force 2>&1) || fail "packetfs log of a link: $log"
assert_contains "$log" "symlink" "packetfs log names the link's kind"

umount_store
mount_store
check_links "after a remount"
assert_eq sub/deep.md "$(readlink "$d/force")" "ln -sf kept across a remount"
assert_eq x "$(readlink "$d/.history/force@1")" ".history of a link after a remount"
assert_file_eq "$M/learnings/plan-link" $'the plan\n'
echo ok
