#!/usr/bin/env bash
# Writes to views through every usual tool are refused with EACCES and change nothing:
# cp, tee, truncate, dd, touch, sed -i and mv over a view, writes into logs and .history; rename(2)
# of a document over a view, a directory or into stages/, and of a view away.
. "$(dirname "$0")/../lib.sh"
mount_item
echo "my notes" >"$d/notes.md"
echo "v2" >"$d/notes.md"
echo "x" >"$T/x"
history_of_notes()
{
	local f
	for f in "$d"/.history/notes.md@*; do
		printf '%s: %s\n' "${f##*/}" "$(cat "$f")"
	done
}
hist=$(history_of_notes)
assert_contains "$hist" ": my notes" "history of notes.md"
first=$(ls "$d/.history" | grep '^notes\.md@' | head -n 1)

assert_fails_with EACCES cp "$T/x" "$d/status"
assert_fails_with EACCES bash -c 'echo x | tee "$1"' _ "$d/status.json"
assert_fails_with EACCES truncate -s 0 "$d/change.diff"
assert_fails_with EACCES dd if="$T/x" of="$d/validation/evidence.md" status=none
assert_fails_with EACCES touch "$d/status"
assert_fails_with EACCES sed -i 's/new/old/' "$d/status"
assert_fails_with EACCES sh_write "$d/.history/$first" "rewritten"
assert_fails_with EACCES sh_write "$M/.packetfs/version" "9.9.9"
assert_fails_with EACCES sh_write "$M/events" "{}"
mv "$d/notes.md" "$d/status" 2>/dev/null && fail "mv of a document over status succeeded"
assert_file_eq "$d/notes.md" $'v2\n'
assert_contains "$(cat "$d/status")" "state: new" "status"
assert_eq "$hist" "$(history_of_notes)" "history of notes.md after refused writes"
ls -A "$d" | grep -q '^sed' && fail "sed left a temp file: $(ls -A "$d")"

# rename(2) itself (mv would copy and unlink across what it cannot rename): the engine judges both
# names by their kind, the store a document's existence and type.
ren() { python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$1" "$2"; }
mkdir "$d/dir"
assert_fails_with EPERM ren "$d/notes.md" "$d/validation/registry.jsonl"
assert_fails_with EACCES ren "$d/notes.md" "$d/ctl"
assert_fails_with EISDIR ren "$d/notes.md" "$d/stages"
assert_fails_with EISDIR ren "$d/notes.md" "$d/dir"
assert_fails_with EACCES ren "$d/ctl" "$d/ctl.md"
assert_fails_with EACCES ren "$d/status" "$d/status.md"
assert_fails_with EACCES ren "$d/notes.md" "$d/stages/notes.md"
assert_fails_with ENOENT ren "$d/no-such.md" "$d/other.md"
assert_fails_with ENOTDIR ren "$d/dir" "$d/notes.md"
assert_file_eq "$d/notes.md" $'v2\n'
assert_eq "$hist" "$(history_of_notes)" "history of notes.md after refused renames"

# Nothing can be created among the generated files.
assert_fails_with EACCES sh_write "$d/stages/1-plan.log" "fake log"
assert_fails_with EACCES sh_write "$d/validation/logs/fake.log" "fake log"
assert_fails_with EACCES sh_write "$d/.history/fake.md@1" "fake"
assert_fails_with EACCES sh_write "$M/.packetfs/recipes/99-fake" "fake"
[ ! -e "$d/stages/1-plan.log" ] || fail "a fake stage log was created"
exit 0
