#!/usr/bin/env bash
# test-timeout: 240
# packetfs export carries an item whole and packetfs import restores it in another store over
# another clone of the project: the branch (a git bundle) at the exported head with its commits,
# registry.jsonl byte for byte, every stage and recipe log, the same evidence n/m, the verdict
# bound to its head. Tampered carries are refused with their reason and store nothing: a changed
# byte in a log, a bundle deleted or replaced, the manifest's head or format changed, a bundle of
# another project, a name taken. export -> import -> export comes out the same.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 03-fail
# A second repository, cloned from the first before the item's commits exist.
REPO2=$T/repo2
git clone -q "$REPO" "$REPO2"

# The first store's item commits on its branch (print) and validates: 01-build validated,
# 03-fail failing; the verdict fail blocks it.
ctl "$M" fix-1 advance
assert_eq blocked "$(settled fix-1)" "state of the first item"
assert_eq "1/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence in the first store"
head=$(worktree_head fix-1)
[ "$(git -C "$REPO" rev-list --count main..packetfs/fix-1)" -ge 1 ] ||
	fail "print made no commit on the item branch"

# A commit the first repository alone has (on a side branch), besides the item's own.
git -C "$REPO" checkout -q -b side main
echo side >"$REPO/side.txt"
git -C "$REPO" add side.txt
git -C "$REPO" commit -q -m "only in the first repository"
git -C "$REPO" checkout -q main
git -C "$REPO2" cat-file -e "$head" 2>/dev/null && fail "the second repository has the head already"

out=$("$PFS" export "$STORE" fix-1 "$T/export" 2>&1) || fail "packetfs export failed: $out"
for f in .packetfs/export.json .packetfs/branch.bundle validation/registry.jsonl; do
	[ -s "$T/export/$f" ] || fail "export wrote no $f"
done
assert_eq "$head" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["head"])' \
	"$T/export/.packetfs/export.json")" "manifest head"
cmp -s "$r" "$T/export/validation/registry.jsonl" || fail "exported registry differs"
first_evidence=$(cat "$d/validation/evidence.md")
first_stage=$(status_field "$M" fix-1 stage)
umount_store
store1=$STORE

# The second store, over the clone.
sed "s|\"$REPO\"|\"$REPO2\"|" "$T/pipeline.json" >"$T/pipeline2.json"
STORE2=$T/store2
out=$("$PFS" init "$STORE2" --repo "$REPO2" --pipeline "$T/pipeline2.json" 2>&1) ||
	fail "init of the second store failed: $out"
STORE=$STORE2

# counts : rows of the second store's tables, and its item branches.
counts()
{
	local t
	for t in items runs log_chunks registry revisions documents events; do
		printf '%s=%s ' "$t" "$(sqlite3 "$STORE2/packetfs.db" "SELECT COUNT(*) FROM $t")"
	done
	git -C "$REPO2" for-each-ref --format='%(refname)' refs/heads | tr '\n' ' '
}

# refused DIR NAME WHY : import of DIR as NAME exits 1 saying WHY, and the store is unchanged.
refused()
{
	local before after rc=0
	before=$(counts)
	out=$("$PFS" import "$STORE2" "$1" "$2" 2>&1) || rc=$?
	[ "$rc" = 1 ] || fail "import of $1 exited $rc, expected 1: $out"
	assert_contains "$out" "packetfs: import: " "refusal of $1"
	assert_contains "$out" "$3" "refusal of $1"
	after=$(counts)
	assert_eq "$before" "$after" "second store after the refused import of $1"
}

# tampered NAME : a copy of the export in $T/NAME.
tampered()
{
	rm -rf "${T:?}/$1"
	cp -a "$T/export" "$T/$1"
}

# rehash_bundle NAME : the manifest of the copy NAME names its bundle's sha256 (a bundle put
# there on purpose, for the checks git makes).
rehash_bundle()
{
	local sha
	sha=$(sha256sum <"$T/$1/.packetfs/branch.bundle" | cut -c1-64)
	sed -i "s/\"bundle_sha256\":[[:space:]]*\"[0-9a-f]*\"/\"bundle_sha256\": \"$sha\"/" \
		"$T/$1/.packetfs/export.json"
}

# A changed byte in a log.
tampered bad-log
log=$(reg field "$T/export/validation/registry.jsonl" 0 evidence recipe=01-build)
printf 'X' | dd of="$T/bad-log/$log" bs=1 seek=3 conv=notrunc status=none
refused "$T/bad-log" fix-2 "$log: sha256"
# The same byte changed in the manifest too: the registry line's log_sha256 still refuses it.
python3 - "$T/bad-log/.packetfs/export.json" "$T/bad-log/$log" <<'PY'
import hashlib, json, sys
m = json.load(open(sys.argv[1]))
for r in m["runs"]:
    if sys.argv[2].endswith(r["log"]):
        r["sha256"] = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
json.dump(m, open(sys.argv[1], "w"))
PY
refused "$T/bad-log" fix-2 "log_sha256"
# The bundle deleted.
tampered no-bundle
rm "$T/no-bundle/.packetfs/branch.bundle"
refused "$T/no-bundle" fix-2 "branch.bundle: missing"
# The manifest's head changed (to a commit the bundle does not hold).
tampered bad-head
base=$(git -C "$REPO" rev-parse main)
sed -i "s/\"$head\"/\"$base\"/" "$T/bad-head/.packetfs/export.json"
refused "$T/bad-head" fix-2 "does not hold the head ${base:0:12}"
# A format this packetfs does not know.
tampered bad-format
sed -i 's/"format":[[:space:]]*1/"format": 99/' "$T/bad-format/.packetfs/export.json"
refused "$T/bad-format" fix-2 "unknown format version 99"
# A bundle of another project (no common history with the store's base).
tampered other
git init -q -b main "$T/otherproj"
echo other >"$T/otherproj/x"
git -C "$T/otherproj" add x
git -C "$T/otherproj" commit -q -m other
other=$(git -C "$T/otherproj" rev-parse HEAD)
git -C "$T/otherproj" bundle create -q "$T/other/.packetfs/branch.bundle" main
sed -i "s/\"$head\"/\"$other\"/" "$T/other/.packetfs/export.json"
refused "$T/other" fix-2 ".packetfs/branch.bundle: sha256"
rehash_bundle other
refused "$T/other" fix-2 "another project"
# A bundle that starts from a commit the repository lacks.
tampered thin
git -C "$REPO" checkout -q -b thin "$head"
for n in 1 2; do
	echo "$n" >"$REPO/thin.txt"
	git -C "$REPO" add thin.txt
	git -C "$REPO" commit -q -m "thin $n"
done
git -C "$REPO" checkout -q main
thin=$(git -C "$REPO" rev-parse thin)
git -C "$REPO" bundle create -q "$T/thin/.packetfs/branch.bundle" thin "^$thin~1"
sed -i "s/\"$head\"/\"$thin\"/" "$T/thin/.packetfs/export.json"
rehash_bundle thin
refused "$T/thin" fix-2 "lacks"

# The import itself.
out=$("$PFS" import "$STORE2" "$T/export" fix-1 2>&1) || fail "packetfs import failed: $out"
assert_not_contains "$out" "skipped" "import's words"
# A name taken.
refused "$T/export" fix-1 "fix-1: item exists"

mount_store "$T/mnt2" "$STORE2"
d2=$T/mnt2/fix-1
assert_eq "$head" "$(git -C "$STORE2/worktrees/fix-1" rev-parse HEAD)" "imported worktree head"
assert_eq "$head" "$(git -C "$REPO2" rev-parse refs/heads/packetfs/fix-1)" "imported branch"
assert_eq "$(git -C "$REPO" log --format=%H%n%s main..packetfs/fix-1)" \
	"$(git -C "$STORE2/worktrees/fix-1" log --format=%H%n%s main..HEAD)" "git log of the item"
cmp -s "$T/export/validation/registry.jsonl" "$d2/validation/registry.jsonl" ||
	fail "imported registry.jsonl differs"
(cd "$T/export" && find stages validation/logs -type f | sort) >"$T/logs1"
(cd "$d2" && find stages validation/logs -type f | sort) >"$T/logs2"
assert_eq "$(cat "$T/logs1")" "$(cat "$T/logs2")" "imported log names"
[ "$(wc -l <"$T/logs1")" -ge 5 ] || fail "fewer logs than runs: $(cat "$T/logs1")"
while read -r f; do
	cmp -s "$T/export/$f" "$d2/$f" || fail "imported $f differs"
done <"$T/logs1"
assert_eq "1/2 validated" "$(status_field "$T/mnt2" fix-1 evidence)" "imported evidence"
assert_eq "$first_evidence" "$(cat "$d2/validation/evidence.md")" "imported evidence.md"
assert_eq fail "$(status_field "$T/mnt2" fix-1 verdict)" "imported verdict"
assert_head "$head" "$(status_field "$T/mnt2" fix-1 verdict_head)" "imported verdict_head"
assert_eq blocked "$(status_field "$T/mnt2" fix-1 state)" "imported state"
assert_eq "$first_stage" "$(status_field "$T/mnt2" fix-1 stage)" "imported stage"
[ -e "$d2/.packetfs" ] && fail "the carry's files became documents"
out=$("$PFS" check "$STORE2" 2>&1) || fail "packetfs check of the second store: $out"

# Round trip: an export of the imported item is the first export, but for the views of the
# store it lives in (status, events, ctl, and report.html, which shows them).
out=$("$PFS" export "$STORE2" fix-1 "$T/export2" 2>&1) || fail "second export failed: $out"
diff -r -x status -x status.json -x events -x ctl -x report.html "$T/export" "$T/export2" >"$T/rt.diff" ||
	fail "export -> import -> export differs: $(head -c 2000 "$T/rt.diff")"

# The evidence counts here: a new run at the head goes on after the carried ones.
ctl "$T/mnt2" fix-1 "rerun 01-build"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=01-build)" = 2 ]' _ "$FIXTURES/registry.py" \
	"$d2/validation/registry.jsonl"
last=$(reg field "$d2/validation/registry.jsonl" -1 run recipe=01-build)
max=$(python3 -c 'import json,sys; print(max(r["run"] for r in json.load(open(sys.argv[1]))["runs"]))' \
	"$T/export/.packetfs/export.json")
[ "$last" -gt "$max" ] || fail "the new run $last does not come after the carried runs ($max)"
exit 0
