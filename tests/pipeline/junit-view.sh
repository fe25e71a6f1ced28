#!/usr/bin/env bash
# validation/junit.xml renders the evidence as JUnit XML that a real reader takes: the plan names
# 01-build (validated), 06-prereq (blocked), 11-nasty (failing, its log full of control bytes,
# "]]>", "<&", quotes and bytes that are not UTF-8) and 02-lint (never run: missing). Read with
# junitparser (the reader Debian ships) the file holds one testsuite named after the item with
# one testcase per named recipe, counts 4 tests, 1 failure, 2 skipped; the failure carries the
# last lines of its log (not the first) and xmllint parses the document. An external claim is
# left out; a later validated run turns the failure into a pass; the view is read-only.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
cat >"$RECIPES/11-nasty.sh" <<'EOF'
#!/usr/bin/env bash
# summary: fails with a log that is hard on XML
# needs: none
for i in $(seq -w 1 60); do echo "marker-$i"; done
printf 'ctl\001\002\013\014\033[31mred\033[0m bell\a nul\000 end\n'
printf 'cdata ]]> and <tag attr="x"> & ampersand\n'
printf 'latin1 \xe9t\xe9 bad \xff\xfe utf8 \xc3\xa9t\xc3\xa9 surrogate \xed\xa0\x80 cr\rend\n'
if [ -e FLAG ]; then exit 0; fi
echo "the last words of 11-nasty"
exit 3
EOF
flag=$T/nasty-passes # once it exists, 11-nasty passes
sed -i "s|FLAG|$flag|" "$RECIPES/11-nasty.sh"
chmod +x "$RECIPES/11-nasty.sh"
pipeline_item "$(plan_stage 01-build 02-lint 06-prereq 11-nasty)"

ctl "$M" fix-1 advance
settled fix-1 >/dev/null
printf 'rerun 01-build\nrerun 06-prereq\nrerun 11-nasty\n' >"$d/ctl"
wait_for bash -c '[ "$(python3 "$1" count "$2" source=engine)" = 3 ]' _ "$FIXTURES/registry.py" "$r"
settled fix-1 >/dev/null
assert_eq validated "$(reg field "$r" -1 status recipe=01-build)" "01-build"
assert_eq blocked "$(reg field "$r" -1 status recipe=06-prereq)" "06-prereq"
assert_eq failing "$(reg field "$r" -1 status recipe=11-nasty)" "11-nasty"
head=$(worktree_head fix-1)
# An external claim that 02-lint validated: never a testcase of its own, never a pass.
printf '{"recipe":"02-lint","status":"validated","head":"%s"}\n' "$head" >>"$r"

x=$d/validation/junit.xml
ls "$d/validation" | grep -qx junit.xml || fail "validation/ does not list junit.xml"
cp "$x" "$T/junit.xml"
xmllint --noout "$T/junit.xml" || fail "xmllint refuses junit.xml: $(cat "$T/junit.xml")"
assert_eq "$(stat -c %s "$x")" "$(stat -c %s "$T/junit.xml")" "stat size and content size"

# read_junit FILE : what junitparser reads, one line per fact (Debian's python3-junitparser,
# so the system's python3, whatever python3 comes first in PATH).
read_junit()
{
	/usr/bin/python3 - "$1" <<'EOF'
import sys
from junitparser import JUnitXml, Failure, Skipped, Error
xml = JUnitXml.fromfile(sys.argv[1])
suites = list(xml)
print("suites", len(suites))
s = suites[0]
print("suite", s.name, s.tests, s.failures, s.errors, s.skipped, bool(s.timestamp))
for c in s:
    kinds = [type(r).__name__ for r in c.result]
    print("case", c.classname, c.name, ",".join(kinds) or "passed", c.time >= 0)
    for r in c.result:
        print("message", c.name, r.message)
        print("type", c.name, r.type)
        if isinstance(r, (Failure, Error)):
            open(sys.argv[1] + "." + c.name, "w").write(r.text or "")
EOF
}
out=$(read_junit "$T/junit.xml") || fail "junitparser cannot read junit.xml: $(cat "$T/junit.xml")"
echo "$out"
assert_contains "$out" "suites 1" "suites"
assert_contains "$out" "suite fix-1 4 1 0 2 True" "suite counts"
assert_eq "01-build 02-lint 06-prereq 11-nasty" \
	"$(sed -n 's/^case packetfs\.fix-1 \([^ ]*\) .*/\1/p' <<<"$out" | tr '\n' ' ' | sed 's/ $//')" \
	"testcase names, in the plan's order"
assert_contains "$out" "case packetfs.fix-1 01-build passed True" "01-build"
assert_contains "$out" "case packetfs.fix-1 02-lint Skipped True" "02-lint (missing)"
assert_contains "$out" "message 02-lint missing: no engine run at ${head:0:12}" "02-lint message"
assert_contains "$out" "case packetfs.fix-1 06-prereq Skipped True" "06-prereq (blocked)"
assert_contains "$out" "message 06-prereq blocked: " "06-prereq message"
assert_contains "$out" "case packetfs.fix-1 11-nasty Failure True" "11-nasty (failing)"
assert_contains "$out" "message 11-nasty failing: exit code 3" "11-nasty message"
assert_contains "$out" "type 11-nasty failing" "11-nasty type"
tail=$(cat "$T/junit.xml.11-nasty")
assert_contains "$tail" "log: $(reg field "$r" -1 evidence recipe=11-nasty)" "failure text names the log"
assert_contains "$tail" "the last words of 11-nasty" "failure text: the log's tail"
assert_contains "$tail" "marker-60" "failure text: the log's tail"
assert_contains "$tail" 'cdata ]]> and <tag attr="x"> & ampersand' "failure text keeps ]]> <&"
assert_contains "$tail" "utf8 $(printf '\xc3\xa9t\xc3\xa9')" "failure text keeps UTF-8"
assert_contains "$tail" "ctl[31mred[0m bell nul end" "control bytes are removed"
assert_not_contains "$tail" "marker-01" "the head of the log"
if LC_ALL=C grep -q $'[\x01\x02\x0b\x0c\x1b]' "$T/junit.xml"; then
	fail "junit.xml holds control bytes"
fi

# A validated run at the head turns the failure into a pass.
touch "$flag"
ctl "$M" fix-1 "rerun 11-nasty"
wait_for bash -c '[ "$(python3 "$1" count "$2" recipe=11-nasty)" = 2 ]' _ "$FIXTURES/registry.py" "$r"
settled fix-1 >/dev/null
cp "$x" "$T/junit2.xml"
out=$(read_junit "$T/junit2.xml") || fail "junitparser cannot read junit.xml: $(cat "$T/junit2.xml")"
assert_contains "$out" "suite fix-1 4 0 0 2 True" "suite counts after the rerun"
assert_contains "$out" "case packetfs.fix-1 11-nasty passed True" "11-nasty after the rerun"

# Read-only, as every view.
assert_fails_with EACCES sh -c "echo x >'$x'"
exit 0
