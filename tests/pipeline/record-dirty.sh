#!/usr/bin/env bash
# A recorded run starts only on a worktree that holds exactly its head commit (SPEC §5): with an
# untracked file, a modified tracked file or a staged one it is blocked without running, its
# note naming the paths, and packetfs record exits 1 naming them too. Files git ignores do not
# count. Once the changes are committed, the same record validates at the new head.
. "$(dirname "$0")/../lib.sh"
std_item 01-build
wt=$STORE/worktrees/fix-1
head=$(worktree_head fix-1)

# record_marker NAME : packetfs record of a command that leaves $T/ran-NAME, from the item
# directory; sets RC, OUT and ERR.
record_marker()
{
	RC=0
	(cd "$d" && exec "$PFS" record 01-build -- sh -c 'echo ran; touch "$1"' sh "$T/ran-$1") \
		>"$T/out" 2>"$T/err" </dev/null || RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# blocked NAME PATHS... : the record of NAME was blocked without running, naming the PATHS.
blocked()
{
	local name=$1 n=$(($# - 1)) p
	shift
	assert_eq 1 "$RC" "exit status of packetfs record on a worktree with $* ($ERR)"
	assert_eq "" "$OUT" "stdout of a blocked run ($name)"
	[ ! -e "$T/ran-$name" ] || fail "the command ran on a worktree with $*"
	assert_eq blocked "$(reg field "$r" -1 status)" "status ($name)"
	assert_eq engine "$(reg field "$r" -1 source)" "source ($name)"
	assert_eq null "$(reg field "$r" -1 exit_code)" "exit_code ($name)"
	assert_eq "$head" "$(reg field "$r" -1 head)" "head ($name)"
	note=$(reg field "$r" -1 note)
	assert_contains "$note" "the worktree differs from its head ${head:0:12}: $n uncommitted:" "note ($name)"
	assert_contains "$ERR" "packetfs: record: 01-build: blocked: the worktree differs from its head ${head:0:12}: $n uncommitted:" \
		"stderr ($name)"
	for p in "$@"; do
		assert_contains "$note" " $p" "note ($name)"
		assert_contains "$ERR" " $p" "stderr ($name)"
	done
	assert_contains "$(cat "$d/validation/record")" "status: blocked" "answer ($name)"
}

# An untracked file.
echo "scratch" >"$wt/notes.txt"
record_marker untracked
blocked untracked notes.txt
# A modified tracked file (the untracked one gone).
rm "$wt/notes.txt"
echo "more" >>"$wt/README.md"
record_marker modified
blocked modified README.md
# Both, and a staged new file.
echo "scratch" >"$wt/notes.txt"
echo "#define X 1" >"$wt/x.h"
git -C "$wt" add x.h
record_marker all
blocked all README.md notes.txt x.h
assert_eq 3 "$(reg count "$r" status=blocked)" "blocked lines"
assert_eq "$head" "$(worktree_head fix-1)" "the worktree's head after blocked runs"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# Committed: the same record validates, at the new head; an ignored file does not count.
git -C "$wt" add -A
git -C "$wt" commit -q -m "notes, x.h and more README"
new=$(worktree_head fix-1)
[ "$new" != "$head" ] || fail "the commit did not move the head"
echo "an object" >"$wt/hello"
record_marker clean
assert_eq 0 "$RC" "exit status of packetfs record on a clean worktree ($ERR)"
assert_eq ran "$OUT" "stdout of the run on a clean worktree"
[ -e "$T/ran-clean" ] || fail "the command did not run on a clean worktree"
assert_eq validated "$(reg field "$r" -1 status)" "status on a clean worktree"
assert_eq "$new" "$(reg field "$r" -1 head)" "head of the run on a clean worktree"
assert_eq "sh -c 'echo ran; touch \"\$1\"' sh $T/ran-clean" "$(reg field "$r" -1 command)" \
	"command of the run on a clean worktree"
assert_contains "$(cat "$d/$(reg field "$r" -1 evidence)")" "# head: $new" "the log's header"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
exit 0
