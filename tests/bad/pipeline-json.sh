#!/usr/bin/env bash
# .packetfs/pipeline.json is validated on close: malformed or invalid content fails with
# EINVAL and the old configuration stays (reads back unchanged, still in force); a valid change
# is accepted.
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
p=$M/.packetfs/pipeline.json

cp "$p" "$T/orig.json"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/orig.json" ||
	fail "pipeline.json does not read back as JSON"

printf '{"stages": [' >"$T/bad1.json"
printf '{"repo": "relative/path", "stages": [{"name": "plan"}]}\n' >"$T/bad2.json"
python3 - "$T/orig.json" "$T" <<'PY'
import json, sys
orig = json.load(open(sys.argv[1]))
def variant(name, change):
    o = json.loads(json.dumps(orig))
    change(o)
    json.dump(o, open("%s/%s.json" % (sys.argv[2], name), "w"))
variant("bad3", lambda o: o.__setitem__("stages", []))
variant("bad4", lambda o: o["stages"].append(dict(o["stages"][0])))          # duplicate stage
variant("bad5", lambda o: o.__setitem__("max_parallel_recipes", "two"))
variant("bad6", lambda o: o["stages"][0].__setitem__("name", "Bad Name"))
variant("good", lambda o: o.__setitem__("max_parallel_recipes", 1))
PY
printf '[1, 2, 3]\n' >"$T/bad7.json"
: >"$T/bad8.json"

for b in bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8; do
	assert_fails_with EINVAL cp "$T/$b.json" "$p"
	cmp -s "$T/orig.json" "$p" || fail "pipeline.json changed after refused $b: $(cat "$p")"
done
# The same through a shell redirection checked by dd (which reports close errors).
assert_fails_with EINVAL dd if="$T/bad1.json" of="$p" status=none
cmp -s "$T/orig.json" "$p" || fail "pipeline.json changed after refused dd"

# A valid change is accepted, survives a remount, and a bad one after it keeps the new one.
cp "$T/good.json" "$p" || fail "a valid pipeline.json was refused"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["max_parallel_recipes"] == 1' "$p" ||
	fail "the accepted pipeline.json does not read back: $(cat "$p")"
umount_store
mount_store
p=$M/.packetfs/pipeline.json
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["max_parallel_recipes"] == 1' "$p" ||
	fail "the accepted pipeline.json is lost after remount: $(cat "$p")"
cp "$p" "$T/good-back.json"
assert_fails_with EINVAL cp "$T/bad1.json" "$p"
cmp -s "$T/good-back.json" "$p" || fail "pipeline.json changed after a refused write"
mkdir "$M/fix-1" || fail "items cannot be created after refused configurations"
exit 0
