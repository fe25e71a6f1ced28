# shellcheck shell=bash
# tests/slurm.sh - the slurm executor's tests (tests/pipeline/slurm-*.sh, record-slurm.sh): a
# pipeline and an item that run their recipes as Slurm jobs, edits of the executor, and the
# state of a job. Sourced after tests/lib.sh:
#
#	. "$(dirname "$0")/../lib.sh"
#	. "$(dirname "$0")/../slurm.sh"
#	slurm_item 01-build 03-fail
#
# The cluster is the one-node cluster tests/run.sh starts (tests/slurm-cluster.sh), or under
# meson test one started by hand whose SLURM_CONF is exported; without it the tests are skipped
# (need_slurm).

# need_slurm : ends the test as skipped (status 77, the reason on stderr) unless tests/run.sh
# (or the caller of meson test) started the one-node Slurm cluster (tests/slurm-cluster.sh) and
# exported its SLURM_CONF.
need_slurm()
{
	if [ -z "${SLURM_CONF:-}" ] || ! scontrol ping >/dev/null 2>&1; then
		echo "SKIP: ${PFS_SLURM_WHY:-no Slurm cluster (SLURM_CONF): tests/run.sh starts one; under meson test, export the SLURM_CONF=... line of bash tests/slurm-cluster.sh start DIR}" >&2
		exit 77
	fi
}

# slurm_pipeline FILE [STAGE...] : the usual pipeline (std_pipeline, same tunables) with the
# slurm executor (SLURM_EXECUTOR overrides its JSON object). With STAGE names, only those
# stages are kept (e.g. "plan print validate").
slurm_pipeline()
{
	local file=$1
	shift
	EXTRA="${EXTRA:-}\"executor\": ${SLURM_EXECUTOR:-{\"kind\": \"slurm\", \"poll_ms\": 200\}},"
	EXTRA=$EXTRA std_pipeline "$file"
	if [ $# -gt 0 ]; then
		python3 - "$file" "$@" <<'PY'
import json, sys
f = sys.argv[1]
p = json.load(open(f))
p["stages"] = [s for s in p["stages"] if s["name"] in sys.argv[2:]]
json.dump(p, open(f, "w"), indent=1)
PY
	fi
}

# slurm_item RECIPE... : a repository, the fixture recipes and those of fixtures/slurm/ (unless
# RECIPES is set already: copy_recipes), the stages plan, print and validate with the slurm
# executor (slurm_pipeline; SLURM_EXECUTOR and MAX_PARALLEL, default 2, tune it) whose plan names
# the RECIPEs, its store mounted on $M and a new item fix-1 there (mount_item: d is its
# directory, r its registry). Skips the test without a cluster.
slurm_item()
{
	need_slurm
	make_repo
	[ -n "${RECIPES:-}" ] || copy_recipes slurm
	PLAN_RECIPES="$*" slurm_pipeline "$T/pipeline.json" plan print validate
	sed -i "s/\"max_parallel_recipes\": 2/\"max_parallel_recipes\": ${MAX_PARALLEL:-2}/" \
		"$T/pipeline.json"
	mount_item "$T/pipeline.json"
}

# standin_item : the executor's commands are the stand-ins the test wrote in $T/bin (sbatch,
# squeue, scontrol: no cluster; SLURM_CONF unset), then a repository, the fixture recipes, the
# stages plan, print and validate on the slurm executor (polled every 200 ms) with a plan naming
# 01-build, its store mounted on $M and an item fix-1 there, advanced.
standin_item()
{
	chmod +x "$T/bin"/*
	export PATH="$T/bin:$PATH"
	unset SLURM_CONF
	make_repo
	copy_recipes
	EXTRA='"executor": {"kind": "slurm", "poll_ms": 200},' pipeline_with "$T/pipeline.json" \
		"$(plan_stage 01-build)" "$(print_stage)" "$(validate_stage)"
	mount_item "$T/pipeline.json"
	ctl "$M" fix-1 advance
}

# set_executor KEY JSON : sets (JSON null: removes) KEY of the executor in the mounted store's
# pipeline.json, through the mount; fails the test when it is refused.
set_executor()
{
	python3 - "$M/.packetfs/pipeline.json" "$1" "$2" >"$T/executor.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
v = json.loads(sys.argv[3])
if v is None:
    p["executor"].pop(sys.argv[2], None)
else:
    p["executor"][sys.argv[2]] = v
print(json.dumps(p))
PY
	cp "$T/executor.json" "$M/.packetfs/pipeline.json" ||
		fail "pipeline.json with executor.$1 = $2 was refused"
}

# slurm_job_state ID : the JobState of Slurm job ID.
slurm_job_state()
{
	scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# assert_job_cancelled RECIPE STATUS NOTE TEXT : the registry $r holds one engine line of RECIPE
# with STATUS and the note NOTE (assert_engine_line), Slurm shows the job of that line
# CANCELLED, and its evidence log (in $d) contains TEXT.
# shellcheck disable=SC2154 # d and r: mount_item (tests/lib.sh)
assert_job_cancelled()
{
	local id
	assert_engine_line "$1" "$2" "$3"
	id=$(reg field "$r" 0 job_id recipe="$1")
	assert_eq CANCELLED "$(slurm_job_state "$id")" "Slurm state of the $2 job $id"
	assert_contains "$(cat "$d/$(reg field "$r" 0 evidence recipe="$1")")" "$4" "$1 log"
}
