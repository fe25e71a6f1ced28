#!/usr/bin/env bash
# vim edits a document the way it does on a local disk (swap file, the 4913 probe, rename to a
# backup, write, unlink) and leaves no stray files behind.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
new_item fix-1
d=$M/fix-1
# No vimrc; backupskip cleared, since its default skips /tmp where the mount lives.
VIM_OPTS=(-u NONE -N -i NONE -es -c "set backupskip=")

printf '# Plan\n\nsay old world\nold habits\n' >"$d/plan.md"
(cd "$d" && timeout 60 vim "${VIM_OPTS[@]}" -c '%s/old/new/' -c 'wq' plan.md </dev/null) ||
	fail "vim exited with failure"
assert_file_eq "$d/plan.md" $'# Plan\n\nsay new world\nnew habits\n'

# Again with backupcopy=yes (write in place) and with a backup kept, as some users set it.
(cd "$d" && timeout 60 vim "${VIM_OPTS[@]}" -c 'set backupcopy=yes' -c '%s/habits/ways/' \
	-c 'wq' plan.md </dev/null) || fail "vim (backupcopy=yes) exited with failure"
assert_file_eq "$d/plan.md" $'# Plan\n\nsay new world\nnew ways\n'

stray=$(ls -A "$d" | grep -E '\.swp$|\.swx$|~$|^4913$' || true)
[ -z "$stray" ] || fail "vim left stray files: $stray"

(cd "$d" && timeout 60 vim "${VIM_OPTS[@]}" -c 'set backup' -c '%s/ways/paths/' -c 'wq' \
	plan.md </dev/null) || fail "vim (backup) exited with failure"
assert_file_eq "$d/plan.md" $'# Plan\n\nsay new world\nnew paths\n'
assert_file_eq "$d/plan.md~" $'# Plan\n\nsay new world\nnew ways\n'

# A new file written by vim.
(cd "$d" && timeout 60 vim "${VIM_OPTS[@]}" -c 'call setline(1, "fresh notes")' -c 'wq' \
	notes.md </dev/null) || fail "vim (new file) exited with failure"
assert_file_eq "$d/notes.md" $'fresh notes\n'
exit 0
