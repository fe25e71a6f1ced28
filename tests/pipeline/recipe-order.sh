#!/usr/bin/env bash
# Recipe order (SPEC §6 "# needs:"): a recipe waits for the lower-numbered recipes of its batch
# (02-test reads what 01-build made, in a build directory git ignores), "# needs: none" runs at
# once beside them, "# needs: NAME" waits for that recipe even when it is numbered higher and
# the plan lists them in any order, and a need that fails blocks the recipe, naming it.
. "$(dirname "$0")/../lib.sh"
make_repo
# build/ is ignored by the commit the item starts from: a .gitignore the recipe wrote into
# build/ itself would be an untracked file for a moment, which a recipe starting then (09-fail,
# 03-docs) sees as a worktree that differs from its head.
printf 'build/\n' >>"$REPO/.gitignore"
git -C "$REPO" commit -q -am "ignore build/"
git -C "$REPO" push -q origin main
copy_recipes
rm -f "$RECIPES"/*
cat >"$RECIPES/01-build.sh" <<EOR
#!/usr/bin/env bash
# summary: builds into build/ (which git ignores), once the test lets it
set -euo pipefail
mkdir -p build
while [ ! -e "$T/go" ]; do sleep 0.05; done
echo built >build/out
EOR
cat >"$RECIPES/02-test.sh" <<'EOR'
#!/usr/bin/env bash
# summary: tests what 01-build built
cat build/out
EOR
cat >"$RECIPES/03-docs.sh" <<EOR
#!/usr/bin/env bash
# summary: independent of the build
# needs: none
touch "$T/docs-ran"
EOR
cat >"$RECIPES/04-package.sh" <<'EOR'
#!/usr/bin/env bash
# summary: packages, once the higher-numbered 08-smoke passed
# needs: 08-smoke
echo packaged
EOR
cat >"$RECIPES/05-after-fail.sh" <<'EOR'
#!/usr/bin/env bash
# summary: needs 09-fail
# needs: 09-fail
echo "must not run"
EOR
cat >"$RECIPES/08-smoke.sh" <<'EOR'
#!/usr/bin/env bash
# summary: a smoke test
# needs: 01-build
test -f build/out
EOR
cat >"$RECIPES/09-fail.sh" <<'EOR'
#!/usr/bin/env bash
# summary: fails
# needs: none
exit 1
EOR
chmod +x "$RECIPES"/*
PLAN_RECIPES="05-after-fail 02-test 09-fail 04-package 03-docs 08-smoke 01-build" \
	std_pipeline "$T/pipeline.json"
sed -i 's/"max_parallel_recipes": 2/"max_parallel_recipes": 4/' "$T/pipeline.json"
mount_item "$T/pipeline.json"
ctl "$M" fix-1 advance
# 03-docs runs while 01-build waits; 05-after-fail is blocked once 09-fail failed.
wait_for test -e "$T/docs-ran"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=05-after-fail)" = 1 ]' _ "$FIXTURES/registry.py" "$r"
assert_eq "" "$(reg field "$r" -1 status recipe=02-test 2>/dev/null || true)" "02-test before the build"
assert_eq failing "$(reg field "$r" -1 status recipe=09-fail)" "09-fail"
assert_eq blocked "$(reg field "$r" -1 status recipe=05-after-fail)" "05-after-fail"
assert_contains "$(reg field "$r" -1 note recipe=05-after-fail)" "09-fail: latest run at" \
	"note of 05-after-fail"
log=$(reg field "$r" -1 evidence recipe=05-after-fail)
assert_not_contains "$(cat "$d/$log")" "must not run" "log of 05-after-fail"
touch "$T/go"
wait_state "$M" fix-1 blocked
for rec in 01-build 02-test 03-docs 08-smoke 04-package; do
	assert_eq validated "$(reg field "$r" -1 status recipe=$rec)" "status of $rec"
done
# Order of the registry: 01-build before 02-test and 08-smoke, 08-smoke before 04-package.
order=$(python3 - "$r" <<'EOPY'
import json, sys
print(" ".join(json.loads(l)["recipe"] for l in open(sys.argv[1]) if l.strip()))
EOPY
)
pos() { local i=0 w; for w in $order; do [ "$w" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; }
[ "$(pos 01-build)" -lt "$(pos 02-test)" ] || fail "02-test ended before 01-build: $order"
[ "$(pos 08-smoke)" -lt "$(pos 04-package)" ] || fail "04-package ended before 08-smoke: $order"
assert_eq "built" "$(tail -n +1 "$d/$(reg field "$r" -1 evidence recipe=02-test)" | grep -x built)" \
	"02-test saw the build"
assert_contains "$(status_field "$M" fix-1 last_error)" "gate refused" "last_error"
exit 0
