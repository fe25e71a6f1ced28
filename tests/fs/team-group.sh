#!/usr/bin/env bash
# Who a shared mount lets in (SPEC §3): with -o allow_other, root, the store owner and the
# members of the store's group (the group of the store directory): A (the group is A's primary
# group) and D (a group of its own, in the store's group besides) list the root, read a
# world-readable document and write ctl; C, in no such group, gets EACCES on everything: a
# listing and a stat of the root, a world-readable document, ctl, a new item. E, whom the group
# database does not list, is let in by the groups of its process (setpriv --groups). D removed
# from the group is refused within the membership's short lifetime. Without allow_other only
# the mounting user gets in: the kernel refuses A.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
make_repo
make_group TEAM
make_user A "$TEAM"
make_user D "" "$TEAM"
make_user C
make_user E
team_store "$TEAM"

# Without allow_other: the mounting user (root) alone.
mount_store "$TEAM_DIR/plain"
run_as "$A" ls -d "$TEAM_DIR" >/dev/null || fail "A cannot reach $TEAM_DIR"
assert_fails_with EACCES run_as "$A" ls "$M"
umount_store

mount_team
run_as "$A" sh -c "umask 022 && mkdir '$M/fix-1' && printf 'for all\n' > '$M/fix-1/open.md'" ||
	fail "A cannot make an item"
d=$M/fix-1
assert_eq 644 "$(stat -c %a "$d/open.md")" "mode of open.md"

# C, outside the store's group: refused whatever the modes say.
assert_fails_with EACCES run_as "$C" ls "$M"
assert_fails_with EACCES run_as "$C" stat "$M"
assert_fails_with EACCES run_as "$C" cat "$d/open.md"
assert_fails_with EACCES run_as "$C" cat "$M/events"
assert_fails_with EACCES run_as "$C" sh -c "echo hold > '$d/ctl'"
assert_fails_with EACCES run_as "$C" mkdir "$M/fix-c"
[ -e "$M/fix-c" ] && fail "C made an item"

# Members: A by its primary group, D by a supplementary one.
for u in "$A" "$D"; do
	run_as "$u" ls "$M" | grep -qx fix-1 || fail "$u cannot list the root"
	assert_eq "for all" "$(run_as "$u" cat "$d/open.md")" "$u reads open.md"
	run_as "$u" sh -c "echo hold > '$d/ctl'" || fail "$u cannot write ctl"
done

# E is no member by the database; a process of E's with the group is let in.
assert_fails_with EACCES run_as "$E" cat "$d/open.md"
if command -v setpriv >/dev/null 2>&1; then
	out=$(cd / && setpriv --reuid="$E" --regid="$E" --groups="$TEAM" cat "$d/open.md" 2>&1) ||
		fail "E with the store's group in its process is refused: $out"
	assert_eq "for all" "$out" "E (setpriv --groups) reads open.md"
else
	note "setpriv is missing: E with the group in its process not tried"
fi

# D leaves the group: refused once the membership the daemon keeps (seconds) runs out.
gpasswd -d "$D" "$TEAM" >/dev/null || fail "gpasswd -d $D $TEAM failed"
refused()
{
	! run_as "$D" cat "$d/open.md" >/dev/null 2>&1
}
wait_for refused
assert_fails_with EACCES run_as "$D" ls "$M"
run_as "$A" cat "$d/open.md" >/dev/null || fail "A refused after D left"
exit 0
