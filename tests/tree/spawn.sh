#!/usr/bin/env bash
# Every program packetfs runs starts in one place: engine/exec/proc.c (proc_start, exec.h).
# No other C file of engine/, fs/, top/ or cli/ calls posix_spawn, vfork, fork, an exec
# function, uv_spawn, popen or system, except the two forks that run no program: fs/fs.c's
# daemonization and fs/replayer.c's helper process. Comments and strings do not count. First
# the checker must catch a call added to a copy of the sources, then the tree itself must pass.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/spawn.XXXXXX")
trap 'rm -rf "$T"' EXIT

# check DIR: prints "FILE:LINE: CALL" for each call outside the allowed places; exits 1 if any.
check()
{
	python3 - "$1" <<'PY'
import os, re, sys

root = sys.argv[1]
ONE = "engine/exec/proc.c"
ALLOWED = {ONE: None, "fs/fs.c": {"fork"}, "fs/replayer.c": {"fork"}}
CALL = re.compile(r'\b(posix_spawnp?|vfork|fork|execl[ep]?|execv[pe]?|execvpe|fexecve|'
                  r'uv_spawn|popen|system|clone3?)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)

def blank(m):
    return re.sub(r'[^\n]', ' ', m.group(0))

bad = 0
for top in ("engine", "fs", "top", "cli"):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            code = COMMENT.sub(blank, open(path, encoding="utf-8", errors="replace").read())
            for m in CALL.finditer(code):
                name = m.group(1)
                allowed = ALLOWED.get(rel, set())
                if allowed is None or name in allowed:
                    continue
                line = code.count("\n", 0, m.start()) + 1
                print("%s:%d: %s() outside %s" % (rel, line, name, ONE))
                bad = 1
sys.exit(bad)
PY
}

mkdir -p "$T/copy"
cp -r "$ROOT/engine" "$ROOT/fs" "$ROOT/top" "$ROOT/cli" "$T/copy/"
printf 'void probe(void)\n{\n\t/* popen() in a comment is fine */\n\tpopen("x", "r");\n}\n' \
	>>"$T/copy/engine/exec/gpu.c"
printf 'void probe2(void)\n{\n\tvfork();\n}\n' >>"$T/copy/fs/fs.c"
rc=0
out=$(check "$T/copy") || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: the checker exited $rc on added calls: $out" >&2; exit 1; }
for want in "engine/exec/gpu.c:" "popen() outside" "fs/fs.c:" "vfork() outside"; do
	grep -qF -- "$want" <<<"$out" || { echo "FAIL: no '$want' in: $out" >&2; exit 1; }
done
[ "$(grep -c . <<<"$out")" = 2 ] || { echo "FAIL: not exactly the two added calls: $out" >&2; exit 1; }
echo "ok: caught a popen() and a vfork() added"

out=$(check "$ROOT") || { echo "FAIL: a program started outside engine/exec/proc.c:
$out" >&2; exit 1; }
echo "spawn: every program starts in engine/exec/proc.c (fs/fs.c, fs/replayer.c: forks without exec)"
