#!/usr/bin/env bash
# README.md's performance table is what tests/bench/table.py makes of the results file it names,
# and nothing else: a number changed by hand, a row dropped or a goal edited without the table
# following fails. The check itself is shown to fail on such a change.
. "$(dirname "$0")/../lib.sh"
check=(python3 "$ROOT/tests/bench/table.py" --check)
out=$("${check[@]}" "$ROOT/README.md" 2>&1) || fail "README.md's performance table: $out"

# A copy of README.md (beside a copy of the results it names) with one number changed.
name=$(sed -n 's/^<!-- bench-table: \(.*\) -->$/\1/p' "$ROOT/README.md")
[ -n "$name" ] || fail "README.md names no results file"
mkdir -p "$T/copy/$(dirname "$name")"
cp "$ROOT/$name" "$T/copy/$name"
awk '/^<!-- bench-table: /{t=1} t && /^\| W1 \|/ && !done {sub(/\| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|/, "| 1 | 2 | 3 |"); done=1} {print}' \
	"$ROOT/README.md" >"$T/copy/README.md"
cmp -s "$ROOT/README.md" "$T/copy/README.md" && fail "the test changed nothing in the copy"
rc=0
out=$("${check[@]}" "$T/copy/README.md" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "a changed number passed the check (exit $rc): $out"
assert_contains "$out" "is not what tests/bench/table.py makes of $name" "the check's message"
exit 0
