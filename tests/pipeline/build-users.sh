#!/usr/bin/env bash
# test-timeout: 240
# The shipped recipes/01-build keeps its build output private to the user who runs it: two users
# (real ones, made with useradd), each in a worktree of their own, both build, a Makefile project
# and a Meson project, one after the other and then at once; the output lies in each worktree's
# .packetfs-build/ (ignored by git: the worktree still equals its head), owned by that user.
# The recipe never touches $TMPDIR: the first builds leave a shared one empty (the recipe used to
# make $TMPDIR/packetfs-build there, the first user's, on whose lock files the second user's
# build failed), and a packetfs-build a third user made there beforehand changes nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
for tool in make cc git meson ninja; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed" >&2; exit 77; }
done
make_user A
make_user B
make_user C

# Two shared temporary directories, as /tmp is (sticky, open to all): TMP1 empty, TMP2 one in
# which the third user has made packetfs-build first (0755, theirs) with a symlink in it.
TMP1=$TEAM_DIR/tmp1
TMP2=$TEAM_DIR/tmp2
mkdir -m 1777 "$TMP1" "$TMP2"
mkdir -m 0755 "$TMP2/packetfs-build"
ln -s /dev/null "$TMP2/packetfs-build/trap.lock"
chown -h -R "$C:$C" "$TMP2/packetfs-build"
# list DIR : what lies below DIR, with owners, modes and link targets.
list()
{
	(cd "$1" && find . -mindepth 1 -printf '%p %u %m %l\n' | sort)
}
tmp2_before=$(list "$TMP2")

# A project repository in $T: KIND is make or meson.
make_project()
{
	local dir=$T/proj-$1
	mkdir -p "$dir"
	printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$dir/hello.c"
	if [ "$1" = make ]; then
		printf 'hello: hello.c\n\t$(CC) -o $@ hello.c\n' >"$dir/Makefile"
	else
		printf "project('hello', 'c')\nexecutable('hello', 'hello.c')\n" >"$dir/meson.build"
	fi
	git -C "$dir" init -q -b main
	git -C "$dir" add -A
	git -C "$dir" commit -q -m "hello ($1)"
}
make_project make
make_project meson

# Each user's worktrees, theirs, in a directory of their own.
for u in "$A" "$B"; do
	mkdir -m 0700 "$TEAM_DIR/$u"
	for kind in make meson; do
		git clone -q "$T/proj-$kind" "$TEAM_DIR/$u/$kind"
	done
	chown -R "$u:$u" "$TEAM_DIR/$u"
done

# build TMPDIR USER KIND : runs the shipped 01-build as USER in USER's worktree of KIND, as the
# engine would (cwd the worktree, PACKET_ITEM set), with TMPDIR given; its output in
# $T/build-USER-KIND.log, its exit status returned.
build()
{
	local rc=0 tmp=$1
	shift
	run_as "$1" env TMPDIR="$tmp" PACKET_ITEM=fix-1 RECIPE_NAME=01-build \
		bash -c 'cd "$1" && exec "$2"' build "$TEAM_DIR/$1/$2" "$ROOT/recipes/01-build.sh" \
		>"$T/build-$1-$2.log" 2>&1 || rc=$?
	return $rc
}

# built USER KIND : the build of USER's worktree of KIND succeeded, its output lies in the
# worktree's .packetfs-build/01-build, owned by USER, and git sees nothing new.
built()
{
	local u=$1 kind=$2 wt=$TEAM_DIR/$1/$2 exe
	assert_contains "$(cat "$T/build-$u-$kind.log")" "01-build: validated ($kind build in" \
		"01-build of $u's $kind worktree"
	if [ "$kind" = make ]; then
		exe=$wt/.packetfs-build/01-build/src/hello
	else
		exe=$wt/.packetfs-build/01-build/hello
	fi
	[ -x "$exe" ] || fail "$u's $kind build made no $exe: $(cat "$T/build-$u-$kind.log")"
	assert_eq "$u" "$(stat -c %U "$exe")" "owner of $u's $kind build output"
	assert_eq "hello" "$(run_as "$u" "$exe")" "the program $u built ($kind)"
	assert_eq "" "$(run_as "$u" git -C "$wt" status --porcelain)" \
		"git status of $u's $kind worktree after the build"
	[ ! -e "$wt/.packetfs-build/01-build/src/.packetfs-build" ] ||
		fail "the copy of $u's $kind worktree holds .packetfs-build"
}

# One after the other: the first user's build does not stand in the second's way.
for kind in make meson; do
	for u in "$A" "$B"; do
		build "$TMP1" "$u" "$kind" || fail "01-build as $u ($kind) exited $?: $(cat "$T/build-$u-$kind.log")"
	done
	built "$A" "$kind"
	built "$B" "$kind"
done

# At once, from scratch, beside the third user's packetfs-build.
for kind in make meson; do
	run_as "$A" rm -rf "$TEAM_DIR/$A/$kind/.packetfs-build/01-build"
	run_as "$B" rm -rf "$TEAM_DIR/$B/$kind/.packetfs-build/01-build"
	pids=()
	for u in "$A" "$B"; do
		build "$TMP2" "$u" "$kind" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "01-build at once ($kind) exited $?: $(cat "$T"/build-*-"$kind".log)"
	done
	built "$A" "$kind"
	built "$B" "$kind"
done

# Nothing of the builds went to the shared directories: the first is empty, the third user's
# packetfs-build in the second is as they made it.
assert_eq "" "$(list "$TMP1")" "the first shared temporary directory after the builds"
assert_eq "$tmp2_before" "$(list "$TMP2")" "the second shared temporary directory after the builds"
exit 0
