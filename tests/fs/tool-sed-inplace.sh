#!/usr/bin/env bash
# sed -i (a temp file in the same directory, then rename over the document) edits documents as
# on a local disk: exact content and size after an edit that grows and one that shrinks, the
# mode is kept, no temp file is left, each edit adds exactly one revision to .history holding
# the new content (earlier revisions unchanged), in a subdirectory too, and after a remount.
. "$(dirname "$0")/../lib.sh"
mount_item

v1=$'# Plan\n\nSay old world.\nKeep this line.\n'
printf '%s' "$v1" >"$d/plan.md"
chmod 640 "$d/plan.md"
r1=$(revs "$d" plan.md | tr '\n' ' ')
assert_eq "1 " "$r1" "revisions of plan.md after the first write"

# edited WHAT OLD NEW REVS : after the edit WHAT, plan.md holds NEW (content and size), its mode
# is still 640, it is the item's only document, its revisions are REVS ("1 2 "), the last of
# them holds NEW and the one before OLD.
edited()
{
	local what=$1 old=$2 new=$3 revs=$4 n
	n=${revs% }
	n=${n##* }
	assert_doc "$d/plan.md" "$new"
	assert_eq 640 "$(stat -c %a "$d/plan.md")" "mode after $what"
	assert_eq "plan.md " "$(doc_names "$d")" "documents after $what"
	assert_eq "$revs" "$(revs "$d" plan.md | tr '\n' ' ')" "revisions of plan.md after $what"
	assert_file_eq "$d/.history/plan.md@$((n - 1))" "$old"
	assert_file_eq "$d/.history/plan.md@$n" "$new"
}

sed -i 's/old world/new, wider world/' "$d/plan.md"
v2=$'# Plan\n\nSay new, wider world.\nKeep this line.\n'
edited "sed -i" "$v1" "$v2" "1 2 "

# An edit that shrinks the document.
sed -i -e '/^Keep/d' -e 's/, wider//' "$d/plan.md"
v3=$'# Plan\n\nSay new world.\n'
edited "a shrinking sed -i" "$v2" "$v3" "1 2 3 "

# An edit that appends a line.
sed -i '$a Appended by sed.' "$d/plan.md"
v4=$'# Plan\n\nSay new world.\nAppended by sed.\n'
assert_doc "$d/plan.md" "$v4"
assert_eq "1 2 3 4 " "$(revs "$d" plan.md | tr '\n' ' ')" "revisions of plan.md after a third sed -i"
assert_file_eq "$d/.history/plan.md@4" "$v4"

# In a subdirectory.
mkdir "$d/notes"
printf 'a\nb\n' >"$d/notes/list.md"
sed -i -e 's/b/B/' "$d/notes/list.md"
assert_doc "$d/notes/list.md" $'a\nB\n'
assert_eq "list.md " "$(ls -A "$d/notes" | tr '\n' ' ')" "listing of notes/ after sed -i"
assert_eq "1 2 " "$(revs "$d" notes/list.md | tr '\n' ' ')" "revisions of notes/list.md after sed -i"
assert_file_eq "$d/.history/notes/list.md@1" $'a\nb\n'
assert_file_eq "$d/.history/notes/list.md@2" $'a\nB\n'

umount_store
mount_store
d=$M/fix-1
assert_doc "$d/plan.md" "$v4"
assert_doc "$d/notes/list.md" $'a\nB\n'
assert_eq 640 "$(stat -c %a "$d/plan.md")" "mode after remount"
assert_eq "notes plan.md " "$(doc_names "$d")" "documents after remount"
assert_eq "1 2 3 4 " "$(revs "$d" plan.md | tr '\n' ' ')" "revisions of plan.md after remount"
exit 0
