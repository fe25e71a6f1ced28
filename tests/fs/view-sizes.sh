#!/usr/bin/env bash
# The daemon remembers the sizes of status, status.json, evidence.md, junit.xml, report.html and
# change.diff between stats, under a stamp of what they are made of (engine/namespace/view_size.c).
# After each kind of change the size a stat gives is the size a read gives, with every view
# stat'ed just before the change: a change of the store (plan.md written, a registry line
# appended), the branch head moved by a commit in the worktree (stat'ed at once, before the
# engine's watch of the refs reports it), the base moved under the branch without any change of
# the store (a fast-forward of main: the merge base moves, change.diff empties). The clock:
# view-sizes-running.sh.
. "$(dirname "$0")/../lib.sh"
std_item
wt=$STORE/worktrees/fix-1
VIEWS="$d/status $d/status.json $d/validation/evidence.md $d/validation/junit.xml $d/report.html
$d/change.diff"

# same_size WHAT : stat's size of each view is the number of bytes a read gives.
same_size()
{
	local f
	for f in $VIEWS; do
		assert_eq "$(cat "$f" | wc -c)" "$(stat -c %s "$f")" "$1: size of ${f#"$M"/} (stat against read)"
	done
}

# sizes : the sizes stat gives, one line.
sizes()
{
	# shellcheck disable=SC2086
	stat -c %s $VIEWS | tr '\n' ' '
}

same_size "new item"
before=$(sizes)

# The store: plan.md names recipes (evidence.md lists them, status counts them).
printf '# Plan\n\n```validation-recipes\n01-build\n02-lint\n```\n' >"$d/plan.md"
same_size "plan.md written"
[ "$(sizes)" != "$before" ] || fail "no view changed size when plan.md named recipes: $(sizes)"

before=$(sizes)
echo '{"recipe":"01-build","status":"validated","note":"by hand"}' >>"$d/validation/registry.jsonl"
same_size "registry line appended"
[ "$(sizes)" != "$before" ] || fail "no view changed size when a registry line came: $(sizes)"

# The head: a commit in the worktree, stat'ed before the watch of the refs (20 ms) reports it.
before=$(stat -c %s "$d/change.diff")
sed -i 's/old world/new world, and more/' "$wt/hello.c"
git -C "$wt" commit -q -am "hand commit"
same_size "hand commit"
[ "$(stat -c %s "$d/change.diff")" != "$before" ] || fail "change.diff kept its size after a commit"
wait_for grep -q '"head_moved"' "$d/events"
same_size "hand commit reported"

# The base: main fast-forwarded to the branch, which moves the merge base and nothing in the
# store: change.diff is empty now.
sizes >/dev/null
git -C "$REPO" merge -q --ff-only packetfs/fix-1
same_size "base moved"
assert_eq 0 "$(stat -c %s "$d/change.diff")" "size of change.diff with the branch merged"

exit 0
