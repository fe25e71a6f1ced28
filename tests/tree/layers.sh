#!/usr/bin/env bash
# The engine is a stack of layers (docs/design.md; tests/tree/layers.py): no include or call
# goes from a lower layer to a higher one, a layer is seen through its one header, no include
# cycle, no source file over 800 lines. First the checker must catch each kind of breach in a copy of
# the sources, then the tree itself must pass.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX")
trap 'rm -rf "$T"' EXIT
CHECK="python3 $ROOT/tests/tree/layers.py"

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

# breach NAME EXPECTED_LINE EDIT...: copies the sources, runs the edit (a shell command, in the
# copy) and checks that the checker exits 1 with a line containing EXPECTED_LINE.
breach()
{
	local name=$1 want=$2 out rc=0
	shift 2
	rm -rf "$T/copy"
	mkdir -p "$T/copy/tests"
	cp -r "$ROOT/engine" "$ROOT/fs" "$ROOT/top" "$ROOT/cli" "$T/copy/"
	cp -r "$ROOT/tests/unit" "$ROOT/tests/lib.sh" "$T/copy/tests/"
	(cd "$T/copy" && eval "$*")
	out=$($CHECK "$T/copy") || rc=$?
	[ "$rc" = 1 ] || fail "$name: the checker exited $rc, not 1: $out"
	grep -qF -- "$want" <<<"$out" || fail "$name: no line with '$want' in: $out"
	echo "ok: caught $name"
}

breach "an upward include" "includes engine/namespace/packet_int.h, of the higher layer namespace" \
	'sed -i "0,/#include \"pipe_int.h\"/s//&\n#include \"packet_int.h\"/" engine/pipeline/pipe_queue.c'
breach "an inner header of a lower layer" "includes engine/git/repo.h, not the git layer's header" \
	'sed -i "0,/#include \"packet_int.h\"/s//&\n#include \"repo.h\"/" engine/namespace/ctl.c'
breach "fs/ past engine.h" "includes engine/pipeline/pipeline.h, not the pipeline layer's header (engine.h)" \
	'sed -i "0,/#include \"engine.h\"/s//&\n#include \"pipeline.h\"/" fs/fs.c'
breach "cli/ past engine.h" "includes engine/git/git.h, not the git layer's header (engine.h or fs.h or top.h)" \
	'sed -i "0,/#include \"engine.h\"/s//&\n#include \"git.h\"/" cli/cli.c'
breach "a parser running a process" "includes engine/exec/exec.h, of the higher layer exec" \
	'sed -i "0,/#include \"config.h\"/s//&\n#include \"exec.h\"/" engine/format/config.c'
breach "one front end into its sibling" "includes top/top.h, of the higher layer top" \
	'sed -i "0,/#include \"engine.h\"/s//&\n#include \"top.h\"/" fs/fs.c'
breach "a call into a sibling front end" "calls top_model_free() of top/top_model.c" \
	'printf "void probe(void)\n{\n\ttop_model_free(0);\n}\n" >>fs/fs_team.c'
breach "an include cycle" "include cycle" \
	'sed -i "0,/#define/s//#include \"store.h\"\n&/" engine/util/util.h'
breach "an upward call" "calls engine_changed() of engine/namespace/" \
	'printf "void probe(void)\n{\n\tengine_changed(0, 0, 0, 0);\n}\n" >>engine/pipeline/pipe.c'
breach "the contract including a layer" "the contract includes pipeline.h" \
	'sed -i "0,/#include \"util.h\"/s//&\n#include \"pipeline.h\"/" engine/engine.h'
breach "the contract defining a function" "the contract defines a function" \
	'sed -i "s,^#endif,static inline int probe(void) { return 0; }\n&," engine/engine.h'
breach "the pipeline seeing the contract" "includes engine/engine.h, of the higher layer contract" \
	'sed -i "0,/#include \"pipe_int.h\"/s//&\n#include \"engine.h\"/" engine/pipeline/pipe_queue.c'
breach "libgit2 outside the git layer" "includes <git2.h>, which only git may" \
	'sed -i "0,/#include \"namespace.h\"/s//#include <git2.h>\n&/" engine/namespace/view.c'
breach "a long file" "engine/exec/gpu.c" \
	'seq 801 | sed "s,.*,/* padding */," >>engine/exec/gpu.c'
breach "a long script" "tests/lib.sh" \
	'seq 801 | sed "s,.*,# padding," >>tests/lib.sh'

out=$($CHECK "$ROOT") || fail "the tree breaks its layers:
$out"
echo "$out"
