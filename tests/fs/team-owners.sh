#!/usr/bin/env bash
# A team on one mount (SPEC §3), owners and modes: with -o allow_other, users A and B (the
# store's group is their primary group) and A also in group OTHER. A makes an item and a
# document with mode 0640: both are A's, in A's group; B reads the document and cannot write
# it (EACCES), but writes A's 0660 document, edits it with vim (which keeps its owner), and
# advances the item through ctl (0664, the store's group). chown/chgrp follow POSIX: A cannot
# give a document away nor B change the group of A's (EPERM), A changes the group to OTHER but
# not to root's, the change clears a set-user-ID bit; root gives a document away, after which
# its new owner writes it. The root is sticky: only an item's owner removes (archives) it. A set-group-ID directory hands its group (and the bit, to a new
# directory) down. Owners and modes survive a remount, and `packetfs log` shows each writer's
# uid. The views and the root keep the store owner with their fixed modes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
make_repo
pipeline_with "$T/pipeline.json" "$(plan_stage 02-lint)" "$(print_stage)"
make_group TEAM
make_group OTHER
make_user A "$TEAM" "$OTHER"
make_user B "$TEAM"
team_store "$TEAM" "$T/pipeline.json"
mount_team
uid_a=$(id -u "$A")
uid_b=$(id -u "$B")

# The root and the views: the store owner (root here) and the store's group.
assert_eq "root:$TEAM 1775" "$(owner_of "$M")" "owner of the root"
assert_eq "root:$TEAM 2775" "$(owner_of "$M/learnings")" "owner of learnings/"

# A makes an item and documents.
run_as "$A" sh -c "umask 022 && mkdir '$M/fix-1'" || fail "A cannot make an item"
d=$M/fix-1
assert_eq "$A:$TEAM 755" "$(owner_of "$d")" "owner of A's item"
assert_eq "root:$TEAM 664" "$(owner_of "$d/ctl")" "owner of ctl"
assert_eq "root:$TEAM 444" "$(owner_of "$d/status")" "owner of status"
assert_eq "root:$TEAM 775" "$(owner_of "$d/validation")" "owner of validation/"
run_as "$A" sh -c "umask 027 && printf 'private\n' > '$d/private.md'" || fail "A cannot write"
run_as "$A" sh -c "umask 007 && printf 'shared\n' > '$d/shared.md'" || fail "A cannot write"
assert_eq "$A:$TEAM 640" "$(owner_of "$d/private.md")" "owner of A's 0640 document"
assert_eq "$A:$TEAM 660" "$(owner_of "$d/shared.md")" "owner of A's 0660 document"

# B: read but not write the 0640 one; write the 0660 one.
assert_eq private "$(run_as "$B" cat "$d/private.md")" "B reads A's 0640 document"
assert_fails_with EACCES run_as "$B" sh -c "printf x >> '$d/private.md'"
assert_fails_with EACCES run_as "$B" sh -c "printf x > '$d/mine.md'" # A's item is 0755
assert_doc "$d/private.md" $'private\n'
run_as "$B" sh -c "printf 'and B\n' >> '$d/shared.md'" || fail "B cannot append to a 0660 document"
assert_doc "$d/shared.md" $'shared\nand B\n'
assert_eq "$A:$TEAM 660" "$(owner_of "$d/shared.md")" "owner after B's write"

# vim as B (its swap file and backups cannot go in A's item: in place, the owner kept).
run_as "$B" timeout 60 vim -u NONE -N -i NONE -n -es -c '%s/shared/edited by vim/' -c wq \
	"$d/shared.md" </dev/null || fail "vim as B failed"
assert_doc "$d/shared.md" $'edited by vim\nand B\n'
assert_eq "$A:$TEAM 660" "$(owner_of "$d/shared.md")" "owner after vim as B"

# B advances A's item through ctl (held, so that the plan stage alone runs).
run_as "$A" sh -c "echo hold > '$d/ctl'" || fail "A cannot write ctl"
run_as "$B" sh -c "echo advance > '$d/ctl'" || fail "B cannot advance through ctl"
settled()
{
	[ -e "$d/plan.md" ] || return 1
	case "$(status_field "$M" fix-1 state)" in
	running | queued | new) return 1 ;;
	esac
}
wait_for settled
assert_eq plan "$(status_field "$M" fix-1 stage)" "stage after B's advance"

# chown and chgrp.
assert_fails_with EPERM run_as "$A" chown "$B" "$d/private.md"
assert_fails_with EPERM run_as "$B" chgrp "$TEAM" "$d/private.md" # not B's
assert_fails_with EPERM run_as "$A" chgrp root "$d/private.md"   # A is not in root
run_as "$A" chgrp "$OTHER" "$d/private.md" || fail "A cannot change the group to its own"
assert_eq "$A:$OTHER 640" "$(owner_of "$d/private.md")" "after chgrp by A"
assert_fails_with EACCES run_as "$B" cat "$d/private.md" # B is not in OTHER
run_as "$A" chmod 4750 "$d/private.md" || fail "A cannot chmod its document"
run_as "$A" chgrp "$TEAM" "$d/private.md" || fail "A cannot change the group back"
assert_eq "$A:$TEAM 750" "$(owner_of "$d/private.md")" "set-user-ID bit after chgrp by A"
chmod 0640 "$d/private.md"
chown "$B" "$d/private.md" || fail "root cannot give a document away"
assert_eq "$B:$TEAM 640" "$(owner_of "$d/private.md")" "after chown by root"
run_as "$B" sh -c "printf 'now B\n' > '$d/private.md'" || fail "B cannot write its document"
assert_fails_with EACCES run_as "$A" sh -c "printf x >> '$d/private.md'"
assert_fails_with EPERM run_as "$A" chown "$A" "$d/ctl"
chown "$A" "$d/ctl" 2>/dev/null && fail "root gave ctl away"
chmod 2775 "$d" # root may; the item is A's to share
run_as "$B" sh -c "printf x > '$d/mine.md'" || fail "B cannot write in a group-writable item"
assert_eq "$B:$TEAM" "$(stat -c %U:%G "$d/mine.md")" "owner of B's document in A's item"

# A set-group-ID directory: its group to new entries, its bit to new directories.
run_as "$A" sh -c "umask 022 && mkdir '$d/sub' && chgrp '$OTHER' '$d/sub' && chmod 2775 '$d/sub' &&
	printf y > '$d/sub/y.md' && mkdir '$d/sub/deeper'" || fail "A cannot make sub/"
assert_eq "$A:$OTHER 644" "$(owner_of "$d/sub/y.md")" "group of a document in a set-group-ID directory"
assert_eq "$A:$OTHER 2755" "$(owner_of "$d/sub/deeper")" "a directory in a set-group-ID directory"
run_as "$A" sh -c "umask 022 && printf z > '$M/learnings/z.md'" || fail "A cannot write learnings"
assert_eq "$A:$TEAM 644" "$(owner_of "$M/learnings/z.md")" "a learning of A's"

# The root is sticky: B cannot remove (archive) A's item, A can.
run_as "$B" mkdir "$M/fix-b" || fail "B cannot make an item"
assert_fails_with EPERM run_as "$B" rmdir "$d"
assert_fails_with EPERM run_as "$A" rmdir "$M/fix-b"
run_as "$B" rmdir "$M/fix-b" || fail "B cannot archive its item"
[ -d "$M/.archive/fix-b" ] || fail "fix-b is not archived"

# Owners and modes survive a remount.
umount_store
mount_team
d=$M/fix-1
assert_eq "$A:$TEAM 2775" "$(owner_of "$d")" "owner of the item after remount"
assert_eq "$B:$TEAM 640" "$(owner_of "$d/private.md")" "private.md after remount"
assert_eq "$A:$TEAM 660" "$(owner_of "$d/shared.md")" "shared.md after remount"
assert_eq "$A:$OTHER 2775" "$(owner_of "$d/sub")" "sub/ after remount"
assert_eq "$A:$OTHER 2755" "$(owner_of "$d/sub/deeper")" "sub/deeper after remount"
assert_eq "$A:$TEAM 644" "$(owner_of "$M/learnings/z.md")" "learnings/z.md after remount"

# packetfs log: each revision with its writer's uid.
log=$("$PFS" log "$STORE" fix-1) || fail "packetfs log failed: $log"
writer()
{
	printf '%s\n' "$log" | grep -E "[[:space:]]$1@$2[[:space:]]" | grep -Eo 'uid=[0-9]+' ||
		fail "no revision $1@$2 in: $log"
}
assert_eq "uid=$uid_a" "$(writer private.md 1)" "writer of private.md@1"
assert_eq "uid=$uid_a" "$(writer shared.md 1)" "writer of shared.md@1"
assert_eq "uid=$uid_b" "$(writer shared.md 2)" "writer of shared.md@2 (B's append)"
assert_eq "uid=$uid_b" "$(writer shared.md 3)" "writer of shared.md@3 (vim as B)"
assert_eq "uid=$uid_b" "$(writer private.md 2)" "writer of private.md@2"
assert_eq "uid=$uid_b" "$(writer mine.md 1)" "writer of mine.md@1"
exit 0
