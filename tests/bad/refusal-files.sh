#!/usr/bin/env bash
# The last refused write of .packetfs/pipeline.json is readable beside it in
# .packetfs/pipeline.error, that of an item's registry.jsonl in validation/registry.error: one
# line "TIME: why", TIME in RFC 3339, the next refusal replacing it, empty before any (and, for
# pipeline.error, after a configuration is taken). A
# configuration error says where (line and column of the field in the JSON) and, for an
# unknown key, the allowed key it likely meant; a missing base branch is said in git's terms.
. "$(dirname "$0")/../lib.sh"
mount_item
pe=$M/.packetfs/pipeline.error
re=$d/validation/registry.error
assert_eq "" "$(cat "$pe")" "pipeline.error before any refusal"
assert_eq "" "$(cat "$re")" "registry.error before any refusal"
assert_contains "$(ls "$M/.packetfs")" "pipeline.error" "listing of .packetfs"
assert_contains "$(ls "$d/validation")" "registry.error" "listing of validation"

# An unknown key: its position and a did-you-mean.
python3 - "$M/.packetfs/pipeline.json" "$T/typo.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["stages"][0]["prodcues"] = ["x.md"]
json.dump(o, open(sys.argv[2], "w"), indent=2)
PY
want=$(grep -n '"prodcues"' "$T/typo.json" | cut -d: -f1)
col=$(grep '"prodcues"' "$T/typo.json" | awk '{ print index($0, "\"prodcues\"") }')
assert_fails_with EINVAL cp "$T/typo.json" "$M/.packetfs/pipeline.json"
out=$(cat "$pe")
assert_contains "$out" 'stages[0].prodcues: unknown key (did you mean "produces"?) at line '"$want, column $col" \
	"pipeline.error after an unknown key"
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: ' "$pe" ||
	fail "pipeline.error does not start with an RFC 3339 time: $out"
assert_eq 1 "$(grep -c . "$pe")" "lines of pipeline.error"

# Malformed JSON: the next refusal replaces it.
printf '{\n  "stages": [\n    }\n' >"$T/bad.json"
assert_fails_with EINVAL cp "$T/bad.json" "$M/.packetfs/pipeline.json"
assert_contains "$(cat "$pe")" "malformed JSON at line 3" "pipeline.error after malformed JSON"
assert_not_contains "$(cat "$pe")" "prodcues" "pipeline.error after malformed JSON"
assert_fails_with EACCES sh_write "$pe" "x"

# A base branch the repository lacks, said in git's terms.
python3 - "$M/.packetfs/pipeline.json" "$T/trunk.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["base"] = "trunk"
json.dump(o, open(sys.argv[2], "w"))
PY
assert_fails_with EINVAL cp "$T/trunk.json" "$M/.packetfs/pipeline.json"
assert_contains "$(cat "$pe")" "base branch 'trunk' not found in $REPO (git branch -a lists those it has)" \
	"pipeline.error after a missing base branch"
assert_not_contains "$(cat "$pe")" "revspec" "pipeline.error after a missing base branch"

# A configuration taken empties pipeline.error: its refusal is no news once a good one is in force,
# whether written in place or renamed over it (an editor's save).
cp "$M/.packetfs/pipeline.json" "$T/good.json"
cat "$T/good.json" >"$M/.packetfs/pipeline.json" || fail "a good pipeline.json was refused"
assert_eq "" "$(cat "$pe")" "pipeline.error after a good write"
assert_fails_with EINVAL cp "$T/trunk.json" "$M/.packetfs/pipeline.json"
[ -s "$pe" ] || fail "pipeline.error empty after a refusal"
cp "$T/good.json" "$M/.packetfs/.pipeline.json.new"
mv "$M/.packetfs/.pipeline.json.new" "$M/.packetfs/pipeline.json" || fail "a good rename was refused"
assert_eq "" "$(cat "$pe")" "pipeline.error after a good rename"

# A bad registry line.
assert_fails_with EINVAL sh_append "$d/validation/registry.jsonl" $'{"recipe": 3}\n'
out=$(cat "$re")
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: .' "$re" ||
	fail "registry.error is not 'TIME: why': $out"
assert_eq "" "$(cat "$d/validation/registry.jsonl")" "registry after the refused line"
new_item fix-2
assert_eq "" "$(cat "$M/fix-2/validation/registry.error")" "another item's registry.error"
echo "ok"
