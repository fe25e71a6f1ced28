#!/usr/bin/env bash
# Every revision of every document is kept (SPEC §2, §3): .history/PATH@REV exists for each
# save of PATH, in order, with its exact bytes (binary, no trailing newline, empty, appended),
# one revision per save; also for documents in subdirectories; after a rename (of a file, a
# temp-file-then-rename save over a document, a directory) and after an unlink the old
# path's revisions are all still there and the new path's latest revision is its content;
# history is read-only and survives a remount. (Replaces tests/fs/history.sh.)
. "$(dirname "$0")/../lib.sh"
mount_item
X=$T/expected
mkdir -p "$X"

# assert_history PATH FILE... : .history holds exactly one revision of PATH per FILE, whose
# contents in revision order are those of the FILEs, byte for byte.
assert_history()
{
	local path=$1 rev
	shift
	local -a r
	mapfile -t r < <(revs "$d" "$path")
	[ "${#r[@]}" = $# ] ||
		fail ".history lists ${#r[@]} revisions of $path (${r[*]}), expected $#: $(ls -R "$d/.history")"
	for rev in "${r[@]}"; do
		cmp -s "$d/.history/$path@$rev" "$1" ||
			fail ".history/$path@$rev: expected $(od -c "$1" | head -5), got $(od -c "$d/.history/$path@$rev" | head -5)"
		shift
	done
}

# assert_latest PATH FILE : the latest revision of PATH in .history has the content of FILE.
assert_latest()
{
	local rev
	rev=$(last_rev "$d" "$1")
	[ -n "$rev" ] || fail ".history lists no revision of $1: $(ls -R "$d/.history")"
	cmp -s "$d/.history/$1@$rev" "$2" || fail ".history/$1@$rev does not hold the content of $2"
}

# One open and one close per save (cp), so each save is one revision.
for v in one two three; do
	echo "version $v" >"$X/plan-$v"
	cp "$X/plan-$v" "$d/plan.md"
done
assert_file_eq "$d/plan.md" $'version three\n'
assert_history plan.md "$X/plan-one" "$X/plan-two" "$X/plan-three"
for r in $(revs "$d" plan.md); do
	[ -f "$d/.history/plan.md@$r" ] || fail ".history/plan.md@$r is not a regular file"
done

# Binary bytes without a trailing newline, an append, a shell redirection (O_TRUNC, then a
# write: one save, one revision), an emptied file.
printf 'bin\000ary\r\n\377\376 no newline' >"$X/plan-bin"
python3 -c 'import sys; open(sys.argv[1], "wb").write(open(sys.argv[2], "rb").read())' \
	"$d/plan.md" "$X/plan-bin"
cp "$X/plan-bin" "$X/plan-appended"
echo " appended" >>"$X/plan-appended"
echo " appended" >>"$d/plan.md"
echo "version four" >"$X/plan-four"
echo "version four" >"$d/plan.md"
: >"$X/plan-empty"
: >"$d/plan.md"
assert_history plan.md "$X/plan-one" "$X/plan-two" "$X/plan-three" "$X/plan-bin" \
	"$X/plan-appended" "$X/plan-four" "$X/plan-empty"

# History is read-only.
r1=$(revs "$d" plan.md | head -n 1)
assert_fails_with EACCES sh_write "$d/.history/plan.md@$r1" "rewritten history"
assert_fails_with EACCES sh_append "$d/.history/plan.md@$r1" "more history"
cmp -s "$d/.history/plan.md@$r1" "$X/plan-one" || fail "a refused write changed .history/plan.md@$r1"
echo "version five" >"$X/plan-five"
cp "$X/plan-five" "$d/plan.md"

# Documents in subdirectories.
mkdir -p "$d/notes/deep"
echo "a one" >"$X/a-one"
echo "a two" >"$X/a-two"
echo "b one" >"$X/b-one"
cp "$X/a-one" "$d/notes/a.md"
cp "$X/a-two" "$d/notes/a.md"
cp "$X/b-one" "$d/notes/deep/b.md"
[ -d "$d/.history/notes" ] || fail ".history has no directory notes: $(ls "$d/.history")"
assert_history notes/a.md "$X/a-one" "$X/a-two"
assert_history notes/deep/b.md "$X/b-one"

# A temp-file-then-rename save over a document (what editors and sed -i do).
echo "a three, saved by rename" >"$X/a-three"
cp "$X/a-three" "$d/notes/.a.md.tmp"
mv "$d/notes/.a.md.tmp" "$d/notes/a.md"
assert_file_eq "$d/notes/a.md" "$(cat "$X/a-three")"$'\n'
assert_history notes/a.md "$X/a-one" "$X/a-two" "$X/a-three"

# Renaming a file: the old path keeps all its revisions, the new path's latest revision is
# its content.
mv "$d/plan.md" "$d/plan-old.md"
[ ! -e "$d/plan.md" ] || fail "plan.md still there after mv"
assert_history plan.md "$X/plan-one" "$X/plan-two" "$X/plan-three" "$X/plan-bin" \
	"$X/plan-appended" "$X/plan-four" "$X/plan-empty" "$X/plan-five"
assert_latest plan-old.md "$X/plan-five"

# Renaming a directory: the same for every document below it.
mv "$d/notes" "$d/notes2"
assert_history notes/a.md "$X/a-one" "$X/a-two" "$X/a-three"
assert_history notes/deep/b.md "$X/b-one"
assert_latest notes2/a.md "$X/a-three"
assert_latest notes2/deep/b.md "$X/b-one"

# Unlinking keeps the history; a new document at the same path adds to it.
rm "$d/notes2/deep/b.md" "$d/plan-old.md"
[ ! -e "$d/notes2/deep/b.md" ] || fail "notes2/deep/b.md still there after rm"
assert_history notes/deep/b.md "$X/b-one"
assert_latest notes2/deep/b.md "$X/b-one"
assert_latest plan-old.md "$X/plan-five"
echo "plan reborn" >"$X/plan-reborn"
cp "$X/plan-reborn" "$d/plan.md"
assert_history plan.md "$X/plan-one" "$X/plan-two" "$X/plan-three" "$X/plan-bin" \
	"$X/plan-appended" "$X/plan-four" "$X/plan-empty" "$X/plan-five" "$X/plan-reborn"

# Revisions survive a remount.
umount_store
mount_store
d=$M/fix-1
assert_history plan.md "$X/plan-one" "$X/plan-two" "$X/plan-three" "$X/plan-bin" \
	"$X/plan-appended" "$X/plan-four" "$X/plan-empty" "$X/plan-five" "$X/plan-reborn"
assert_history notes/a.md "$X/a-one" "$X/a-two" "$X/a-three"
assert_history notes/deep/b.md "$X/b-one"
assert_latest notes2/a.md "$X/a-three"
assert_latest plan-old.md "$X/plan-five"
exit 0
