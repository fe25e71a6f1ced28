#!/usr/bin/env bash
# Invalid registry lines fail with EINVAL and store nothing: not JSON, not an object, missing
# or mistyped fields, unknown status, several lines with a bad one.
. "$(dirname "$0")/../lib.sh"
mount_item

echo '{"recipe":"01-build","status":"failing"}' >>"$r"
snap=$(cat "$r"; printf x)
for line in 'not json' '[1, 2]' '"a string"' '{"recipe":"01-build"}' '{"status":"validated"}' \
	'{"recipe":1,"status":"validated"}' '{"recipe":"01-build","status":"great"}' \
	'{"recipe":"01-build","status":"validated","run":"seven"}' \
	'{"recipe":"01-build","status":"validated"} trailing' '{"recipe":"01-build",' '{}'; do
	assert_fails_with EINVAL sh_append "$r" "$line"$'\n'
	assert_eq "$snap" "$(cat "$r"; printf x)" "registry after appending '$line'"
done
# A partial line left at close is refused too, and not stored.
assert_fails_with EINVAL write_then_close "$r" APPEND '{"recipe":"02-lint","status":"validated"}'
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after a partial line at close"

# Appending with an offset write in the middle (not at the end) is refused.
assert_fails_with EPERM bash -c 'printf x | dd of="$1" bs=1 seek=3 conv=notrunc status=none' _ "$r"
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after an offset write"

# Still appendable afterwards.
echo '{"recipe":"01-build","status":"validated"}' >>"$r" || fail "a valid append is refused"
assert_eq 2 "$(wc -l <"$r")" "registry lines"
exit 0
