#!/usr/bin/env bash
# vim -es edits documents as on a local disk, with its swap file on the mount and backups on:
# edits that grow and edits that shrink a document under backupcopy=yes (copy the original to the
# backup, rewrite in place), backupcopy=no (rename the original to the backup, write a new file)
# and backupcopy=auto without `backup` (the 4913 probe; the writebackup is removed after the
# write). After each: the exact content and size, the backup holds the previous content, the
# mode is kept, the swap file existed during the edit, and no swap file, probe or stray backup
# is left. vim also writes a new document.
. "$(dirname "$0")/../lib.sh"
mount_item

# No vimrc and no viminfo; the swap file and backups go next to the file (on the mount), and
# backupskip is cleared, since its default skips /tmp where the mount lives.
VIM_BASE=(-u NONE -N -i NONE -es -c "set swapfile directory=. backupdir=. backupskip=")

# vim_edit FILE SETTINGS EXCMD... : vim -es in $d on FILE with `set SETTINGS`, the ex commands,
# then wq. vim must succeed, and its swap file must have existed on the mount during the edit.
vim_edit()
{
	local file=$1 settings=$2 c
	local -a cmds=()
	shift 2
	for c in "$@"; do
		cmds+=(-c "$c")
	done
	rm -f "$T/swap"
	(cd "$d" && timeout 60 vim "${VIM_BASE[@]}" -c "set $settings" \
		-c "call writefile([swapname('%'), filereadable(swapname('%'))], '$T/swap')" \
		"${cmds[@]}" -c wq "$file" </dev/null) || fail "vim ($settings) on $file exited with failure"
	assert_eq "$d/.$file.swp"$'\n'1 "$(cat "$T/swap")" "swap file of vim ($settings) during the edit"
}

# backed_up WHAT NEW OLD : after the edit WHAT, plan.md holds NEW and its backup plan.md~ OLD
# (content and size), plan.md's mode is still 640, and the item's documents are those two.
backed_up()
{
	assert_doc "$d/plan.md" "$2"
	assert_doc "$d/plan.md~" "$3"
	assert_eq 640 "$(stat -c %a "$d/plan.md")" "mode after vim ($1)"
	assert_eq "plan.md plan.md~ " "$(doc_names "$d")" "documents after vim ($1)"
}

v0=$'# Plan\n\nsay old world\nold habits\n'
printf '%s' "$v0" >"$d/plan.md"
chmod 640 "$d/plan.md"

# backupcopy=yes, growing edit.
vim_edit plan.md "backup writebackup backupcopy=yes" '%s/old/brand new/g'
v1=$'# Plan\n\nsay brand new world\nbrand new habits\n'
backed_up "backupcopy=yes, grow" "$v1" "$v0"

# backupcopy=yes, shrinking edit.
vim_edit plan.md "backup writebackup backupcopy=yes" 'g/habits/d' '%s/brand new/new/'
v2=$'# Plan\n\nsay new world\n'
backed_up "backupcopy=yes, shrink" "$v2" "$v1"

# backupcopy=no, growing edit: the original becomes the backup, a new file is written.
vim_edit plan.md "backup writebackup backupcopy=no" \
	"call append('\$', ['', '## Steps', '1. first step', '2. second step'])"
v3=$'# Plan\n\nsay new world\n\n## Steps\n1. first step\n2. second step\n'
backed_up "backupcopy=no, grow" "$v3" "$v2"

# backupcopy=no, shrinking edit.
vim_edit plan.md "backup writebackup backupcopy=no" '1,4d'
v4=$'## Steps\n1. first step\n2. second step\n'
backed_up "backupcopy=no, shrink" "$v4" "$v3"

# writebackup without backup, backupcopy=auto (vim probes the directory with a file "4913"):
# the backup exists only during the write.
n0=$'notes\nkeep this\n'
printf '%s' "$n0" >"$d/notes.md"
vim_edit notes.md "nobackup writebackup backupcopy=auto" "call append('\$', 'and this too')"
assert_doc "$d/notes.md" $'notes\nkeep this\nand this too\n'
vim_edit notes.md "nobackup writebackup backupcopy=auto" '2,$d'
assert_doc "$d/notes.md" $'notes\n'
assert_eq "notes.md plan.md plan.md~ " "$(doc_names "$d")" "documents after vim (writebackup only)"

# A new document written by vim.
vim_edit fresh.md "backup writebackup" 'call setline(1, "fresh notes")'
assert_doc "$d/fresh.md" $'fresh notes\n'
assert_eq "fresh.md notes.md plan.md plan.md~ " "$(doc_names "$d")" "documents after vim wrote a new file"

# What vim wrote is what the store keeps.
umount_store
mount_store
d=$M/fix-1
assert_doc "$d/plan.md" "$v4"
assert_doc "$d/plan.md~" "$v3"
assert_doc "$d/notes.md" $'notes\n'
assert_eq "fresh.md notes.md plan.md plan.md~ " "$(doc_names "$d")" "documents after remount"
exit 0
