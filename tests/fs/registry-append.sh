#!/usr/bin/env bash
# validation/registry.jsonl is append-only: a complete valid line appended with >> is stored
# with "source":"external"; a partial line waits for its newline; an invalid line fails with
# EINVAL and stores nothing; rewriting, truncating or removing fails with EPERM.
. "$(dirname "$0")/../lib.sh"
mount_item

[ -f "$r" ] || fail "registry.jsonl missing on a new item"
assert_eq 0 "$(stat -c %s "$r")" "size of a new registry"

echo '{"recipe":"01-build","status":"validated","note":"ran it by hand"}' >>"$r"
assert_eq 1 "$(wc -l <"$r")" "registry lines after one append"
python3 - "$r" <<'PY' || fail "stored line is wrong: $(cat "$r")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
o = json.loads(lines[0])
assert o["recipe"] == "01-build", o
assert o["status"] == "validated", o
assert o["source"] == "external", o
assert o["note"] == "ran it by hand", o
PY

# A line written in two pieces: held until its newline arrives.
exec 3>>"$r"
printf '{"recipe":"02-lint",' >&3 || fail "writing the first part of a line was refused"
assert_eq 1 "$(wc -l <"$r")" "registry lines while a partial line is held"
assert_not_contains "$(cat "$r")" "02-lint" "registry with a partial line held"
printf '"status":"failing","source":"engine"}\n' >&3 || fail "writing the rest of a line was refused"
exec 3>&-
assert_eq 2 "$(wc -l <"$r")" "registry lines after the rest of the line"
python3 - "$r" <<'PY' || fail "second line is wrong: $(cat "$r")"
import json, sys
o = json.loads(open(sys.argv[1]).read().splitlines()[1])
assert o["recipe"] == "02-lint" and o["status"] == "failing", o
assert o["source"] == "external", "an appended line claiming source engine must be external: %r" % o
PY

snap=$(cat "$r"; printf x)
assert_fails_with EINVAL sh_append "$r" $'not json at all\n'
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after an invalid append"

assert_fails_with EPERM sh_write "$r" $'{"recipe":"01-build","status":"validated"}\n'
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after a rewrite attempt"
assert_fails_with EPERM truncate -s 0 "$r"
assert_fails_with EPERM truncate -s 10 "$r"
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after truncate attempts"
assert_fails_with EPERM rm -f "$r"
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after rm attempt"

# External claims are listed apart and never count as validated evidence.
printf '# Plan\n\n```validation-recipes\n01-build\n```\n' >"$M/fix-1/plan.md"
ev=$(cat "$M/fix-1/validation/evidence.md")
assert_contains "$ev" "[0/1 validated]" "evidence.md"
assert_contains "$ev" "missing" "evidence.md (01-build never ran in the engine)"
assert_contains "$ev" "ran it by hand" "evidence.md external claims"
assert_contains "$ev" "Generated from validation/registry.jsonl" "evidence.md"
assert_eq "0/1 validated" "$(status_field "$M" fix-1 evidence)" "status evidence"

# The lines survive a remount.
umount_store
mount_store
assert_eq "$snap" "$(cat "$r"; printf x)" "registry after remount"
exit 0
