#!/usr/bin/env bash
# A lookup that finds nothing in a document directory below an item's own is kept by the kernel
# as a negative entry (fs/fs_cache.c "Negative entries"): a compiler probing its include path asks
# the daemon once per name. Every name that comes to be there must still be found: made through
# the mount in each way a name can be (create, O_EXCL, mkdir, rename, link, symlink, mknod), and
# made again by the engine when it refuses an `rm -rf` of the item (found within the notifier's
# pace). Where the engine makes files on its own (the item's directory,
# stages/, validation/) nothing is kept: stage logs and change-validation.md, each probed before
# it exists, are found at once, and a file system mounted over a directory of the item stays
# mounted. Where the kernel has the fuse tracepoints, the requests are
# counted: a second probe in a document directory sends no lookup, nor a probe below a directory
# found missing; elsewhere (the root, the item's directory, stages/, .history/) each probe does.
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
# lookups PATH... : the lookups a probe of each PATH sends (empty without the tracepoints).
lookups()
{
	requests_to "$M" FUSE_LOOKUP missing "$@"
}
# unasked PATH... : probing each PATH sends no lookup.
unasked()
{
	[ "$(lookups "$@")" = 0 ]
}
# kept PATH... : each PATH is found missing and, where requests can be counted, kept missing by
# the kernel (a lookup made while the engine reports a change is not kept: probed until one is).
kept()
{
	missing "$@"
	[ -z "$TRACING" ] || wait_for unasked "$@"
}
TRACING=$(requests_to "$M" FUSE_LOOKUP true)

# 1. What the kernel keeps, counted.
inc=$d/src/include
if [ -n "$TRACING" ]; then
	kept "$inc/stdio.h" "$inc/bits/types.h"
	assert_eq 0 "$(lookups "$inc/stdio.h" "$inc/bits/types.h" "$inc/bits/other.h")" \
		"lookups for names found missing before (and one below a missing directory)"
	assert_eq 1 "$(lookups "$inc/never-seen.h")" "lookups for a name not probed before"
	for p in "$M/no-such-item" "$d/no-such.md" "$d/stages/9-none.log" "$d/validation/no.md" \
		"$d/.history/no-such.md"; do
		missing "$p"
		assert_eq 1 "$(lookups "$p")" "lookups for $p, probed twice (nothing kept there)"
	done
else
	echo "note: no fuse tracepoints in this kernel; the request counts are not checked"
fi

# 2. Made through the mount, each name kept missing first.
kept "$inc/stdio.h" "$inc/excl.h" "$inc/bits" "$inc/moved.h" "$inc/linked.h" "$inc/sym.h" \
	"$inc/fifo"
printf 'int x;\n' >"$inc/stdio.h"
python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))' \
	"$inc/excl.h" || fail "O_EXCL create of a name found missing failed"
mkdir "$inc/bits"
printf 'b\n' >"$inc/tmp.h"
mv "$inc/tmp.h" "$inc/moved.h"
ln "$inc/stdio.h" "$inc/linked.h"
ln -s stdio.h "$inc/sym.h"
mkfifo "$inc/fifo"
found "$inc/stdio.h" "$inc/excl.h" "$inc/bits" "$inc/moved.h" "$inc/linked.h" "$inc/sym.h" \
	"$inc/fifo"
kept "$inc/bits/types.h"
printf 'typedef int t;\n' >"$inc/bits/types.h"
found "$inc/bits/types.h"
assert_eq "int x;" "$(cat "$inc/linked.h")" "the link made over a negative entry"
# Removed, then kept missing, then made again.
rm "$inc/moved.h"
kept "$inc/moved.h"
printf 'again\n' >"$inc/moved.h"
assert_eq again "$(cat "$inc/moved.h")" "a name made again after its removal"

# 3. Made by the engine on its own, where nothing is kept. The plan stage's log is
# stages/1-plan.log, the validate stage's stages/2-validate.log; change-validation.md is written
# when validate ends. Each is probed before it exists, then looked for once the item is past
# the step that made it, with no waiting; a process probes the plan's log in a loop meanwhile.
missing "$d/stages/1-plan.log" "$d/stages/2-validate.log" "$d/change-validation.md"
# A file system mounted over a directory of the item (a sandbox's bind mount) must stay there
# whatever the engine makes: an entry that fails the kernel's revalidation loses its mounts.
mkdir "$d/sandbox"
if mount -t tmpfs tmpfs "$d/sandbox" 2>/dev/null; then
	echo inside >"$d/sandbox/marker"
else
	rmdir "$d/sandbox"
fi
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
if [ -d "$d/sandbox" ]; then
	assert_file_eq "$d/sandbox/marker" $'inside\n'
	umount "$d/sandbox" || fail "the mount over $d/sandbox is gone"
fi

# 4. Made again by the engine: an `rm -rf` of the item while its validate stage runs is
# refused, and what it had removed comes back. A remover that removes src/include/stdio.h, then
# (while another process keeps that name missing) the item's ctl, is refused with EBUSY; the
# document is found within the notifier's pace, and listed (the kernel kept the listing from
# before).
python3 - "$d" "$T/removed" "$T/probed" <<'PY' &
import errno, os, sys, time
d, removed, probed = sys.argv[1:]
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.listdir(d)
os.unlink(os.path.join(d, "src/include/stdio.h"))
open(removed, "w").close()
while not os.path.exists(probed):
    time.sleep(0.01)
try:
    os.unlink(os.path.join(d, "ctl"))
    sys.exit("the removal of a busy item's ctl succeeded")
except OSError as e:
    if e.errno != errno.EBUSY:
        raise
PY
remover=$!
wait_for test -e "$T/removed"
kept "$inc/stdio.h"
ls "$inc" >/dev/null # the kernel keeps this listing too
touch "$T/probed"
wait "$remover" || fail "the refused removal did not end as expected"
wait_for -t 2 test -e "$inc/stdio.h"
# (Listed after: a listing's readdirplus puts what it lists in place of negative entries.)
ls "$inc" | grep -qx stdio.h || fail "src/include/stdio.h, restored, is not listed"
assert_eq "int x;" "$(cat "$inc/stdio.h")" "the restored document"
touch "$GATE_DIR/go-1" "$GATE_DIR/go-2" "$GATE_DIR/go-3"
wait_state "$M" fix-1 done
found "$d/change-validation.md"
grep -q '^# Change validation' "$d/change-validation.md" || fail "change-validation.md unreadable"
exit 0
