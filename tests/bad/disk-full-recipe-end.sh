#!/usr/bin/env bash
# A recipe ends while the disk under the store is full (SPEC §6, §8): the end of its run (the
# footer, the sealed run row, its registry line, its event) is one transaction the store cannot
# take. Nothing is left half-written: once space is back, the run is sealed (no run stays
# running) and its registry line appears once, validated (the recipe printed nothing after the
# disk filled), naming the head it ran at, with the sha256 of the log as stored; the store
# checks clean.
# test-timeout: 240
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../loopfs.sh"

loopfs_make 64
make_repo "$DISK/repo"
copy_recipes
{
	printf '#!/usr/bin/env bash\n# summary: ends once told to\n# timeout: 120\n# needs: none\n'
	printf 'echo waiting\nwhile [ ! -e %q ]; do sleep 0.05; done\n' "$T/go"
} >"$RECIPES/01-wait.sh"
chmod +x "$RECIPES/01-wait.sh"
plan_json=$(printf '{"name": "plan", "run": %s, "produces": ["plan.md"]}' \
	"$(argv_json /bin/bash "$FIXTURES/stages/plan.sh" 01-wait)")
pipeline_with "$T/pipeline.json" "$plan_json" "$(validate_stage)"
loopfs_store "$T/pipeline.json"
new_item fix-1
d=$M/fix-1

ctl "$M" fix-1 advance
wait_for bash -c 'grep -q "^waiting$" "$1"/*-01-wait-*.log' _ "$d/validation/logs"
loopfs_full "$M/learnings/pad.md"
touch "$T/go"
wait_for no_procs_in "$d"
sleep 1
assert_eq "" "$(cat "$d/validation/registry.jsonl")" "registry while the disk is full"

loopfs_free
# The run's end is written again until the store takes it.
running_runs()
{
	sqlite3 "$STORE/packetfs.db" "SELECT count(*) FROM runs WHERE kind = 'recipe' AND status = 'running'"
}
wait_for grep -q '"recipe":"01-wait"' "$d/validation/registry.jsonl"
wait_for eval 'test "$(running_runs)" = 0'
reg=$(cat "$d/validation/registry.jsonl")
assert_eq 1 "$(grep -c . <<<"$reg")" "registry lines"
line_field()
{
	python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$reg" "$1"
}
assert_eq validated "$(line_field status)" "status"
assert_eq engine "$(line_field source)" "source"
assert_eq "$(git -C "$REPO" rev-parse packetfs/fix-1)" "$(line_field head)" "head"
log=$M/fix-1/$(line_field evidence)
grep -qx waiting "$log" || fail "the log lacks the recipe's output: $(cat "$log")"
assert_eq "$(sha256sum <"$log" | cut -d' ' -f1)" "$(line_field log_sha256)" "log_sha256"
assert_eq validated "$(sqlite3 "$STORE/packetfs.db" \
	"SELECT status FROM runs WHERE kind = 'recipe'")" "the run row"
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check: $out"
assert_eq ok "$(sqlite3 "$STORE/packetfs.db" 'PRAGMA integrity_check' 2>&1)" "integrity_check"
exit 0
