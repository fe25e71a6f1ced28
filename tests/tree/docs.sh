#!/usr/bin/env bash
# The documentation says what packetfs does: its examples load and run, and the man pages, the
# schema, `packetfs --help` and the docs agree.
#
# 1. tests/tree/docs.py checks README.md and docs/ without running anything: every ```json
#    block is marked (<!-- docs-test: KIND -->), relative links resolve, the commands of
#    packetfs(1), `packetfs --help` and the docs are the same, the pipeline keys of
#    packetfs-pipeline(5), schema/pipeline.schema.json and the parser are the same, and
#    docs/guarantees.md has a section for every "SPEC §N" the sources cite. It writes each
#    marked example to $T/examples.
# 2. Every example pipeline loads: `packetfs init --pipeline` of it on a scratch store, with its
#    paths pointed at what exists here (the repository, the shipped recipes, /bin/true for each
#    program), so every key, value and rule of the parser is applied to it.
# 3. The example plan.md and review.md drive an item of the default pipeline (its plan stage
#    made to produce plan.md, so that the engine reads the plan when plan ends) to the publish
#    gate (verdict pass, assessment sound, every named recipe validated); the plan with a
#    Disposition ends its item done; the example registry line is accepted as an external claim.
# 4. README's five-minute walk runs as written, command by command, and ends with the item
#    archived.
# test-timeout: 300
. "$(dirname "$0")/../lib.sh"

EX=$T/examples
mkdir -p "$EX"
"$PFS" --help >"$T/help.txt"
python3 "$ROOT/tests/tree/docs.py" "$ROOT" "$T/help.txt" "$EX" || fail "docs.py found the above"

# ---- 2. example pipelines load ----
make_repo
n=0
for f in "$EX"/pipeline-*; do
	python3 - "$f" "$REPO" "$ROOT/recipes" "$T" >"$T/p.json" <<'EOF' || fail "$f: cannot rewrite"
import json, sys
p = json.load(open(sys.argv[1]))
p["repo"] = sys.argv[2]
if "recipes_dir" in p:
    p["recipes_dir"] = sys.argv[3]
stages = p.get("stages", []) + p.get("notify", [])
for t in p.get("templates", {}).values():
    stages += t.get("stages", [])
for st in stages:
    if "run" in st:
        st["run"][0] = "/bin/true"
ex = p.get("executor", {})
if "shared_dir" in ex:
    ex["shared_dir"] = sys.argv[4]
print(json.dumps(p, indent=2))
EOF
	n=$((n + 1))
	out=$("$PFS" init "$T/pstore-$n" --repo "$REPO" --pipeline "$T/p.json" 2>&1) ||
		fail "the example pipeline $(basename "$f") does not load: $out"
done
note "$n example pipelines load"

# ---- 3. the example plan.md and review.md drive the default pipeline, plan producing plan.md ----
make_store
mount_store
python3 - "$M/.packetfs/pipeline.json" "$ROOT/recipes" >"$T/p.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["recipes_dir"] = sys.argv[2]
p["stages"][0]["produces"] = ["plan.md"]
print(json.dumps(p, indent=2))
EOF
cp "$T/p.json" "$M/.packetfs/pipeline.json"
mkdir "$M/fix-1"
cp "$EX/plan-1" "$M/fix-1/plan.md"
cp "$EX/review-1" "$M/fix-1/review.md"
echo "// a change" >>"$M/fix-1/worktree/hello.c"
git -C "$M/fix-1/worktree" commit -qam "a change"
ctl "$M" fix-1 advance
wait_state "$M" fix-1 waiting
st=$(cat "$M/fix-1/status")
for want in "stage: publish" "verdict: pass" "assessment: sound" \
	"last_error: publish: waiting for approve"; do
	assert_contains "$st" "$want" "fix-1's status after the example plan and review"
done
named=$(sed -n '/^```validation-recipes/,/^```$/p' "$EX/plan-1" | grep -vc '^```')
assert_contains "$st" "evidence: $named/$named validated" "every recipe the example plan names"

mkdir "$M/fix-2"
cp "$EX/plan-disposition-1" "$M/fix-2/plan.md"
ctl "$M" fix-2 advance
wait_state "$M" fix-2 done
disp=$(sed -n 's/^Disposition: //p' "$EX/plan-disposition-1")
assert_eq "$(status_field "$M" fix-2 disposition)" "$disp" "the example Disposition ends the item"

cat "$EX/registry-line-1" >>"$M/fix-1/validation/registry.jsonl" ||
	fail "the example registry line was refused: $(cat "$M/fix-1/validation/registry.error")"
assert_contains "$(tail -n 1 "$M/fix-1/validation/registry.jsonl")" '"source":"external"' \
	"the example registry line, stored"
umount_store

# ---- 4. README's five-minute walk ----
python3 - "$ROOT/README.md" >"$T/walk.sh" <<'EOF'
import sys
s = open(sys.argv[1]).read()
a = s.index("## A five-minute walk")
b = s.index("\n## ", a + 1)
inb = False
for line in s[a:b].split("\n"):
    if line == "```sh":
        inb = True
    elif line == "```":
        inb = False
    elif inb:
        print(line)
EOF
[ -s "$T/walk.sh" ] || fail "README.md has no sh blocks under \"## A five-minute walk\""
mkdir "$T/walk"
walk_unmount()
{
	local m
	for m in $(awk '$3 == "fuse.packetfs" {print $2}' /proc/mounts | grep "^$T/walk/"); do
		fusermount3 -u -z "$m"
	done
}
CLEANUP_HOOKS+=(walk_unmount)
out=$(cd "$ROOT" && PATH=$(dirname "$PFS"):$PATH TMPDIR=$T/walk \
	timeout 180 bash -euo pipefail "$T/walk.sh" 2>&1) || fail "README's walk failed: $out"
assert_contains "$out" "==> state: waiting <==" "the walk reaches the publish gate"
assert_contains "$out" "evidence: 2/2 validated" "the walk's evidence"
assert_contains "$out" "==> state: done <==" "the walk ends done"
awk '$3 == "fuse.packetfs" {print $2}' /proc/mounts | grep -q "^$T/walk/" &&
	fail "the walk left its mount"
note "README's walk ran: $(wc -l <"$T/walk.sh") lines"
echo "ok"
