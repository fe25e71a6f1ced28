#!/usr/bin/env bash
# The whole pipeline with fast stage programs: advance runs plan, print, validate (two recipes)
# and review, then waits at the publish gate; approve pushes the branch to the bare remote and
# runs the publish program. Checks the registry, the evidence, the logs, status and the remote.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint
printf 'Make the greeting say "new".\n' >"$d/brief.md"

ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
check_status "$M" fix-1

# Each stage ran once and left its log.
stages=$(ls "$d/stages")
for s in plan print review; do
	[ "$(printf '%s\n' "$stages" | grep -Ecx "[0-9]+-$s\.log")" = 1 ] ||
		fail "expected one $s log in stages/: $stages"
done
printf '%s\n' "$stages" | grep -Eq -- '-publish\.log$' && fail "publish ran before approve: $stages"
assert_contains "$(cat "$d"/stages/*-plan.log)" "plan: named 01-build 02-lint for fix-1" "plan log"
assert_contains "$(cat "$d"/stages/*-review.log)" "review: sound" "review log"

# The documents the stages produced.
assert_contains "$(cat "$d/plan.md")" '```validation-recipes' "plan.md"
assert_contains "$(cat "$d/change.md")" "iteration 1: changed the greeting" "change.md"
assert_eq "## Assessment: sound" "$(last_line "$d/review.md")" "last line of review.md"
assert_eq "## Verdict: pass" "$(last_line "$d/change-validation.md")" \
	"last line of change-validation.md"

# The print stage's commit is the item's head; change.diff shows it.
head=$(worktree_head fix-1)
[ "$head" != "$(git -C "$REPO" rev-parse main)" ] || fail "the item branch did not move"
assert_head "$head" "$(status_field "$M" fix-1 head)" "status head"
diff=$(cat "$d/change.diff")
assert_contains "$diff" "diff --git a/hello.c b/hello.c" "change.diff"
assert_contains "$diff" '+	printf("hello, new world (iteration 1)\n");' "change.diff"

# Registry: one validated engine line per recipe, logs matching their sha256.
assert_eq 2 "$(reg count "$r")" "registry lines"
for rc in 01-build 02-lint; do
	assert_eq 1 "$(reg count "$r" recipe=$rc status=validated source=engine)" "validated $rc lines"
	assert_eq 1 "$(reg field "$r" 0 iteration recipe=$rc)" "$rc iteration"
	assert_head "$head" "$(reg field "$r" 0 head recipe=$rc)" "$rc head"
	assert_eq 0 "$(reg field "$r" 0 exit_code recipe=$rc)" "$rc exit code"
	assert_eq "[]" "$(reg field "$r" 0 gpus recipe=$rc)" "$rc gpus"
done
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
log=$d/$(reg field "$r" 0 evidence recipe=01-build)
assert_eq "$(reg field "$r" 0 log_sha256 recipe=01-build)" "$(file_sha256 "$log")" "01-build log sha256"
assert_contains "$(cat "$log")" "hello, new world (iteration 1)" "01-build log (recipe output)"
assert_contains "$(cat "$log")" "01-build" "01-build log header"
assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe=02-lint)")" "lint: ok" "02-lint log"
ls "$d/validation/logs" | grep -Eq -- '-01-build-[0-9]+\.log$' || fail "no 01-build log in validation/logs"

ev=$(cat "$d/validation/evidence.md")
assert_contains "$ev" "[2/2 validated]" "evidence.md"
assert_contains "$ev" "Recipe | Status | Command | Evidence | Note" "evidence.md table header"
assert_contains "$ev" "01-build" "evidence.md"
assert_contains "$ev" "02-lint" "evidence.md"
assert_eq "Generated from validation/registry.jsonl — do not edit by hand." "$(last_line \
	"$d/validation/evidence.md")" "last line of evidence.md"

assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "status evidence"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_eq sound "$(status_field "$M" fix-1 assessment)" "status assessment"
assert_eq 1 "$(status_field "$M" fix-1 iteration)" "status iteration"
assert_eq packetfs/fix-1 "$(status_field "$M" fix-1 branch)" "status branch"
assert_eq main "$(status_field "$M" fix-1 base)" "status base"

# The recipe catalog is visible on the mount, one file per recipe with its script.
catalog=$(ls "$M/.packetfs/recipes")
for rc in 01-build 02-lint 03-fail; do
	f=$(printf '%s\n' "$catalog" | grep -E "^$rc(\.sh)?\$" | head -n 1)
	[ -n "$f" ] || fail "$rc missing from .packetfs/recipes: $catalog"
	cmp -s "$RECIPES/$rc.sh" "$M/.packetfs/recipes/$f" || fail ".packetfs/recipes/$f is not the script"
done
assert_fails_with EACCES sh_write "$M/.packetfs/recipes/$f" "changed"

# Nothing reached the remote before approve.
git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1 >/dev/null &&
	fail "the branch was pushed before approve"

ctl "$M" fix-1 approve
wait_state "$M" fix-1 done
check_status "$M" fix-1
assert_eq "$head" "$(git -C "$ORIGIN" rev-parse -q --verify refs/heads/packetfs/fix-1)" \
	"branch packetfs/fix-1 in the bare remote"
ls "$d/stages" | grep -Eqx '[0-9]+-publish\.log' || fail "no publish log: $(ls "$d/stages")"
assert_contains "$(cat "$d"/stages/*-publish.log)" "pull request opened for packetfs/fix-1 onto main" \
	"publish log"

# The command line sees the same state, by store and by mount point.
out=$("$PFS" status "$M" fix-1 2>&1) || fail "packetfs status MOUNT ITEM failed: $out"
assert_contains "$out" "done" "packetfs status"
out=$("$PFS" status "$STORE" fix-1 --json 2>&1) || fail "packetfs status --json failed: $out"
python3 -c 'import json, sys; o = json.loads(sys.argv[1]); assert o["state"] == "done", o' "$out" ||
	fail "packetfs status --json: $out"

ev=$(cat "$d/events")
for s in plan print validate review publish; do
	assert_contains "$ev" "$s" "item events"
done
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check failed: $out"
exit 0
