#!/usr/bin/env bash
# A lookup that finds nothing in an item's directory, its document directories, stages/,
# validation/ or validation/logs/ is kept by the kernel as a negative entry (fs/fs_cache.c
# "Negative entries"): a compiler probing its include path asks the daemon once per name. Every
# name that comes to be there must still be found at once: made through the mount in each way a
# name can be (create, O_EXCL, mkdir, rename, link, symlink, mknod), and made by the engine on its
# own (stage logs, change-validation.md), also while another process probes the name in a loop.
# Where the kernel has the fuse tracepoints, also checked: a second probe sends no lookup, nor a
# probe below a directory found missing, and the root (whose listing the engine changes
# unreported) keeps nothing.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/lib_trace.sh"
export GATE_DIR=$T/gates # inherited by the daemon, and so by its recipes
mkdir -p "$GATE_DIR"
pipeline_item "$(plan_stage 09-gated)" "$(validate_stage)"
mkdir -p "$d/src/include"

# missing PATH... : each PATH is found missing (and so, where allowed, kept missing by the kernel).
missing()
{
	local p
	for p in "$@"; do
		[ ! -e "$p" ] || fail "$p exists before it was made"
	done
}
# found PATH... : each PATH is found now, with no waiting.
found()
{
	local p
	for p in "$@"; do
		[ -e "$p" ] || [ -L "$p" ] || fail "$p is not found though it was made: a negative entry outlived it"
	done
}

# unasked PATH... : probing each PATH sends no lookup (the kernel keeps it missing).
unasked()
{
	[ "$(requests_to "$M" FUSE_LOOKUP missing "$@")" = 0 ]
}
# kept PATH... : each PATH is found missing and, where requests can be counted, kept missing by
# the kernel (a lookup made while the engine reports changes is not kept: probed until it is).
kept()
{
	missing "$@"
	[ -z "$TRACING" ] || wait_for unasked "$@"
}
TRACING=$(requests_to "$M" FUSE_LOOKUP true)

# 1. What the kernel keeps, counted.
inc=$d/src/include
missing "$inc/stdio.h" "$inc/bits/types.h"
n=$(requests_to "$M" FUSE_LOOKUP missing "$inc/stdio.h" "$inc/bits/types.h" "$inc/bits/other.h")
if [ -n "$n" ]; then
	assert_eq 0 "$n" "lookups for names found missing before (and one below a missing directory)"
	assert_eq 1 "$(requests_to "$M" FUSE_LOOKUP missing "$inc/never-seen.h")" \
		"lookups for a name not probed before"
	missing "$M/no-such-item"
	assert_eq 1 "$(requests_to "$M" FUSE_LOOKUP missing "$M/no-such-item")" \
		"lookups for a missing item, probed twice (the root keeps no negative entry)"
	missing "$d/.history/no-such.md"
	assert_eq 1 "$(requests_to "$M" FUSE_LOOKUP missing "$d/.history/no-such.md")" \
		"lookups in .history/, probed twice (its listing grows unreported)"
else
	echo "note: no fuse tracepoints in this kernel; the request counts are not checked"
fi

# 2. Made through the mount, each name found missing first.
missing "$inc/stdio.h" "$inc/excl.h" "$inc/bits" "$inc/moved.h" "$inc/linked.h" "$inc/sym.h" \
	"$inc/fifo" "$d/top.md" "$d/validation/extra.md" "$d/later"
printf 'int x;\n' >"$inc/stdio.h"
python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))' \
	"$inc/excl.h" || fail "O_EXCL create of a name found missing failed"
mkdir "$inc/bits"
printf 'a\n' >"$T/a.h"
printf 'b\n' >"$inc/tmp.h"
mv "$inc/tmp.h" "$inc/moved.h"
ln "$inc/stdio.h" "$inc/linked.h"
ln -s stdio.h "$inc/sym.h"
mkfifo "$inc/fifo"
printf 'top\n' >"$d/top.md"
printf 'extra\n' >"$d/validation/extra.md"
mkdir "$d/later"
found "$inc/stdio.h" "$inc/excl.h" "$inc/bits" "$inc/moved.h" "$inc/linked.h" "$inc/sym.h" \
	"$inc/fifo" "$d/top.md" "$d/validation/extra.md" "$d/later"
missing "$inc/bits/types.h"
printf 'typedef int t;\n' >"$inc/bits/types.h"
found "$inc/bits/types.h"
assert_eq "int x;" "$(cat "$inc/linked.h")" "the link made over a negative entry"
# Removed, then found missing again, then made again.
rm "$inc/moved.h"
missing "$inc/moved.h"
printf 'again\n' >"$inc/moved.h"
assert_eq again "$(cat "$inc/moved.h")" "a name made again after its removal"

# 3. Made by the engine on its own. The plan stage's log is stages/1-plan.log, the validate
# stage's stages/2-validate.log; change-validation.md is written when validate ends. Each is
# probed before it exists, then looked for once the item is past the step that made it: the
# engine reported the file long before that, so it must be found with no waiting.
kept "$d/stages/1-plan.log" "$d/stages/2-validate.log" "$d/change-validation.md"
# A prober that looks for the plan's log in a loop while the engine makes it: its lookups race
# with the engine's report.
(
	end=$(($(date +%s) + WAIT_BOUND))
	until [ -e "$d/stages/1-plan.log" ] || [ "$(date +%s)" -ge "$end" ]; do :; done
) &
prober=$!
command -v sqlite3 >/dev/null || exit 77
# recipe_started : the store has the gated recipe's run (so plan has ended and validate began).
recipe_started()
{
	[ -n "$(sqlite3 "file:$STORE/packetfs.db?mode=ro" "SELECT 1 FROM runs WHERE name = '09-gated'")" ]
}
ctl "$M" fix-1 advance
wait_for recipe_started
found "$d/stages/1-plan.log" "$d/stages/2-validate.log"
wait "$prober"
kept "$d/change-validation.md"
touch "$GATE_DIR/go-1" "$GATE_DIR/go-2" "$GATE_DIR/go-3"
wait_state "$M" fix-1 done
found "$d/change-validation.md"
grep -q '^# Change validation' "$d/change-validation.md" || fail "change-validation.md unreadable"
exit 0
