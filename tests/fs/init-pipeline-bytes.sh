#!/usr/bin/env bash
# `packetfs init --pipeline FILE` keeps the author's bytes (tabs, key order, spacing): with the
# store's repository already in "repo", .packetfs/pipeline.json is FILE byte for byte; otherwise
# only the value of "repo" changes, or "repo" comes first, laid out like the member after it.
. "$(dirname "$0")/../lib.sh"
make_repo
stages='[{"name": "plan",   "run": ["/bin/true"]}]'

# repo last, tabs: kept as it is.
printf '{\n\t"base": "main",\n\t"stages": %s,\n\t"repo": "%s"\n}\n' "$stages" "$REPO" >"$T/p1.json"
make_store "$T/p1.json"
mount_store
cmp "$T/p1.json" "$M/.packetfs/pipeline.json" ||
	fail "pipeline.json is not the file given: $(cat "$M/.packetfs/pipeline.json")"
umount_store
rm -rf "$STORE"

# Another repo: only its value changes.
printf '{\n\t"base": "main",\n\t"repo": "/elsewhere",  "stages": %s\n}\n' "$stages" >"$T/p2.json"
make_store "$T/p2.json"
mount_store
assert_file_eq "$M/.packetfs/pipeline.json" \
	"$(printf '{\n\t"base": "main",\n\t"repo": "%s",  "stages": %s\n}' "$REPO" "$stages")"$'\n'
umount_store
rm -rf "$STORE"

# No repo: it comes first, on a line of its own like "base".
printf '{\n  "base": "main",\n  "stages": %s\n}\n' "$stages" >"$T/p3.json"
make_store "$T/p3.json"
mount_store
assert_file_eq "$M/.packetfs/pipeline.json" \
	"$(printf '{\n  "repo": "%s",\n  "base": "main",\n  "stages": %s\n}' "$REPO" "$stages")"$'\n'
exit 0
