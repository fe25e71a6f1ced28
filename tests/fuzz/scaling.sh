#!/usr/bin/env bash
# tests/fuzz/scaling.sh - checks that no parser takes superlinear time on inputs built to
# stress it: a benchmark-like check, run on demand, not part of the suite.
#
#	bash tests/fuzz/scaling.sh [PATTERN...]
#
# For each case below (a harness and a way to grow an input: many names in plan.md's block, many
# env keys in pipeline.json, many registry lines, ...), writes inputs of 1x, 2x, 4x and 8x the
# case's base size, runs the harness of build-fuzz/ (tests/fuzz/run.sh builds it; PFS_FUZZ_BUILD_DIR
# names another) on each three times, and takes the fastest run as libFuzzer reports it
# ("Executed FILE in N ms"). A case fails when its time grows by more than 3x per doubling
# (t8 / t1 > 27; cases whose 8x input takes under 30 ms pass as too fast to tell). PATTERNs
# restrict the run to the cases whose name holds one of them. Prints "PASS scaling/CASE (times)"
# or "FAIL scaling/CASE (times)" per case; exits 0 when none failed, 1 otherwise, 77 when the
# harnesses cannot be built (run.sh's reason).

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${PFS_FUZZ_BUILD_DIR:-build-fuzz}
case "$BUILD" in
/*) ;;
*) BUILD=$ROOT/$BUILD ;;
esac

# Builds the harnesses (a run of no seconds over no harness does just that).
out=$(PFS_FUZZ_BUILD_DIR=$BUILD bash "$HERE/run.sh" 0 --build-only 2>&1)
rc=$?
if [ "$rc" != 0 ]; then
	echo "$out"
	exit "$rc"
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/packetfs-scaling.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

# The cases: "NAME HARNESS BASE_UNITS" lines, and the inputs they grow, written by
# gen.py NAME UNITS FILE.
cat >"$DIR/gen.py" <<'PY'
import sys

def config_env(n):
    keys = ",".join('"V%d": "x"' % i for i in range(n))
    return '{"repo": "/r", "stages": [{"name": "a", "env": {%s}}]}' % keys

def config_stages(n):
    st = ",".join('{"name": "s%d", "on_needs_changes": "s%d"}' % (i, i // 2) if i else '{"name": "s0"}'
                  for i in range(n))
    return '{"repo": "/r", "stages": [%s]}' % st

def config_run(n):
    args = ",".join('"a%d"' % i for i in range(n))
    return '{"repo": "/r", "stages": [{"name": "a", "run": [%s], "produces": [%s]}]}' % (args, args)

def registry_external(n):
    return "".join('{"recipe": "%02d-r%d", "status": "failing", "note": "n"}\n' % (i % 100, i)
                   for i in range(n))

def registry_engine(n):
    return "".join('{"run": %d, "recipe": "%02d-r%d", "status": "validated", "source": "engine", '
                   '"head": "0123456789abcdef0123456789abcdef01234567"}\n' % (i, i % 100, i % 500)
                   for i in range(n))

def registry_long_line(n):
    return '{"recipe": "01-a", "status": "failing", "gpus": [%s]}' % ",".join("1" * 1 for _ in range(n))

def plan_names(n):
    return "```validation-recipes\n" + "".join("%02d-r%d\n" % (i % 100, i % (n // 2 + 1)) for i in range(n)) + "```\n"

def plan_fences(n):
    return "".join("```x\n## Verdict: pass\nDisposition: x\n```\n~~~~\n```\n~~~\n" for _ in range(n))

def plan_markers(n):
    return "".join("## Verdict: pass\n## Assessment: sound\nDisposition: duplicate\n" for _ in range(n))

def plan_long_line(n):
    return "```validation-recipes\n" + "x" * n + "\n"

def recipe_needs(n):
    return "#!/bin/sh\n# needs: " + " ".join("%02d-n%d" % (i % 100, i % (n // 2 + 1)) for i in range(n)) + "\n"

def testcount_meson(n):
    block = "Ok: 3\nExpected Fail: 0\nFail: 1\nUnexpected Pass: 0\nSkipped: 1\nTimeout: 0\n\n"
    return block * n

def testcount_ctest(n):
    return "100% tests passed, 0 tests failed out of 9\n\nThe following tests did not run:\n" + \
        "".join("\t  %d - t%d (Skipped)\n" % (i, i) for i in range(n))

def testcount_plain(n):
    return "".join("%d passed, %d failed " % (i, i) for i in range(n)) + "\n" + \
        "".join("== 3 passed, 1 skipped in 0.12s ==\n" for _ in range(n))

def junit_cases(n):
    return '<testsuites><testsuite name="s">' + "".join(
        '<testcase name="t%d"><failure message="m"/></testcase><testcase name="u%d"><skipped/></testcase>' % (i, i)
        for i in range(n)) + "</testsuite></testsuites>"

def junit_suites(n):
    return "<testsuites>" + "".join('<testsuite name="s%d" tests="3" failures="1"/>' % i for i in range(n)) + "</testsuites>"

def slurm_scontrol(n):
    return "JobId=1 " + "".join("XJobState=R%d XRunTime=1 " % i for i in range(n)) + \
        "JobState=RUNNING RunTime=1-00:00:00 GRES=gpu(IDX:" + ",".join(str(i) for i in range(n)) + ")\n"

def slurm_squeue(n):
    return "".join("%d|RUNNING|0|1-02:03:04|n17|None|\n" % i for i in range(n))

def record_lines(n):
    return "".join('{"recipe": "01-build", "argv": ["make", "-j2"], "gpus": 1}\ncancel\n\n' for _ in range(n))

name, units, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = globals()[name.replace("-", "_")](units)
with open(path, "wb") as f:
    f.write(text.encode())
PY

# NAME HARNESS BASE_UNITS (1x)
CASES="config-env config 16000
config-stages config 8000
config-run config 16000
registry-external registry 4000
registry-engine registry 4000
registry-long-line registry 60000
plan-names plan 30000
plan-fences plan 8000
plan-markers plan 8000
plan-long-line plan 262144
recipe-needs recipe 800
testcount-meson testcount 4000
testcount-ctest testcount 8000
testcount-plain testcount 4000
junit-cases junit 4000
junit-suites junit 8000
slurm-scontrol slurm 8000
slurm-squeue slurm 8000
record-lines record 4000"

# The fastest of three runs of harness on file, in ms.
time_ms()
{
	"$BUILD/tests/fuzz/fuzz-$1" "$2" "$2" "$2" 2>&1 | sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p' |
		sort -n | head -n 1
}

failed=0
while read -r name harness base; do
	if [ "$#" -gt 0 ]; then
		hit=0
		for p in "$@"; do
			case "$name" in *"$p"*) hit=1 ;; esac
		done
		[ "$hit" = 1 ] || continue
	fi
	times=()
	for k in 1 2 4 8; do
		f=$DIR/$name-$k
		python3 "$DIR/gen.py" "$name" $((base * k)) "$f" || exit 1
		t=$(time_ms "$harness" "$f")
		[ -n "$t" ] || t=-1
		times+=("$t")
		rm -f "$f"
	done
	t1=${times[0]} t8=${times[3]}
	shown="x1 ${times[0]} ms, x2 ${times[1]}, x4 ${times[2]}, x8 ${times[3]}"
	if [ "$t1" -lt 0 ] || [ "$t8" -lt 0 ]; then
		echo "FAIL scaling/$name ($shown: a run did not finish)"
		failed=1
	elif [ "$t8" -ge 30 ] && [ "$t8" -gt $((27 * (t1 > 1 ? t1 : 1))) ]; then
		echo "FAIL scaling/$name ($shown: more than 3x per doubling)"
		failed=1
	else
		echo "PASS scaling/$name ($shown)"
	fi
done <<<"$CASES"
exit "$failed"
