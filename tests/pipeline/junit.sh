#!/usr/bin/env bash
# A recipe run that writes JUnit XML to $PACKET_JUNIT has its tests counted from it, before any
# summary in its log: JUnit XML without a testcase is failing ("no tests ran (JUnit XML)"), one
# with a failed testcase is failing though the recipe exits 0 ("1 of 3 tests failed (JUnit
# XML)"), one that cannot be read is failing, and one whose tests passed is validated with its
# counts noted; a nonzero exit stays failing whatever the file says. Each run gets a fresh path
# of its own in a private directory, removed with what is in it once the run is recorded (an
# empty one kept under junit-spare/ for a later run, which finds it fresh); a recipe that writes
# no JUnit XML is judged as before.
. "$(dirname "$0")/../lib.sh"
copy_recipes junit
names="01-build 20-junit-none 21-junit-fail 22-junit-pass 23-junit-bad 24-junit-exit1"
names+=" 26-junit-litter"
# shellcheck disable=SC2086
std_item $names

ctl "$M" fix-1 advance
wait_for bash -c 'case "$(sed -n "s/^state: *//p" "$1")" in running | queued) exit 1 ;; esac' \
	_ "$d/status"
assert_eq 7 "$(reg count "$r" source=engine)" "registry lines"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# expect RECIPE STATUS NOTE
expect()
{
	assert_eq "$2" "$(reg field "$r" -1 status recipe="$1")" "status of $1"
	assert_eq "$3" "$(reg field "$r" -1 note recipe="$1")" "note of $1"
	assert_contains "$(cat "$d/$(reg field "$r" -1 evidence recipe="$1")")" \
		"# packetfs: status $2${3:+: $3}" "log of $1"
}
expect 01-build validated ""
expect 20-junit-none failing "no tests ran (JUnit XML)"
expect 21-junit-fail failing "1 of 3 tests failed (JUnit XML)"
expect 22-junit-pass validated "2 tests ran, 1 skipped (JUnit XML)"
assert_eq failing "$(reg field "$r" -1 status recipe=23-junit-bad)" "status of 23-junit-bad"
n=$(reg field "$r" -1 note recipe=23-junit-bad)
assert_contains "$n" "JUnit XML unreadable: junit.xml: line " "note of 23-junit-bad"
expect 24-junit-exit1 failing ""
expect 26-junit-litter validated "2 tests ran (JUnit XML)"
for rec in 20-junit-none 21-junit-fail 22-junit-pass 23-junit-bad; do
	assert_eq 0 "$(reg field "$r" -1 exit_code recipe=$rec)" "exit code of $rec"
done
assert_eq 3 "$(reg field "$r" -1 exit_code recipe=24-junit-exit1)" "exit code of 24-junit-exit1"

# Each run had a path of its own, in a directory of its own under the store, gone now.
paths=()
for rec in 20-junit-none 21-junit-fail 22-junit-pass 23-junit-bad 24-junit-exit1 26-junit-litter; do
	p=$(sed -n 's/^junit: //p' "$d/$(reg field "$r" -1 evidence recipe=$rec)")
	[ -n "$p" ] || fail "the log of $rec names no \$PACKET_JUNIT"
	assert_eq "$STORE/junit/" "${p%/*/junit.xml}/" "the directory of $rec's \$PACKET_JUNIT"
	[ ! -e "${p%/*}" ] || fail "${p%/*} (of $rec) is still there"
	paths+=("$p")
done
assert_eq 6 "$(printf '%s\n' "${paths[@]}" | sort -u | wc -l)" "distinct \$PACKET_JUNIT paths"
assert_eq "" "$(ls -A "$STORE/junit")" "what is left in $STORE/junit"
# The emptied directories are kept for the next runs under other names, each as mkdir makes one.
[ -n "$(ls -A "$STORE/junit-spare" 2>/dev/null)" ] || fail "no directory kept in $STORE/junit-spare"
for s in "$STORE"/junit-spare/*; do
	assert_eq 700 "$(stat -c %a "$s")" "the mode of $s"
	assert_eq "" "$(ls -A "$s")" "what is in $s"
done
assert_eq fail "$(status_field "$M" fix-1 verdict)" "status verdict"
assert_contains "$(cat "$d/validation/evidence.md")" "| 1 of 3 tests failed (JUnit XML) |" \
	"evidence.md"

# A rerun gets a fresh path again (22-junit-pass checks that nothing is there yet).
ctl "$M" fix-1 "rerun 22-junit-pass"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=22-junit-pass)" = 2 ]' _ \
	"$FIXTURES/registry.py" "$r"
expect 22-junit-pass validated "2 tests ran, 1 skipped (JUnit XML)"
p=$(sed -n 's/^junit: //p' "$d/$(reg field "$r" -1 evidence recipe=22-junit-pass)")
[ "$p" != "${paths[2]}" ] || fail "the rerun got the same \$PACKET_JUNIT: $p"
wait_for bash -c '[ -z "$(ls -A "$1")" ]' _ "$STORE/junit"
exit 0
