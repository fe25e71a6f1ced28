#!/usr/bin/env bash
# GNU Emacs (emacs-nox, in batch mode) editing a document in a packet: while its buffer is
# modified the document has Emacs's lock, a symlink .#NAME -> user@host.pid, gone once saved;
# a save that makes a backup renames the document to NAME~ and writes NAME anew (both in
# .history); a document with a hard link is backed up by copying (backup-by-copying-when-linked),
# so its link stays and both names show the save. A remount keeps all of it.
. "$(dirname "$0")/../lib.sh"
command -v emacs >/dev/null || { echo "SKIP: emacs missing (apt-get install emacs-nox)" >&2; exit 77; }
mount_item

# edit FILE ELISP : emacs visits FILE (in the item), appends "edited\n", runs ELISP before
# saving (the buffer current), saves, and prints what it said.
edit()
{
	(cd "$d" && emacs -Q --batch --eval "(progn (find-file \"$1\") (setq backup-inhibited nil)
		(goto-char (point-max)) (insert \"edited\\n\") $2 (save-buffer)
		(princ (format \"saved lock=%S\\n\" (file-symlink-p \".#$1\"))))" 2>&1)
}

printf 'one\n' >"$d/doc.md"
out=$(edit doc.md '(princ (format "modified lock=%S\n" (file-symlink-p ".#doc.md")))') ||
	fail "emacs failed: $out"
assert_contains "$out" "modified lock=\"$(id -un)@" "Emacs's lock link while modified"
assert_contains "$out" "saved lock=nil" "no lock once saved"
[ -L "$d/.#doc.md" ] && fail "the lock link stayed"
assert_file_eq "$d/doc.md" $'one\nedited\n'
assert_file_eq "$d/doc.md~" $'one\n'
assert_file_eq "$d/.history/doc.md~@1" $'one\n'
assert_file_eq "$d/.history/doc.md@1" $'one\n'

# A hard link: backed up by copying, the link kept.
printf 'linked\n' >"$d/a.md"
ln "$d/a.md" "$d/b.md"
out=$(edit a.md '(setq backup-by-copying-when-linked t)') || fail "emacs failed: $out"
assert_eq "2 2" "$(stat -c %h "$d/a.md" "$d/b.md" | tr '\n' ' ' | sed 's/ $//')" "the link after a save"
assert_file_eq "$d/b.md" $'linked\nedited\n'
assert_file_eq "$d/a.md~" $'linked\n'
assert_eq 1 "$(stat -c %h "$d/a.md~")" "the backup copy's link count"

umount_store
mount_store
assert_file_eq "$d/doc.md" $'one\nedited\n'
assert_file_eq "$d/doc.md~" $'one\n'
assert_file_eq "$d/b.md" $'linked\nedited\n'
assert_eq 2 "$(stat -c %h "$d/a.md")" "the link after a remount"
echo ok
