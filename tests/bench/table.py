#!/usr/bin/env python3
"""The results table of README.md, made from one results file of tests/bench/run.sh alone.

    table.py RESULTS.md [GOALS.json]     print the table
    table.py --check README.md           check README's table against the file it names

RESULTS.md is a report of tests/bench/run.sh (its table: | workload | metric | unit | better |
disk | bindfs | packetfs | pfs/disk | pfs/bindfs |). GOALS.json (default: goals.json beside
this script) maps "WORKLOAD|METRIC" to a goal: "RELOP Nx bindfs" or "RELOP Nx disk" (the ratio
packetfs/that column), or "RELOP N UNIT" (packetfs's own value, in the row's unit), RELOP one of
>=, <=, <, >. The printed table has one row per row of RESULTS, in its order, with the goal and
whether it was met ("yes", "no", or empty without a goal); every number is the file's own text.

In README.md the table stands between the lines
    <!-- bench-table: tests/bench/results/NAME.md -->
    <!-- /bench-table -->
and --check fails (exit 1, printing the difference) unless it is exactly what this script makes
of that file. tests/tree/bench-table.sh runs the check.
"""
import difflib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLS = ["workload", "metric", "unit", "better", "disk", "bindfs", "packetfs", "pfs/disk",
        "pfs/bindfs"]
GOAL = re.compile(r"^(>=|<=|<|>)\s*([0-9.]+)\s*(?:x\s+(bindfs|disk)|(\S+))$")


def rows_of(path):
    """The table rows of a results file, as dicts of COLS, in order."""
    rows, header = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not line.startswith("|"):
                if header:
                    break
                continue
            if cells == COLS:
                header = cells
                continue
            if header and not set(line.strip()) <= set("|-: "):
                if len(cells) != len(COLS):
                    raise SystemExit("%s: a table row has %d cells, want %d: %s"
                                     % (path, len(cells), len(COLS), line.strip()))
                rows.append(dict(zip(COLS, cells)))
    if not rows:
        raise SystemExit("%s: no results table (| %s |)" % (path, " | ".join(COLS)))
    return rows


def num(text):
    try:
        return float(text)
    except ValueError:
        return None


def met(row, goal):
    """'yes', 'no' or '' (no goal, or a value the goal cannot be judged on)."""
    m = GOAL.match(goal)
    if not m:
        raise SystemExit("goal %r: not RELOP Nx bindfs|disk nor RELOP N UNIT" % goal)
    op, bound, col, unit = m.group(1), float(m.group(2)), m.group(3), m.group(4)
    if col:
        v = num(row["pfs/" + col])
    else:
        if unit != row["unit"]:
            raise SystemExit("goal %r of %s|%s: unit %s, the row's is %s"
                             % (goal, row["workload"], row["metric"], unit, row["unit"]))
        v = num(row["packetfs"])
    if v is None:
        return ""
    ok = {">=": v >= bound, "<=": v <= bound, "<": v < bound, ">": v > bound}[op]
    return "yes" if ok else "no"


def table(results, goals_path):
    with open(goals_path, encoding="utf-8") as f:
        goals = json.load(f)
    rows = rows_of(results)
    known = {"%s|%s" % (r["workload"], r["metric"]) for r in rows}
    out = ["| workload | metric | unit | disk | bindfs | packetfs | pfs/disk | pfs/bindfs | goal "
           "| met |", "|---|---|---|--:|--:|--:|--:|--:|---|---|"]
    for r in rows:
        g = goals.get("%s|%s" % (r["workload"], r["metric"]), "")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["metric"], r["unit"], r["disk"], r["bindfs"], r["packetfs"],
            r["pfs/disk"], r["pfs/bindfs"], g, met(r, g) if g else ""))
    unused = sorted(set(goals) - known)
    return out, unused


def check(readme):
    text = open(readme, encoding="utf-8").read().split("\n")
    starts = [i for i, l in enumerate(text) if l.startswith("<!-- bench-table: ")]
    if len(starts) != 1:
        print("%s: want one <!-- bench-table: FILE --> line, found %d" % (readme, len(starts)))
        return 1
    s = starts[0]
    name = text[s][len("<!-- bench-table: "):].rstrip().removesuffix("-->").strip()
    try:
        e = text.index("<!-- /bench-table -->", s)
    except ValueError:
        print("%s: no <!-- /bench-table --> after line %d" % (readme, s + 1))
        return 1
    root = os.path.dirname(os.path.abspath(readme))
    want, _ = table(os.path.join(root, name), os.path.join(HERE, "goals.json"))
    have = text[s + 1:e]
    if have != want:
        print("%s: the table is not what tests/bench/table.py makes of %s:" % (readme, name))
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
            have, want, "README.md", "table.py " + name, lineterm=""))
        return 1
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        return check(argv[2])
    if len(argv) not in (2, 3) or argv[1].startswith("-"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    out, unused = table(argv[1], argv[2] if len(argv) == 3 else os.path.join(HERE, "goals.json"))
    print("\n".join(out))
    for g in unused:
        print("table.py: goal %s: no such row in %s" % (g, argv[1]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
