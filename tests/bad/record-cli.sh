#!/usr/bin/env bash
# `packetfs record` refuses what it cannot send: usage errors exit 2 with the usage line
# (no RECIPE, no '--' or no command after it, a bad --gpus or --timeout, an unknown option);
# an unknown recipe, outside an item directory (also inside the item's worktree, unless
# PACKET_DIR names the item) and for an archived item it exits 1 saying why; nothing runs.
. "$(dirname "$0")/../lib.sh"
mount_item

# record_fails STATUS TEXT ARG... : packetfs record ARG... exits STATUS, saying TEXT on stderr and
# printing nothing on stdout.
record_fails()
{
	local want=$1 text=$2 rc=0 out err
	shift 2
	out=$("$PFS" record "$@" 2>"$T/err" </dev/null) || rc=$?
	err=$(cat "$T/err")
	[ "$rc" = "$want" ] || fail "packetfs record $* exited $rc, expected $want: $err"
	assert_eq "" "$out" "stdout of packetfs record $*"
	assert_contains "$err" "$text" "stderr of packetfs record $*"
}

cd "$d"
record_fails 2 "missing RECIPE" -- make
record_fails 2 "missing '--' and the command after it" 01-build make
record_fails 2 "no command after '--'" 01-build --
record_fails 2 "no command after '--'" 01-build -- ""
record_fails 2 "too many arguments before '--'" 01-build make -- make
record_fails 2 "--gpus: not a whole number" 01-build --gpus two -- make
record_fails 2 "--gpus: not a whole number" 01-build --gpus -1 -- make
record_fails 2 "--timeout: not a whole number" 01-build --timeout 1.5 -- make
record_fails 2 "unknown option '--verbose'" 01-build --verbose -- make
record_fails 2 "usage: packetfs record [-C ITEM_DIR] RECIPE" 01-build -- 
"$PFS" record --help | grep -q '^usage: packetfs record ' || fail "packetfs record --help"
"$PFS" help record | grep -q -- '--timeout S' || fail "packetfs help record"
"$PFS" --help | grep -q '^  record ' || fail "packetfs --help does not list record"

# Refused by the engine: an unknown recipe.
record_fails 1 "packetfs: record: 09-no-such: no recipe '09-no-such' in the catalog" \
	09-no-such -- true
assert_contains "$(cat "$d/validation/record")" "error: EINVAL: no recipe '09-no-such'" \
	"fix-1's record file after an unknown recipe"

# Not inside an item directory: the mount's root, a scratch directory, the item's worktree.
for where in "$M" "$T" "$STORE/worktrees/fix-1"; do
	cd "$where"
	record_fails 1 "packetfs: record: not inside an item directory (use -C ITEM_DIR)" \
		01-build -- true
done
record_fails 1 "$T: not an item directory of a packetfs mount" -C "$T" 01-build -- true
record_fails 1 "no-such: No such file or directory" -C no-such 01-build -- true
# PACKET_DIR naming something else is no item either.
PACKET_DIR=$T record_fails 1 "not inside an item directory" 01-build -- true

# An archived item takes no runs.
new_item fix-2
rmdir "$M/fix-2"
wait_for test -d "$M/.archive/fix-2"
record_fails 1 "$M/.archive/fix-2: the item is archived: it takes no recorded runs" \
	-C "$M/.archive/fix-2" 01-build -- true
cd "$M/.archive/fix-2"
record_fails 1 "the item is archived" 01-build -- true
cd /

assert_eq "" "$(ls "$d/validation/logs")" "logs after refused record commands"
assert_eq 0 "$(wc -c <"$d/validation/registry.jsonl")" "registry after refused record commands"
exit 0
