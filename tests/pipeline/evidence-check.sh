#!/usr/bin/env bash
# packetfs check STORE verifies every log against its recorded sha256 and every registry line
# against its run, and names what is wrong: exit 0 for a consistent store, 1 when something is
# wrong (or the store cannot be opened), 2 for a usage error (SPEC §7). The faults are made
# with the sqlite3 command line tool (or Python's sqlite3 module) on the unmounted store.
. "$(dirname "$0")/../lib.sh"
std_item 01-build 02-lint 03-fail

ctl "$M" fix-1 advance
wait_state "$M" fix-1 blocked   # 03-fail fails: the review gate refuses
printf '{"recipe":"02-lint","status":"validated","note":"claimed"}\n' >>"$r"
assert_eq 4 "$(reg count "$r")" "registry lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"
umount_store

# sql STATEMENT... : runs SQL on the store's database.
sql()
{
	if command -v sqlite3 >/dev/null 2>&1; then
		sqlite3 -batch "$STORE/packetfs.db" "$@"
	else
		python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
if sys.argv[2].lstrip().upper().startswith("SELECT"):
    for row in c.execute(sys.argv[2]):
        print("|".join(str(v) for v in row))
else:
    c.executescript(sys.argv[2])
c.commit()' "$STORE/packetfs.db" "$@"
	fi
}

# check_fails WANT... : packetfs check exits 1 and prints each WANT.
check_fails()
{
	local out rc=0 w
	out=$("$PFS" check "$STORE" 2>&1) || rc=$?
	assert_eq 1 "$rc" "exit status of packetfs check (output: $out)"
	for w in "$@"; do
		assert_contains "$out" "$w" "packetfs check output"
	done
	assert_not_contains "$out" "store is consistent" "packetfs check output"
}

# A consistent store.
out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check of a sound store failed: $out"
assert_eq "store is consistent" "$out" "packetfs check output"

# Usage and a missing store.
rc=0
"$PFS" check >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "exit status of packetfs check without STORE"
rc=0
"$PFS" check "$STORE" extra >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "exit status of packetfs check with two arguments"
rc=0
out=$("$PFS" check "$T/no-such-store" 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status of packetfs check of a missing store"
assert_contains "$out" "packetfs: check: " "error of packetfs check of a missing store"

cp "$STORE/packetfs.db" "$T/clean.db"
restore()
{
	cp "$T/clean.db" "$STORE/packetfs.db"
	rm -f "$STORE/packetfs.db-wal" "$STORE/packetfs.db-shm"
}
build_run=$(sql "SELECT run_no FROM runs WHERE name = '01-build'")
build_log=$(sql "SELECT log_path FROM runs WHERE name = '01-build'")
[ -n "$build_run" ] && [ -n "$build_log" ] || fail "no 01-build run in the runs table"

# 1. A log altered in place, same size: its sha256 no longer matches.
sql "UPDATE log_chunks SET data = CAST(replace(CAST(data AS TEXT), 'hello', 'HELLO') AS BLOB)
     WHERE run_id = (SELECT id FROM runs WHERE name = '01-build')"
check_fails "fix-1: run $build_run ($build_log): log does not match its recorded sha256"
restore

# 2. A log cut short.
sql "DELETE FROM log_chunks WHERE run_id = (SELECT id FROM runs WHERE name = '02-lint')
     AND off = (SELECT MAX(off) FROM log_chunks WHERE run_id = (SELECT id FROM runs WHERE name = '02-lint'))"
check_fails "log does not match its recorded size" "02-lint"
restore

# 3. A log altered and its recorded sha256 wiped with it: a finished run without a sha256 is
# named, and the registry line no longer matches the run.
sql "UPDATE log_chunks SET data = CAST(replace(CAST(data AS TEXT), 'hello', 'HELLO') AS BLOB)
     WHERE run_id = (SELECT id FROM runs WHERE name = '01-build');
     UPDATE runs SET log_sha256 = '' WHERE name = '01-build'"
check_fails "fix-1: run $build_run ($build_log): no sha256 recorded for a finished run" \
	"log_sha256 differs from the runs table"
restore

# 4. The run of a failing recipe turned validated: its registry line no longer matches.
fail_run=$(sql "SELECT run_no FROM runs WHERE name = '03-fail'")
sql "UPDATE runs SET status = 'validated', exit_code = 0 WHERE name = '03-fail'"
check_fails "fix-1: registry line of run $fail_run (03-fail): status differs from the runs table"
restore

# 5. A run moved to another commit: its registry line names the head it ran at.
sql "UPDATE runs SET head = '0123456789abcdef0123456789abcdef01234567' WHERE name = '02-lint'"
check_fails "(02-lint): head differs from the runs table"
restore

# 6. A forged engine line: a line claiming a validated 03-fail run, tied to the 01-build run.
sql "INSERT INTO registry(item_id, line, source, run_id)
     SELECT item_id, replace(replace(line, '\"recipe\":\"01-build\"', '\"recipe\":\"03-fail\"'),
       '\"note\":\"\"', '\"note\":\"forged\"'), 'engine', run_id
     FROM registry WHERE line LIKE '%\"recipe\":\"01-build\"%'"
check_fails "recipe differs from the runs table"
restore

# 7. An engine line without a run.
sql "INSERT INTO registry(item_id, line, source, run_id)
     SELECT item_id, line, 'engine', NULL FROM registry WHERE line LIKE '%\"recipe\":\"02-lint\"%'
     AND source = 'engine'"
check_fails "no matching run in the runs table"
restore

# 8. An external line that says it is the engine's (only the engine's lines count).
sql "INSERT INTO registry(item_id, line, source, run_id)
     SELECT id, '{\"recipe\":\"03-fail\",\"status\":\"validated\",\"source\":\"engine\"}',
       'external', NULL FROM items WHERE name = 'fix-1'"
check_fails "external line says \"source\":\"engine\""
restore

out=$("$PFS" check "$STORE" 2>&1) || fail "packetfs check after restoring the store failed: $out"
exit 0
