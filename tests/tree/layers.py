#!/usr/bin/env python3
"""tests/tree/layers.py - checks that the C sources are built as a stack of layers.

    python3 tests/tree/layers.py [ROOT]

The layers, bottom up (docs/design.md), each a folder with one header that the layers
above include:

    util      engine/util/       util.h
    store     engine/store/      store.h
    format    engine/format/     format.h   the pure parsers and writers
    exec      engine/exec/       exec.h     the processes packetfs runs
    git       engine/git/        git.h
    pipeline  engine/pipeline/   pipeline.h
    contract  engine/engine.h    engine.h   the engine's outward contract: declarations
                                            only, which the namespace and engine.c implement
    namespace engine/namespace/  namespace.h
    engine    engine/engine.c    opens the layers
    fs        fs/                the FUSE daemon: engine.h alone; fs.h for cli/
    top       top/               packetfs top: engine.h alone; top.h for cli/
    cli       cli/               the packetfs program: engine.h, fs.h, top.h

fs/ and top/ stand side by side: neither includes or calls the other.

Rules, each failure printed as one line "layers: FILE:LINE: what":
 1. An #include "X" names a file of the tree (or a generated header: schema.h,
    packetfs-config.h), never one of a higher layer.
 2. An include that crosses folders names the lower layer's one header (above), never
    one of its inner headers.
 3. The includes form no cycle.
 4. No file calls a function defined (not static) in a file of a higher layer: the
    names are read from the definitions at the start of a line, the calls from every
    "name(" outside comments and strings.
 5. No source file is over LIMIT lines: the C of engine/, fs/, top/, cli/ and tests/unit/, and the
    shell and Python programs of tests/, examples/ and recipes/.
 6. The contract (engine.h) is declarations only: it includes no header of the tree but
    util.h and defines no function, so that it sits below the namespace that implements it.
 7. A library's header is included only in the layers that own its objects (OWNED): libgit2
    in git, SQLite in store, libfuse in fs, libuv in exec and pipeline.

Exits 0 when every rule holds, 1 otherwise (with the lines), 2 on a usage error.
"""
import os
import re
import sys

LIMIT = 800
LAYERS = ["util", "store", "format", "exec", "git", "pipeline", "contract", "namespace", "engine",
          "fs", "top", "cli"]
HEADERS = {"util": "util.h", "store": "store.h", "format": "format.h", "exec": "exec.h",
           "git": "git.h", "pipeline": "pipeline.h", "contract": "engine.h",
           "namespace": "namespace.h", "fs": "fs.h", "top": "top.h"}
CONTRACT = "engine/engine.h"
CONTRACT_INCLUDES = {"util.h"}
# The front ends: the headers of the layers below that each may include, and nothing else
# across folders (fs/ and top/ are siblings, not a stack).
FRONT = {"fs": {"engine.h"}, "top": {"engine.h"}, "cli": {"engine.h", "fs.h", "top.h"}}
FRONT_BELOW = {"fs": set(), "top": set(), "cli": {"fs", "top"}}
FRONTS = ("fs", "top", "cli")
GENERATED = {"schema.h", "packetfs-config.h"}
OWNED = {"git2.h": {"git"}, "sqlite3.h": {"store"}, "fuse_lowlevel.h": {"fs"},
         "fuse.h": {"fs"}, "uv.h": {"exec", "pipeline"}}
SYS_INC_RE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)


def layer_of(rel):
    """The layer of a file path relative to the root, or None when it is none's."""
    parts = rel.split("/")
    if parts[0] in FRONTS:
        return parts[0]
    if parts[0] != "engine":
        return None
    if len(parts) == 2:
        return "contract" if parts[1] == "engine.h" else "engine"
    return parts[1] if parts[1] in LAYERS else None


def higher(dst, src):
    """Whether layer dst is one that layer src may not reach: above it, or a front end
    that is not below src (fs/ and top/ are siblings)."""
    if dst == src:
        return False
    if dst in FRONTS:
        return src not in FRONTS or dst not in FRONT_BELOW[src]
    return LAYERS.index(dst) > LAYERS.index(src)


def strip(text):
    """text without comments and string or character literals (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


DEF_RE = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([a-z_][a-z0-9_]*)\(", re.M)
CALL_RE = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")
INC_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check(root):
    problems = []
    files = {}
    for top in ("engine",) + FRONTS:
        for d, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".c", ".h")):
                    rel = os.path.relpath(os.path.join(d, name), root)
                    with open(os.path.join(root, rel), encoding="utf-8") as f:
                        files[rel] = f.read()
    by_name = {}
    for rel in files:
        by_name.setdefault(os.path.basename(rel), []).append(rel)

    # Rules 1 and 2, and the graph for rule 3.
    graph = {rel: [] for rel in files}
    for rel, text in sorted(files.items()):
        src = layer_of(rel)
        for m in INC_RE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d" % (rel, line)
            if inc in GENERATED:
                continue
            targets = by_name.get(os.path.basename(inc), [])
            if len(targets) != 1:
                problems.append("%s: #include \"%s\" names %s" % (
                    where, inc, "no file of the tree" if not targets else "several files"))
                continue
            dst_rel = targets[0]
            graph[rel].append(dst_rel)
            dst = layer_of(dst_rel)
            if src is None or dst is None:
                continue
            if higher(dst, src):
                problems.append("%s: includes %s, of the higher layer %s" % (where, dst_rel, dst))
            elif os.path.dirname(dst_rel) != os.path.dirname(rel):
                allowed = {HEADERS.get(dst)}
                if src in FRONTS:
                    allowed &= FRONT[src]
                if os.path.basename(dst_rel) not in allowed:
                    named = FRONT[src] if src in FRONTS else allowed
                    problems.append("%s: includes %s, not the %s layer's header (%s)" % (
                        where, dst_rel, dst, " or ".join(sorted(a for a in named if a))))

    # Rule 6: the contract declares, includes util.h alone, defines nothing.
    if CONTRACT in files:
        text = files[CONTRACT]
        for m in INC_RE.finditer(text):
            if os.path.basename(m.group(1)) not in CONTRACT_INCLUDES:
                problems.append("%s:%d: the contract includes %s (only %s: declarations only)" % (
                    CONTRACT, text.count("\n", 0, m.start()) + 1, m.group(1),
                    " ".join(sorted(CONTRACT_INCLUDES))))
        body = strip(text)
        for m in re.finditer(r"\)\s*\{", body):
            problems.append("%s:%d: the contract defines a function (declarations only)" % (
                CONTRACT, body.count("\n", 0, m.start()) + 1))

    # Rule 7: the libraries' headers, in the layers that own them.
    for rel, text in sorted(files.items()):
        src = layer_of(rel)
        for m in SYS_INC_RE.finditer(text):
            owners = OWNED.get(m.group(1))
            if owners and src not in owners:
                problems.append("%s:%d: includes <%s>, which only %s may (its objects are theirs)" % (
                    rel, text.count("\n", 0, m.start()) + 1, m.group(1),
                    " and ".join(sorted(owners))))

    # Rule 3: cycles, by depth-first search.
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cyc = path[path.index(nxt):] + [nxt]
                problems.append("%s: include cycle: %s" % (node, " -> ".join(cyc)))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])

    # Rule 4: calls into a higher layer.
    defined = {}
    stripped = {rel: strip(text) for rel, text in files.items()}
    for rel, text in stripped.items():
        if not rel.endswith(".c") or layer_of(rel) is None:
            continue
        for m in DEF_RE.finditer(text):
            rest = text[m.end():text.find("\n{", m.end()) if "\n{" in text[m.end():] else m.end()]
            if ";" in rest:
                continue  # a declaration, not a definition
            defined.setdefault(m.group(1), rel)
    for rel, text in sorted(stripped.items()):
        src = layer_of(rel)
        if not rel.endswith(".c") or src is None:
            continue
        seen = set()
        for m in CALL_RE.finditer(text):
            name = m.group(1)
            owner = defined.get(name)
            if not owner or owner == rel or name in seen:
                continue
            dst = layer_of(owner)
            if higher(dst, src):
                seen.add(name)
                line = text.count("\n", 0, m.start()) + 1
                problems.append("%s:%d: calls %s() of %s, a higher layer (%s)" % (
                    rel, line, name, owner, dst))

    # Rule 5: file sizes.
    for top, ends in (("engine", (".c", ".h")), ("fs", (".c", ".h")), ("top", (".c", ".h")),
                      ("cli", (".c", ".h")),
                      ("tests", (".c", ".h", ".sh", ".py")), ("examples", (".sh", ".py")),
                      ("recipes", (".sh", ".py"))):
        for d, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(ends):
                    path = os.path.join(d, name)
                    with open(path, encoding="utf-8") as f:
                        n = sum(1 for _ in f)
                    if n > LIMIT:
                        problems.append("%s:%d: %d lines, over %d" % (
                            os.path.relpath(path, root), n, n, LIMIT))
    return problems


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print("layers: " + p)
    if not problems:
        print("layers: the engine is a stack: no include or call goes up, no cycle; "
              "no source file over %d lines" % LIMIT)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
