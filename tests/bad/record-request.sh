#!/usr/bin/env bash
# Bad requests written to an item's validation/record are refused with EINVAL (EFBIG when over
# 64 KiB), queue nothing, and say why: on the writer's own handle and to the next reader (`cat`),
# and in the daemon's log. Not JSON, not an object, an unknown or repeated member, recipe or argv
# missing, argv empty or not strings, gpus or timeout_s out of range, a NUL, an unknown recipe; a
# last line without
# newline is judged at close; cancel with no run is ENOENT; an archived item's file is read-only
# (EACCES).
. "$(dirname "$0")/../lib.sh"
mount_item
rec=$d/validation/record

assert_eq "-rw-rw-rw-" "$(stat -c %A "$rec")" "mode of validation/record"
ls "$d/validation" | grep -qx record || fail "validation/ does not list record: $(ls "$d/validation")"
assert_contains "$(cat "$rec")" "usage: write one line" "record of an item that took no request"

# refused LINE WHY : writing LINE (with its newline) fails with EINVAL, and a fresh handle then
# reads "error: EINVAL: ...WHY...".
refused()
{
	assert_fails_with EINVAL sh_write "$rec" "$1"$'\n'
	assert_contains "$(cat "$rec")" "error: EINVAL: $2" "answer to '$1'"
}
refused 'make -j2' "not JSON (at byte 1)"
refused '{"recipe": "01-build", "argv": ["make"]' "not JSON"
refused '["make"]' "the request must be a JSON object"
refused '{"recipe": "01-build", "argv": ["make"], "cwd": "/tmp"}' "unknown member 'cwd'"
refused '{"recipe": "01-build", "argv": ["a"], "argv": ["b"]}' "member 'argv' given twice"
refused '{"argv": ["make"]}' "recipe missing"
refused '{"recipe": "", "argv": ["make"]}' "recipe must be a non-empty string"
refused '{"recipe": "01-build"}' "argv missing"
refused '{"recipe": "01-build", "argv": []}' "argv is empty"
refused '{"recipe": "01-build", "argv": "make -j2"}' "argv must be an array of strings"
refused '{"recipe": "01-build", "argv": ["make", 2]}' "argv[1] is not a string"
refused '{"recipe": "01-build", "argv": [""]}' "argv[0] is empty"
refused '{"recipe": "01-build", "argv": ["make"], "gpus": -1}' "gpus must be a whole number"
refused '{"recipe": "01-build", "argv": ["make"], "timeout_s": "10"}' "timeout_s must be a whole number"
refused '{"recipe": "01-build", "argv": ["a\u0000b"]}' "\\u0000 (a NUL character)"

# Refused by the engine: an unknown recipe.
refused '{"recipe": "09-no-such", "argv": ["true"]}' "no recipe '09-no-such' in the catalog"

# The writer learns why on its own handle, and a last line without newline is judged at close.
out=$(python3 - "$rec" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    os.write(fd, b'{"recipe": "01-build", "argv": []}\n')
    print("write succeeded")
except OSError as e:
    print("write:", os.strerror(e.errno))
print(os.pread(fd, 4096, 0).decode(), end="")
os.close(fd)
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, b'{"recipe": "01-build", "argv": ["make"], "color": 1}')
try:
    os.close(fd)
    print("close succeeded")
except OSError as e:
    print("close:", os.strerror(e.errno))
PY
)
assert_contains "$out" "write: Invalid argument" "write of an empty command"
assert_contains "$out" "error: EINVAL: argv is empty" "answer on the writer's handle"
assert_contains "$out" "close: Invalid argument" "close after a request without newline"
assert_contains "$(cat "$rec")" "error: EINVAL: unknown member 'color'" "answer after that close"

# Over 64 KiB, with or without its newline: EFBIG.
assert_fails_with EFBIG python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, b"{\"recipe\": \"01-build\", \"argv\": [\"" + b"x" * 70000 + b"\"]}\n")
except OSError as e:
    sys.exit(os.strerror(e.errno))
' "$rec"
assert_contains "$(cat "$rec")" "error: EFBIG: request too long" "answer to an over-long request"
assert_fails_with EFBIG bash -c 'head -c 70000 /dev/zero | tr "\0" " " | sed "s/^/{/" >"$1"' _ "$rec"

# cancel with no run behind the handle.
assert_fails_with ENOENT python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    os.write(fd, b"cancel\n")
except OSError as e:
    print(os.pread(fd, 4096, 0).decode())
    sys.exit(os.strerror(e.errno))
' "$rec"

# Nothing was queued: no log, no registry line, no record event.
assert_eq "" "$(ls "$d/validation/logs")" "logs after refused requests"
assert_eq 0 "$(wc -c <"$d/validation/registry.jsonl")" "registry after refused requests"
grep -q record_queued "$d/events" && fail "a refused request left an event: $(cat "$d/events")"
# Every refusal is in the daemon's log... which went to /dev/null: the answers above said why.

# An archived item's record file is read-only, like the rest of it.
new_item fix-2
rmdir "$M/fix-2"
wait_for test -d "$M/.archive/fix-2"
arec=$M/.archive/fix-2/validation/record
assert_eq "-r--r--r--" "$(stat -c %A "$arec")" "mode of an archived item's record"
assert_fails_with EACCES sh_write "$arec" '{"recipe": "01-build", "argv": ["true"]}'$'\n'
exit 0
