#!/usr/bin/env bash
# pipeline.json saved by any editor (SPEC §8): sed -i (a temp file in .packetfs/, renamed over
# pipeline.json), vim's write with a backup by rename (backupcopy=no) and by the 4913 probe
# (backupcopy=auto), and a script's write-temp-then-mv. A good save is in force at once; a bad
# one fails with EINVAL, changes nothing, and says why in pipeline.error; no temp file stays
# behind after a good save, and none is ever stored (a remount has none).
. "$(dirname "$0")/../lib.sh"
make_repo
make_store
mount_store
p=$M/.packetfs/pipeline.json
# field NAME : the configuration's top-level NAME as pipeline.json reads back.
field()
{
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$p" "$1"
}
leftovers()
{
	ls -A "$M/.packetfs" | grep -vxE 'pipeline.json|pipeline.error|recipes|version|compute-env.md' || true
}
# Give the configuration a max_parallel_recipes line that sed can edit.
python3 - "$p" "$T/start.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
o["max_parallel_recipes"] = 2
json.dump(o, open(sys.argv[2], "w"), indent=2)
PY
cp "$T/start.json" "$p" || fail "the starting configuration was refused"

# sed -i: good, then bad.
sed -i 's/"max_parallel_recipes": 2/"max_parallel_recipes": 3/' "$p" || fail "sed -i was refused"
assert_eq 3 "$(field max_parallel_recipes)" "max_parallel_recipes after sed -i"
assert_eq "" "$(leftovers)" "files left in .packetfs after sed -i"
cp "$p" "$T/before.json"
rc=0
out=$(sed -i 's/"max_parallel_recipes"/"max_paralel_recipes"/' "$p" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "sed -i of an unknown key succeeded"
assert_contains "$out" "Invalid argument" "sed -i of an unknown key"
cmp -s "$T/before.json" "$p" || fail "pipeline.json changed after a refused sed -i: $(cat "$p")"
assert_contains "$(cat "$M/.packetfs/pipeline.error")" \
	'max_paralel_recipes: unknown key (did you mean "max_parallel_recipes"?)' "pipeline.error"
for f in $(leftovers); do rm "$M/.packetfs/$f" || fail "cannot remove the temp file $f"; done
assert_eq "" "$(leftovers)" "files left in .packetfs after removing sed's temp file"

# A script's save: write a temp file, then mv over pipeline.json.
sed 's/"max_parallel_recipes": 3/"max_parallel_recipes": 4/' "$p" >"$M/.packetfs/pipeline.json.new" ||
	fail "cannot write a temp file in .packetfs"
assert_eq 3 "$(field max_parallel_recipes)" "max_parallel_recipes before the mv"
mv "$M/.packetfs/pipeline.json.new" "$p" || fail "mv over pipeline.json was refused"
assert_eq 4 "$(field max_parallel_recipes)" "max_parallel_recipes after the mv"
assert_eq "" "$(leftovers)" "files left in .packetfs after mv"
printf '{"stages": 3}' >"$M/.packetfs/bad.json"
# (rename(2) directly: mv words EINVAL as "a subdirectory of itself".)
assert_fails_with EINVAL python3 -c 'import os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
except OSError as e:
    sys.exit(os.strerror(e.errno))' "$M/.packetfs/bad.json" "$p"
assert_eq 4 "$(field max_parallel_recipes)" "max_parallel_recipes after a refused mv"
assert_eq "bad.json" "$(leftovers)" "a refused rename leaves its source"
rm "$M/.packetfs/bad.json"

# vim, with a backup by rename and with the 4913 probe.
VIM_BASE=(-u NONE -N -i NONE -es -c "set noswapfile backupskip=")
n=5
for settings in "backupcopy=no writebackup nobackup" "backupcopy=auto writebackup nobackup" \
	"backupcopy=no backup backupdir=$T"; do
	(cd "$M/.packetfs" && timeout 60 vim "${VIM_BASE[@]}" -c "set $settings" \
		-c "%s/\"max_parallel_recipes\": [0-9]*/\"max_parallel_recipes\": $n/" -c wq \
		pipeline.json </dev/null) || fail "vim ($settings) failed"
	assert_eq $n "$(field max_parallel_recipes)" "max_parallel_recipes after vim ($settings)"
	assert_eq "" "$(leftovers)" "files left in .packetfs after vim ($settings)"
	n=$((n + 1))
done

# Nothing of the temp files is stored: a remount shows none, and the last good save is kept.
printf '{}' >"$M/.packetfs/stray.tmp"
umount_store
mount_store
assert_eq "" "$(leftovers)" "files in .packetfs after a remount"
assert_eq 7 "$(field max_parallel_recipes)" "max_parallel_recipes after a remount"
echo "ok"
