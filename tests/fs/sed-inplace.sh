#!/usr/bin/env bash
# sed -i (temp file in the same directory, then rename over the document) edits plan.md.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1

printf '# Plan\n\nSay old world.\nKeep this line.\n' >"$d/plan.md"
sed -i 's/old world/new world/' "$d/plan.md"
assert_file_eq "$d/plan.md" $'# Plan\n\nSay new world.\nKeep this line.\n'
sed -i '$a Appended by sed.' "$d/plan.md"
assert_file_eq "$d/plan.md" $'# Plan\n\nSay new world.\nKeep this line.\nAppended by sed.\n'
ls -A "$d" | grep -q '^sed' && fail "sed left a temp file: $(ls -A "$d")"

mkdir "$d/notes"
printf 'a\nb\n' >"$d/notes/list.md"
sed -i -e 's/b/B/' "$d/notes/list.md"
assert_file_eq "$d/notes/list.md" $'a\nB\n'

umount_store
mount_store
assert_file_eq "$M/fix-1/plan.md" $'# Plan\n\nSay new world.\nKeep this line.\nAppended by sed.\n'
exit 0
