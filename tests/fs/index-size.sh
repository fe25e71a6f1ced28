#!/usr/bin/env bash
# The daemon remembers index.html's size between stats, under a stamp of the store's commits, the
# configuration and the refs (engine/namespace/view_size.c). After each kind of change the size a
# stat gives is the size a read gives, with index.html stat'ed twice just before the change (the
# second stat answered from what the first kept): a new item (mkdir), the title from brief.md, the
# evidence of ten recipes validated by the pipeline, the branch head moved by a commit in the
# worktree (stat'ed at once after the commit, and again once the engine reported it: the ten
# lines at the old head stop counting, "10/10" becomes "0/10"), an item archived by rmdir.
. "$(dirname "$0")/../lib.sh"
copy_recipes
names=""
for i in 11 12 13 14 15 16 17 18 19 20; do
	printf '#!/usr/bin/env bash\n# summary: check %s\necho ok\n' "$i" >"$RECIPES/$i-check.sh"
	names="$names $i-check"
done
chmod +x "$RECIPES"/*-check.sh
# shellcheck disable=SC2086
std_item $names
wt=$STORE/worktrees/fix-1
idx=$M/index.html

# same_size WHAT : stat's size of index.html is the number of bytes a read gives; then stats it
# twice more, so that the next check starts from a size the daemon kept.
same_size()
{
	assert_eq "$(cat "$idx" | wc -c)" "$(stat -c %s "$idx")" "$1: size of index.html (stat against read)"
	stat -c %s "$idx" >/dev/null
	stat -c %s "$idx" >/dev/null
}

# changed BEFORE WHAT : index.html's size is no longer BEFORE.
changed()
{
	[ "$(stat -c %s "$idx")" != "$1" ] || fail "index.html kept its size ($1) after $2"
}

same_size "one item"
before=$(stat -c %s "$idx")
mkdir "$M/fix-2"
same_size "mkdir of a second item"
changed "$before" "mkdir of a second item"

before=$(stat -c %s "$idx")
printf '# A title long enough to be seen in the row\n\nbody\n' >"$M/fix-2/brief.md"
same_size "brief.md written"
changed "$before" "brief.md gave the item a title"

before=$(stat -c %s "$idx")
ctl "$M" fix-1 advance
settled fix-1 >/dev/null
assert_eq "10/10 validated" "$(status_field "$M" fix-1 evidence)" "evidence after validation"
same_size "ten recipes validated"
changed "$before" "ten recipes were validated"

# The head: a commit in the worktree.
before=$(stat -c %s "$idx")
echo '/* a hand edit */' >>"$wt/hello.c"
git -C "$wt" commit -q -am "hand commit"
same_size "hand commit"
changed "$before" "the head moved past the validated lines"
wait_for grep -q '"head_moved"' "$M/fix-1/events"
same_size "hand commit reported"

before=$(stat -c %s "$idx")
rmdir "$M/fix-2"
same_size "fix-2 archived"
changed "$before" "fix-2 was archived"
exit 0
