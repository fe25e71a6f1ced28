#!/usr/bin/env bash
# Every revision of a document with a long name is reachable in .history (SPEC §3; issue 14,
# item 6). NAME@REV would pass NAME_MAX (255 bytes) for a name of 254 bytes or more, and the
# kernel refuses such a lookup, so a name longer than 244 bytes (255 less '@' and the 10 digits
# of the largest revision) shows as the directory .history/NAME/ holding one file per revision
# named REV, with the same content, size, mode and times as NAME@REV has; shorter names keep
# NAME@REV. The form depends on the name alone, not on the number of revisions. No listing in
# an item names anything over 255 bytes, so grep -r and find walk the item without an error;
# the directory form is read-only like the rest of .history (EACCES); after an unlink the
# revisions stay; the same in subdirectories, in learnings/ and in an archived item.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1

# name_of PREFIX LEN : a file name of LEN bytes that starts with PREFIX.
name_of()
{
	local pad
	pad=$(printf "%$(($2 - ${#1}))s" '' | tr ' ' x)
	printf '%s%s' "$1" "$pad"
}

# save FILE TEXT : one save (one close, one revision) of FILE holding TEXT and a newline.
save()
{
	printf '%s\n' "$2" >"$1" || fail "cannot write $1"
}

# rev_text NAME REV : what the test writes as revision REV of the document NAME.
rev_text()
{
	echo "revision $2 of ${1:0:12} (${#1} bytes)"
}

# assert_name_max DIR : nothing below DIR (a find walk) has a name over 255 bytes, and the
# walk itself gives no error.
assert_name_max()
{
	local out long
	out=$(find "$1" -printf '%f\n' 2>&1) || fail "find $1 failed: $out"
	long=$(printf '%s\n' "$out" | awk 'length > 255' | head -n 3)
	[ -z "$long" ] || fail "a name over 255 bytes is listed under $1: $long"
}

# assert_grep_r DIR PATTERN EXPECTED [GREP_OPTION] : `grep -r [GREP_OPTION] -- PATTERN DIR` exits 0
# (found; never 2, an error, as an unreachable name would give) and prints exactly EXPECTED.
assert_grep_r()
{
	local out rc=0 opt=${4:-}
	out=$(grep -r ${opt:+"$opt"} -- "$2" "$1" 2>&1) || rc=$?
	assert_eq 0 "$rc" "exit status of grep -r $opt over $1 (output: $out)"
	assert_eq "$3" "$out" "grep -r $opt $2 over $1"
}

# assert_revs_dir HIST NAME N : HIST/NAME is the directory form of NAME holding exactly the
# files 1..N, each with the content written as that revision, mode 0444.
assert_revs_dir()
{
	local hist=$1 name=$2 n=$3 rev
	[ -d "$hist/$name" ] || fail "$hist has no directory for the ${#name}-byte name: $(ls -A "$hist")"
	assert_eq "$(seq "$n" | tr '\n' ' ')" "$(ls "$hist/$name" | sort -n | tr '\n' ' ')" \
		"revisions listed in the directory form of the ${#name}-byte name"
	for rev in $(seq "$n"); do
		assert_file_eq "$hist/$name/$rev" "$(rev_text "$name" "$rev")"$'\n'
		assert_eq "444 regular file" "$(stat -c '%a %F' "$hist/$name/$rev")" \
			"mode of revision $rev of the ${#name}-byte name"
	done
}

# assert_revs_at ITEM_DIR NAME N : ITEM_DIR/.history lists NAME@1..NAME@N (lib.sh: revs), each
# with the content written as that revision.
assert_revs_at()
{
	local item=$1 name=$2 n=$3 rev
	assert_eq "$(seq "$n" | tr '\n' ' ')" "$(revs "$item" "$name" | tr '\n' ' ')" \
		"revisions listed as @ files of the ${#name}-byte name"
	for rev in $(seq "$n"); do
		assert_file_eq "$item/.history/$name@$rev" "$(rev_text "$name" "$rev")"$'\n'
	done
}

n255=$(name_of long255- 255)
n254=$(name_of edge254- 254)  # the shortest name whose NAME@1 passes NAME_MAX
n253=$(name_of edge253- 253)  # NAME@9 fits, NAME@10 would not
n245=$(name_of form245- 245)  # the shortest name of the directory form
n244=$(name_of form244- 244)  # the longest name of the @ form
n200=$(name_of short200- 200)
for name in "$n255" "$n254" "$n245" "$n244" "$n200"; do
	for rev in 1 2 3; do
		save "$d/$name" "$(rev_text "$name" "$rev")"
	done
done
# The form does not change with the number of revisions: a 253-byte name is a directory from
# its first revision on, also past the ninth.
for rev in $(seq 11); do
	save "$d/$n253" "$(rev_text "$n253" "$rev")"
done
mkdir "$d/docs"
for rev in 1 2; do
	save "$d/docs/$n255" "$(rev_text "docs/$n255" "$rev")"
done

h=$d/.history
assert_revs_dir "$h" "$n255" 3
assert_revs_dir "$h" "$n254" 3
assert_revs_dir "$h" "$n253" 11
assert_revs_dir "$h" "$n245" 3
assert_revs_at "$d" "$n244" 3
assert_revs_at "$d" "$n200" 3
[ -f "$h/$n200@1" ] || fail ".history/NAME@1 of the 200-byte name is not a regular file"
[ ! -e "$h/$n200" ] || fail "the 200-byte name has a directory form too"
[ ! -e "$h/$n244" ] || fail "the 244-byte name has a directory form too"
# In a subdirectory.
[ -d "$h/docs/$n255" ] || fail ".history/docs has no directory for the long name: $(ls -A "$h/docs")"
assert_eq "1 2 " "$(ls "$h/docs/$n255" | sort -n | tr '\n' ' ')" "revisions of docs/<255 bytes>"
assert_file_eq "$h/docs/$n255/2" "$(rev_text "docs/$n255" 2)"$'\n'

# The directory form has what NAME@REV has: a 245-byte name still resolves NAME@REV (247
# bytes; it is not listed), with the same content, size, mode and times.
assert_eq "$(stat -c '%s %a %F %Y %Z' "$h/$n245@2")" "$(stat -c '%s %a %F %Y %Z' "$h/$n245/2")" \
	"attributes of the two forms of a revision"
cmp -s "$h/$n245@2" "$h/$n245/2" || fail "the two forms of a revision differ in content"
[ -z "$(revs "$d" "$n245")" ] || fail ".history lists the @ form of a 245-byte name"
# For 254 and 255 bytes NAME@REV is past NAME_MAX: the kernel refuses the name itself (and
# NAME@10 for 253 bytes).
assert_fails_with "File name too long" cat "$h/$n255@1"
assert_fails_with "File name too long" cat "$h/$n254@1"
assert_fails_with "File name too long" cat "$h/$n253@10"
# Other names below the directory form are not revisions.
assert_fails_with ENOENT cat "$h/$n255/4"
assert_fails_with ENOENT cat "$h/$n255/01"
assert_fails_with ENOENT cat "$h/$n255/0"

# Nothing listed in the item passes NAME_MAX, and grep -r reads all of it: it finds an old
# revision of each long name and ends with 0 (found), never 2 (an error).
assert_name_max "$d"
assert_grep_r "$d" "revision 1 of long255-" "$h/$n255/1:$(rev_text "$n255" 1)"
assert_grep_r "$d" "revision 1 of docs/long255 " "$h/docs/$n255/1" -l
assert_grep_r "$d" "revision 10 of edge253-" "$h/$n253/10" -l

# The directory form is read-only, as every directory of .history is (EACCES).
assert_fails_with EACCES sh_write "$h/$n255/1" "rewritten"
assert_fails_with EACCES sh_append "$h/$n255/1" "more"
assert_fails_with EACCES sh_write "$h/$n255/4" "new revision"
assert_fails_with EACCES touch "$h/$n255/1"
assert_fails_with EACCES rm "$h/$n255/1"
assert_fails_with EACCES mkdir "$h/$n255/sub"
assert_fails_with EACCES mv "$h/$n255/1" "$h/$n255/5"
assert_fails_with EACCES rmdir "$h/$n255"
assert_fails_with EACCES chmod 600 "$h/$n255/1"
assert_file_eq "$h/$n255/1" "$(rev_text "$n255" 1)"$'\n'
assert_eq "1 2 3 " "$(ls "$h/$n255" | sort -n | tr '\n' ' ')" "revisions after refused writes"

# Unlinking keeps the history in both forms; a new document of the name adds a later
# revision.
rm "$d/$n255" "$d/$n200" "$d/docs/$n255"
[ ! -e "$d/$n255" ] || fail "the 255-byte document is still there after rm"
assert_revs_dir "$h" "$n255" 3
assert_revs_at "$d" "$n200" 3
assert_file_eq "$h/docs/$n255/1" "$(rev_text "docs/$n255" 1)"$'\n'
save "$d/$n255" "reborn"
reborn=$(ls "$h/$n255" | sort -n | tail -n 1)
assert_eq "1 2 3 $reborn " "$(ls "$h/$n255" | sort -n | tr '\n' ' ')" \
	"revisions of the 255-byte name after it was made again"
[ "$reborn" -gt 3 ] || fail "the new document's revision is numbered $reborn, not after 3"
assert_file_eq "$h/$n255/$reborn" $'reborn\n'
for rev in 1 2 3; do
	assert_file_eq "$h/$n255/$rev" "$(rev_text "$n255" "$rev")"$'\n'
done

# A long name that was a document and then a directory: one directory of .history holds the
# document's revisions and the history below the directory.
n250=$(name_of both250- 250)
save "$d/$n250" "$(rev_text "$n250" 1)"
rm "$d/$n250"
mkdir "$d/$n250"
save "$d/$n250/inner.md" "$(rev_text inner.md 1)"
[ -d "$h/$n250" ] || fail "no directory of .history for a long name that was both"
assert_eq "1 inner.md@1 " "$(ls "$h/$n250" | tr '\n' ' ')" "listing of a long name that was both"
assert_file_eq "$h/$n250/1" "$(rev_text "$n250" 1)"$'\n'
assert_file_eq "$h/$n250/inner.md@1" "$(rev_text inner.md 1)"$'\n'
assert_eq 1 "$(ls -A "$h" | grep -cxF -- "$n250")" "times .history lists a long name that was both"
assert_name_max "$d"

# learnings/ has the same .history.
l=$M/learnings
for rev in 1 2; do
	save "$l/$n255" "$(rev_text "$n255" "$rev")"
done
assert_revs_dir "$l/.history" "$n255" 2
assert_fails_with EACCES sh_write "$l/.history/$n255/1" "rewritten"
assert_name_max "$l"
assert_grep_r "$l" "revision 1 of long255-" "$l/.history/$n255/1" -l

# An archived item keeps both forms, read-only.
rmdir "$d"
wait_for test -d "$M/.archive/fix-1"
a=$M/.archive/fix-1/.history
assert_eq "1 2 3 $reborn " "$(ls "$a/$n255" | sort -n | tr '\n' ' ')" "revisions in the archived item"
assert_file_eq "$a/$n255/1" "$(rev_text "$n255" 1)"$'\n'
assert_file_eq "$a/$n255/$reborn" $'reborn\n'
assert_revs_dir "$a" "$n254" 3
assert_revs_dir "$a" "$n253" 11
assert_revs_at "$M/.archive/fix-1" "$n200" 3
assert_fails_with EACCES sh_write "$a/$n255/1" "rewritten"
assert_name_max "$M/.archive/fix-1"
assert_grep_r "$M/.archive/fix-1" "revision 2 of long255-" "$a/$n255/2" -l

# Revisions survive a remount.
umount_store
mount_store
assert_file_eq "$M/.archive/fix-1/.history/$n255/$reborn" $'reborn\n'
assert_revs_dir "$M/.archive/fix-1/.history" "$n253" 11
assert_revs_dir "$M/learnings/.history" "$n255" 2
exit 0
