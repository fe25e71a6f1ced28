#!/usr/bin/env python3
# recipes/lib/junit-merge.py - merges the results of the test systems that
# 02-unit-tests ran into one JUnit XML file; a helper, never run as a recipe
# (the catalog lists only NN-name files).
#
#   junit-merge.py OUT [--junit NAME FILE]... [--make NAME LOG STATUS]...
#
# --junit: the JUnit XML a tool wrote (meson test, ctest --output-junit,
#   pytest --junitxml); its suites go into OUT under the tool's name. A
#   file that is missing adds nothing (the tool ran no test); one that
#   cannot be read adds one testcase with an <error> saying so.
# --make: `make check` / `make test` (or a ctest without --output-junit),
#   which writes no JUnit: LOG is its output and STATUS its exit status.
#   When LOG holds automake's test harness summary ("# TOTAL: N"), each
#   "PASS: t" / "FAIL: t" / "SKIP: t" / "XFAIL: t" / "XPASS: t" /
#   "ERROR: t" line is one testcase ("# TOTAL: 0": none). Otherwise the
#   last count it prints is taken: "N passed, M failed" (N passing and M
#   failed testcases), ctest's "P% tests passed, M tests failed out of T",
#   "Ran N tests", "All N tests passed", "N tests passed", or "Nothing to
#   be done for 'TARGET'" (none); at most 100000 of each. Without any, the
#   target's run is one testcase. A nonzero STATUS that no failed testcase
#   accounts for adds one.
#
# OUT ("-": none) is the merged <testsuites>, written whole or not at all
# (a temporary file renamed into place). Prints one line per input and
# a last line "total: ran=N failed=F skipped=S" (ran excludes skipped
# tests; failed counts <failure> and <error> testcases), as the engine
# counts them (engine/format/testcount.h). Exit status 0, or 2 on bad usage.
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET


def counts(suite):
    """(tests, failed, skipped) of the testcases in a suite element."""
    tests = failed = skipped = 0
    for case in suite.iter("testcase"):
        tests += 1
        tags = {child.tag for child in case}
        if "failure" in tags or "error" in tags:
            failed += 1
        elif "skipped" in tags:
            skipped += 1
    return tests, failed, skipped


def suite(name, cases):
    """A <testsuite> of (name, kind, message) cases; kind: None, failure, error, skipped."""
    s = ET.Element("testsuite", name=name)
    for case_name, kind, message in cases:
        c = ET.SubElement(s, "testcase", name=case_name, classname=name)
        if kind:
            ET.SubElement(c, kind, message=message)
    return s


def from_junit(name, path):
    if not os.path.exists(path):
        return []
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        return [suite(name, [(name, "error", "unreadable JUnit XML %s: %s" % (path, e))])]
    if root.tag == "testsuite":
        suites = [root]
    elif root.tag == "testsuites":
        suites = [s for s in root if s.tag == "testsuite"]
    else:
        return [suite(name, [(name, "error", "%s: root element <%s>" % (path, root.tag))])]
    for s in suites:
        s.set("name", "%s: %s" % (name, s.get("name", "")))
    return suites


AUTOMAKE = re.compile(r"^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): (.+)$")
KINDS = {"PASS": None, "XFAIL": None, "FAIL": "failure", "XPASS": "failure",
         "ERROR": "error", "SKIP": "skipped"}
# a count not inside a longer word or number ("v1.5 passed" is none)
NUM = r"(?:^|(?<=[^\w.%-]))(\d+)"
PLAIN = re.compile(NUM + r" passed, (\d+) failed\b")
CTEST = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)$")
MAX_CASES = 100000  # of a count read from output
PASSED = [re.compile(r"\bRan (\d+) tests?\b"), re.compile(r"\bAll (\d+) tests? passed\b"),
          re.compile(NUM + r" (?:tests? )?passed\b")]


def output_count(lines, target):
    """(passed, failed) the last count line of lines says; None when none does."""
    for l in reversed(lines):
        m = CTEST.match(l.strip())
        if m:
            return max(int(m.group(2)) - int(m.group(1)), 0), int(m.group(1))
        m = PLAIN.search(l)
        if m:
            return int(m.group(1)), int(m.group(2))
        for p in PASSED:
            m = p.search(l)
            if m:
                return int(m.group(1)), 0
        if re.search(r"Nothing to be done for .%s" % re.escape(target), l):
            return 0, 0
    return None


def from_make(name, log, status):
    try:
        with open(log, errors="replace") as f:
            # colour escapes of --enable-color-tests
            lines = [re.sub(r"\x1b\[[0-9;]*m", "", l.rstrip("\n")) for l in f]
    except OSError:
        lines = []
    if any(l.startswith("# TOTAL:") for l in lines):
        cases = []
        for l in lines:
            m = AUTOMAKE.match(l)
            if m:
                kind = KINDS[m.group(1)]
                cases.append((m.group(2), kind, m.group(1) if kind else ""))
    else:
        count = output_count(lines, name.split()[-1])
        if count is None:  # the run is the test (failed: added below)
            cases = [(name, None, "")] if status == 0 else []
        else:
            count = [min(n, MAX_CASES) for n in count]
            cases = [("%s #%d" % (name, i + 1), None, "") for i in range(count[0])]
            cases += [("%s #%d" % (name, count[0] + i + 1), "failure", "counted from its output")
                      for i in range(count[1])]
    if status != 0 and not any(k in ("failure", "error") for _, k, _ in cases):
        cases.append((name, "failure", "exit status %d" % status))
    return [suite(name, cases)]


def main(argv):
    if len(argv) < 2:
        print("usage: junit-merge.py OUT [--junit NAME FILE]... [--make NAME LOG STATUS]...",
              file=sys.stderr)
        return 2
    out, args = argv[1], argv[2:]
    root = ET.Element("testsuites", name="02-unit-tests")
    total = [0, 0, 0]
    while args:
        if args[0] == "--junit" and len(args) >= 3:
            name, suites, args = args[1], from_junit(args[1], args[2]), args[3:]
        elif args[0] == "--make" and len(args) >= 4:
            name, suites = args[1], from_make(args[1], args[2], int(args[3]))
            args = args[4:]
        else:
            print("junit-merge.py: bad arguments: %s" % " ".join(args), file=sys.stderr)
            return 2
        mine = [0, 0, 0]
        for s in suites:
            root.append(s)
            for k, v in enumerate(counts(s)):
                mine[k] += v
        print("%s: %d test%s ran, %d failed, %d skipped" %
              (name, mine[0] - mine[2], "" if mine[0] - mine[2] == 1 else "s", mine[1], mine[2]))
        total = [a + b for a, b in zip(total, mine)]
    root.set("tests", str(total[0]))
    root.set("failures", str(total[1]))
    root.set("skipped", str(total[2]))
    if out != "-":
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(out)), prefix=".junit-")
        with os.fdopen(fd, "wb") as f:
            ET.ElementTree(root).write(f, encoding="utf-8", xml_declaration=True)
        os.rename(tmp, out)
    print("total: ran=%d failed=%d skipped=%d" % (total[0] - total[2], total[1], total[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
