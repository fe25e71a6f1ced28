#!/usr/bin/env python3
"""The documentation agrees with the program (tests/tree/docs.sh runs this).

    docs.py ROOT HELP_TEXT_FILE OUT_DIR

Checks, each failure one line "FAIL: what" on stderr, exit 1 when any:
- every fenced ```json block of the pages (README.md, docs/*.md, examples/README.md,
  tests/bench/*.md) is marked by the comment line before it, <!-- docs-test: KIND -->, KIND
  pipeline, registry-line or fragment; pipeline and registry-line examples are JSON (a fragment,
  a few members or elements, is only marked). plan, plan-disposition and review mark Markdown
  blocks. Each marked example but a fragment is written to OUT_DIR/KIND-N (N counting from 1
  per kind) for docs.sh to load or drive;
- every relative link [text](path) and every docs/NAME.md or tests/bench/NAME.md named in
  those pages resolves to a file (an #anchor of a link to a Markdown file must be
  one of its headings, as GitHub makes them);
- the commands of packetfs(1)'s COMMANDS section and those `packetfs --help` lists are the same
  set; README.md and docs/ name each of them (`packetfs COMMAND`, in prose or a sh block) and
  name no other in backquotes; every command of the SYNOPSIS is one of the COMMANDS section's;
- the keys of pipeline.json agree between packetfs-pipeline(5) (its TOP-LEVEL, STAGE and
  NOTIFY KEYS sections and the executor's keys), schema/pipeline.schema.json and the parser's
  key tables (engine/format/config*.c);
- docs/guarantees.md has the sections "## N." of every "SPEC §N" the sources cite.
"""
import glob
import json
import os
import re
import sys

ROOT, HELP, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
errors = []
KINDS = {"pipeline", "registry-line", "fragment", "plan", "plan-disposition", "review"}


def fail(msg):
    errors.append(msg)


def rel(path):
    return os.path.relpath(path, ROOT)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


docs = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + \
    [os.path.join(ROOT, p) for p in ("examples/README.md", "tests/bench/README.md",
                                     "tests/bench/HISTORY.md")]


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, blanks to '-'."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def opening(line):
    """(fence, info) of a line that opens a fenced block (CommonMark), else None."""
    m = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
    if not m or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    return m.group(1), m.group(2).strip()


def closes(line, fence):
    m = re.match(r"^ {0,3}(`{3,}|~{3,})\s*$", line)
    return bool(m) and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)


def anchors(path):
    out, fence = set(), None
    for line in read(path).splitlines():
        if fence is None and opening(line):
            fence = opening(line)[0]
            continue
        if fence is not None:
            if closes(line, fence):
                fence = None
            continue
        if fence is None and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


# ---- examples and links ----
counts = {}
doc_text = ""
for path in docs:
    text = read(path)
    lines = text.splitlines()
    i = 0
    prose = []
    while i < len(lines):
        line = lines[i]
        m = opening(line)
        if not m:
            prose.append(line)
            i += 1
            continue
        fence, lang = m[0], m[1].split(" ")[0]
        j = i + 1
        while j < len(lines) and not closes(lines[j], fence):
            j += 1
        body = "\n".join(lines[i + 1:j]) + "\n"
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = re.match(r"^<!-- docs-test: ([\w-]+) -->$", lines[k].strip()) if k >= 0 else None
        where = "%s:%d" % (rel(path), i + 1)
        if mark and mark.group(1) not in KINDS:
            fail("%s: unknown docs-test kind %r" % (where, mark.group(1)))
        elif lang == "json" and not mark:
            fail("%s: a json block without <!-- docs-test: pipeline|registry-line|fragment -->"
                 % where)
        elif mark:
            kind = mark.group(1)
            if kind in ("pipeline", "registry-line"):
                try:
                    json.loads(body)
                except ValueError as e:
                    fail("%s: the %s example is not JSON: %s" % (where, kind, e))
            if kind != "fragment":
                counts[kind] = counts.get(kind, 0) + 1
                with open(os.path.join(OUT, "%s-%d" % (kind, counts[kind])), "w") as f:
                    f.write(body)
        if lang in ("sh", "console", ""):
            prose.extend(lines[i + 1:j])
        i = j + 1
    doc_text += "\n".join(prose) + "\n"
    # Relative links, and docs/... or tests/bench/... file names in the text.
    targets = [(t, "link") for t in re.findall(r"\]\(([^)\s]+)\)", text)]
    targets += [(t, "name") for t in re.findall(r"(?<![\w/.])((?:docs|tests/bench)/[\w.-]+\.md)",
                                                text)]
    for t, how in targets:
        if re.match(r"^[a-z]+:", t):
            continue
        target, _, frag = t.partition("#")
        base = ROOT if how == "name" else os.path.dirname(path)
        dest = os.path.normpath(os.path.join(base, target)) if target else path
        if not os.path.exists(dest):
            fail("%s: %s %s does not exist" % (rel(path), "link" if how == "link" else "file",
                                                t))
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            fail("%s: link %s: no heading #%s in %s" % (rel(path), t, frag, rel(dest)))

for kind in ("pipeline", "plan", "plan-disposition", "review", "registry-line"):
    if not counts.get(kind):
        fail("no <!-- docs-test: %s --> example in README.md or docs/" % kind)

# ---- commands ----
man1 = read(os.path.join(ROOT, "man", "packetfs.1"))
sections = re.split(r"^\.SH ", man1, flags=re.M)
sec = {s.split("\n", 1)[0].strip(): s for s in sections}
man_cmds = set()
for m in re.finditer(r"^\.TP[^\n]*\n\.B[IR]? (?:\"([a-z]+)[ \"]|([a-z]+) \")", sec.get("COMMANDS", ""), re.M):
    man_cmds.add(m.group(1) or m.group(2))
syn_cmds = set(re.findall(r"^\.B packetfs ([a-z]+)", sec.get("SYNOPSIS", ""), re.M))
help_text = read(HELP)
help_cmds = set(re.findall(r"^  ([a-z]+)\s{2,}", help_text, re.M))
help_cmds.add("help")
if not man_cmds or not help_cmds:
    fail("no commands found in packetfs(1) COMMANDS (%d) or packetfs --help (%d)"
         % (len(man_cmds), len(help_cmds)))
for c in sorted(help_cmds - man_cmds):
    fail("packetfs --help lists %s, packetfs(1) COMMANDS does not" % c)
for c in sorted(man_cmds - help_cmds):
    fail("packetfs(1) COMMANDS has %s, packetfs --help does not" % c)
for c in sorted(syn_cmds - man_cmds):
    fail("packetfs(1) SYNOPSIS has %s, its COMMANDS section does not" % c)
words = set(re.findall(r"\bpacketfs ([a-z]+)\b", doc_text))
for c in sorted(help_cmds - words - {"help"}):
    fail("no page of README.md or docs/ names `packetfs %s`" % c)
for c in sorted(set(re.findall(r"`packetfs ([a-z]+)\b", doc_text)) - help_cmds):
    fail("the docs name `packetfs %s`, which is no command" % c)

# ---- pipeline keys ----
man5 = read(os.path.join(ROOT, "man", "packetfs-pipeline.5"))
sec5 = {s.split("\n", 1)[0].strip(): s for s in re.split(r"^\.SH ", man5, flags=re.M)}


def man_keys(name):
    return set(re.findall(r"^\.TP\n\.BR ([a-z_]+) ", sec5.get(name, ""), re.M))


exec_text = re.search(r"^\.BR executor .*?(?=^\.TP)", sec5.get("TOP-LEVEL KEYS", ""),
                      re.M | re.S)
man = {
    "top": man_keys("TOP-LEVEL KEYS"),
    "stage": man_keys("STAGE KEYS"),
    "notify": man_keys("NOTIFY KEYS"),
    "executor": ({"kind"} | set(re.findall(r"^\.B ([a-z_]+)$", exec_text.group(0), re.M)))
    if exec_text else set(),
}
schema = json.loads(read(os.path.join(ROOT, "schema", "pipeline.schema.json")))
sch = {
    "top": set(schema["properties"]),
    "stage": set(schema["$defs"]["stage"]["properties"]),
    "notify": set(schema["$defs"]["notify"]["properties"]),
    "executor": set().union(*(set(o.get("properties", {}))
                              for o in schema["properties"]["executor"].get("oneOf", []))),
}
csrc = "".join(read(p) for p in sorted(glob.glob(os.path.join(ROOT, "engine", "format",
                                                              "config*.c"))))


def c_keys(table):
    m = re.search(r"\b%s\[\]\s*=\s*\{(.*?)\};" % table, csrc, re.S)
    return set(re.findall(r"\"([a-z_]+)\"", m.group(1))) if m else set()


parser = {"top": c_keys("top_keys"), "stage": c_keys("stage_keys"),
          "notify": c_keys("notify_keys"), "executor": c_keys("executor_keys")}
for part in ("top", "stage", "notify", "executor"):
    if not parser[part]:
        fail("no %s keys found in engine/format/config*.c" % part)
    for name, have in (("packetfs-pipeline(5)", man[part]),
                       ("schema/pipeline.schema.json", sch[part])):
        for k in sorted(parser[part] - have):
            fail("%s key %s: the parser takes it, %s lacks it" % (part, k, name))
        for k in sorted(have - parser[part]):
            fail("%s key %s: %s has it, the parser does not take it" % (part, k, name))

# ---- SPEC sections ----
guar_path = os.path.join(ROOT, "docs", "guarantees.md")
guar = read(guar_path) if os.path.exists(guar_path) else ""
have = set(re.findall(r"^## (\d+)\. ", guar, re.M))
cited = set()
for top in ("engine", "fs", "top", "cli", "tests", "examples"):
    for p in glob.glob(os.path.join(ROOT, top, "**", "*"), recursive=True):
        if re.search(r"\.(c|h|sh|py)$", p) and os.path.isfile(p):
            cited |= set(re.findall(r"SPEC §(\d+)", read(p)))
for n in sorted(cited - have, key=int):
    fail("the sources cite SPEC §%s; docs/guarantees.md has no section \"## %s. \"" % (n, n))

for e in errors:
    print("FAIL: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
print("docs: %s examples; %d commands; pipeline keys %s; SPEC sections %s" % (
    ", ".join("%d %s" % (counts[k], k) for k in sorted(counts)), len(man_cmds),
    "/".join(str(len(parser[p])) for p in ("top", "stage", "notify", "executor")),
    ",".join(sorted(cited, key=int))))
