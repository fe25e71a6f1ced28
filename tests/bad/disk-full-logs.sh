#!/usr/bin/env bash
# The disk under the store fills while a stage and then a recipe write their logs (SPEC §6,
# §8): the output the store could not take is counted, the stage fails and the recipe run is
# not validated, each saying that the disk was full, and what the logs stored stays readable
# and sealed. Once space is back the stage and the recipe run again to a validated run and a
# verdict pass,
# without a remount, and the store checks clean.
# test-timeout: 300
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../loopfs.sh"

# noisy.sh MARK PRINTED GO : prints a numbered line every 20 ms until MARK exists, then 30
# more, then makes PRINTED and waits for GO.
noisy()
{
	cat <<SH
n=0
say() { n=\$((n + 1)); printf 'noisy line %d\n' "\$n"; sleep 0.02; }
while [ ! -e "$1" ]; do say; done
for i in \$(seq 30); do say; done
touch "$2"
while [ ! -e "$3" ]; do sleep 0.05; done
SH
}

loopfs_make 64
make_repo "$DISK/repo"
copy_recipes
{
	printf '#!/usr/bin/env bash\nset -euo pipefail\n'
	noisy "$T/mark1" "$T/printed1" "$T/go1"
	printf 'bash %q 01-noisy\n' "$FIXTURES/stages/plan.sh"
} >"$T/plan-noisy.sh"
{
	printf '#!/usr/bin/env bash\n# summary: prints while the disk fills\n# timeout: 120\n'
	printf '# needs: none\nset -euo pipefail\n'
	noisy "$T/mark2" "$T/printed2" "$T/go2"
} >"$RECIPES/01-noisy.sh"
chmod +x "$RECIPES/01-noisy.sh"
plan_json=$(printf '{"name": "plan", "run": %s, "produces": ["plan.md"]}' \
	"$(argv_json /bin/bash "$T/plan-noisy.sh")")
pipeline_with "$T/pipeline.json" "$plan_json" "$(validate_stage)"
loopfs_store "$T/pipeline.json"
new_item fix-1
d=$M/fix-1

# The stage's log.
ctl "$M" fix-1 advance
wait_for grep -q 'noisy line 3$' "$d/stages/1-plan.log"
loopfs_full "$M/learnings/pad.md"
touch "$T/mark1"
wait_for test -e "$T/printed1"
loopfs_free
touch "$T/go1"
WAIT_STATE_PATIENT=1 wait_state "$M" fix-1 failed
err=$(status_field "$M" fix-1 last_error)
assert_contains "$err" "plan: the disk was full: " "last_error"
assert_contains "$err" "bytes of its output were not stored (No space left on device)" "last_error"
log=$(cat "$d/stages/1-plan.log")
assert_contains "$log" "noisy line 1"$'\n' "the stage log"
assert_contains "$log" "[packetfs] the disk was full: " "the stage log"
last=$(grep -c '^noisy line' "$d/stages/1-plan.log")
[ "$last" -lt 33 ] || fail "the stage log holds every line ($last): nothing was lost"

# Again with room: plan succeeds (its files exist now), validate runs 01-noisy.
ctl "$M" fix-1 'run plan'
wait_for bash -c 'grep -q "noisy line 3$" "$1"/*-01-noisy-*.log' _ "$d/validation/logs"
loopfs_full "$M/learnings/pad.md"
touch "$T/mark2"
wait_for test -e "$T/printed2"
loopfs_free
touch "$T/go2"
wait_state "$M" fix-1 done
assert_eq fail "$(status_field "$M" fix-1 verdict)" "verdict"
reg=$(cat "$d/validation/registry.jsonl")
assert_contains "$reg" '"status":"failing"' "registry"
assert_contains "$reg" "the disk was full: " "registry"
assert_not_contains "$reg" '"status":"validated"' "registry"

# rerun: the marks exist, so the recipe runs through and validates.
ctl "$M" fix-1 'rerun 01-noisy'
wait_for grep -q '"status":"validated"' "$d/validation/registry.jsonl"
wait_for eval 'test "$(status_field "$M" fix-1 verdict)" = pass'
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check: $out"
assert_eq ok "$(sqlite3 "$STORE/packetfs.db" 'PRAGMA integrity_check' 2>&1)" "integrity_check"
exit 0
