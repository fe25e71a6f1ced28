#!/usr/bin/env bash
# Generated views refuse writes with EACCES ("Permission denied") and keep their content.
. "$(dirname "$0")/../lib.sh"
mount_item

before=$(cat "$d/status")
assert_contains "$before" "state: new" "status"
for v in status status.json change.diff validation/evidence.md events report.html; do
	[ -e "$d/$v" ] || fail "view $v missing on a new item"
	assert_fails_with EACCES sh_write "$d/$v" "overwritten"
	assert_fails_with EACCES sh_append "$d/$v" "appended"
done
for v in events index.html .packetfs/version; do
	assert_fails_with EACCES sh_write "$M/$v" "overwritten"
done
assert_contains "$(cat "$d/status")" "state: new" "status after refused writes"
assert_not_contains "$(cat "$d/status")" "overwritten" "status"
assert_not_contains "$(cat "$d/change.diff")" "overwritten" "change.diff"
assert_not_contains "$(cat "$d/validation/evidence.md")" "overwritten" "evidence.md"
assert_contains "$(cat "$M/.packetfs/version")" "0." ".packetfs/version"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$d/status.json" ||
	fail "status.json is not JSON"
exit 0
