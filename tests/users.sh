# tests/users.sh - real users and groups for the tests of a shared mount (tests/fs/team-*.sh),
# made by the test and removed at its end. Source it after tests/lib.sh:
#
#	. "$(dirname "$0")/../lib.sh"
#	. "$(dirname "$0")/../users.sh"
#	need_users                      # skips the test (exit 77) unless it can make users
#	make_group TEAM                 # TEAM=<a new group's name>
#	make_user ALICE "$TEAM"         # ALICE=<a new user whose primary group is $TEAM>
#	make_user DAVE "" "$TEAM"       # a user with a group of its own, in $TEAM besides
#	team_store "$TEAM"              # make_store, with the store directory in group $TEAM
#	mount_team                      # mount_store with -o allow_other, on $TEAM_DIR/mnt
#	run_as "$ALICE" mkdir "$M/fix-1"  # a command as that user (runuser), from /
#
# Names are pfs<pid><letter>, so that tests running at once on one machine do not meet. The
# test's EXIT trap (lib.sh's cleanup: mounts undone, processes under $T ended) then removes
# every user and group made here. Other users cannot reach into $T (nor into the directory
# tests/run.sh makes it in), so mount points they use lie in TEAM_DIR, a directory of /tmp
# open to them (0711), removed with $T (EXTRA_DIRS).

TEAM_USERS=()
TEAM_GROUPS=()
TEAM_SEQ=0

# need_users : ends the test as skipped (77) with the reason unless it runs as root with
# useradd, userdel, groupadd, groupdel, gpasswd and runuser.
need_users()
{
	local c
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make users" >&2; exit 77; }
	for c in useradd userdel groupadd groupdel gpasswd runuser; do
		command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c is missing" >&2; exit 77; }
	done
	TEAM_DIR=$(mktemp -d /tmp/packetfs-team.XXXXXX)
	EXTRA_DIRS+=("$TEAM_DIR")
	chmod 0711 "$TEAM_DIR"
}

users_cleanup()
{
	local u g
	for u in "${TEAM_USERS[@]}"; do
		userdel "$u" >/dev/null 2>&1 || true
		# A user's own group (useradd -U) goes with it; make sure.
		groupdel "$u" >/dev/null 2>&1 || true
	done
	for g in "${TEAM_GROUPS[@]}"; do
		groupdel "$g" >/dev/null 2>&1 || true
	done
}
trap 'rc=$?; trap - EXIT; cleanup $rc; users_cleanup; exit $rc' EXIT

# team_name : a new name (pfs<pid><letter>) in TEAM_NAME.
team_name()
{
	local letters=abcdefghijklmnopqrstuvwxyz
	TEAM_NAME=pfs$$${letters:$TEAM_SEQ:1}
	TEAM_SEQ=$((TEAM_SEQ + 1))
}

# make_group VAR : a new group; its name in VAR.
make_group()
{
	team_name
	TEAM_GROUPS+=("$TEAM_NAME")
	groupadd "$TEAM_NAME" || fail "groupadd $TEAM_NAME failed"
	printf -v "$1" '%s' "$TEAM_NAME"
}

# make_user VAR [PRIMARY_GROUP] [GROUP,...] : a new user without a home directory, whose primary
# group is PRIMARY_GROUP (empty: a new group of its own name) and who is in the GROUPs besides;
# its name in VAR.
make_user()
{
	local -a opts=(-M -s /bin/sh)
	team_name
	if [ -n "${2:-}" ]; then
		opts+=(-N -g "$2")
	else
		opts+=(-U)
	fi
	[ -z "${3:-}" ] || opts+=(-G "$3")
	TEAM_USERS+=("$TEAM_NAME")
	useradd "${opts[@]}" "$TEAM_NAME" || fail "useradd $TEAM_NAME failed"
	printf -v "$1" '%s' "$TEAM_NAME"
}

# run_as USER CMD... : runs CMD as USER (its groups from the group database), in /, with HOME=/.
run_as()
{
	local u=$1
	shift
	(cd / && HOME=/ runuser -u "$u" -- "$@")
}

# run_as_user : for a pipeline whose programs run as another user ("run_as"): a new group TEAM,
# a new user U in it, and a repository of theirs in TEAM_DIR (make_repo "$TEAM_DIR/repo", then
# owned by U and TEAM: its git, as U, adds objects and moves the branch). Sets TEAM, U and REPO.
run_as_user()
{
	make_group TEAM
	make_user U "$TEAM"
	make_repo "$TEAM_DIR/repo"
	chown -R "$U:$TEAM" "$TEAM_DIR/repo"
}

# team_store GROUP [PIPELINE_FILE] : make_store, then the store directory goes to GROUP: the
# store's group, whose members the mount lets in.
team_store()
{
	local group=$1
	shift
	make_store "$@"
	chgrp "$group" "$STORE" || fail "chgrp $group $STORE failed"
}

# mount_team [MNT] [STORE] : mount_store with -o allow_other (the daemon runs as root, so
# /etc/fuse.conf need not allow it), on $TEAM_DIR/mnt by default. Sets M and DAEMON.
mount_team()
{
	MOUNT_OPTS=allow_other mount_store "${1:-$TEAM_DIR/mnt}" "${2:-$STORE}"
}

# owner_of PATH : "user:group mode" of PATH as stat shows it (names, octal mode).
owner_of()
{
	stat -c '%U:%G %a' "$1"
}
