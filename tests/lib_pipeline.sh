# tests/lib_pipeline.sh - the pipelines, stages and items of the integration tests: sourced by
# tests/lib.sh (its last line), so every test has them. pipeline_with, std_item, mount_item,
# pipeline_store, pipeline_item and the stage builders (stage_json, plan_stage, print_stage,
# validate_stage, review_stage, review_loop, publish_stage), the processes a run leaves
# (procs_in, no_procs_in) and the waits on what a pipeline did (settled, assert_engine_line).

# pipeline_with FILE STAGE_JSON... : a pipeline.json over $REPO and the fixture recipes with
# the given stage objects (pipeline_json; EXTRA adds top-level members, as for std_pipeline).
pipeline_with()
{
	local file=$1
	shift
	[ -n "${RECIPES:-}" ] || copy_recipes
	pipeline_json "$file" "$REPO" "$RECIPES" "\"gpus\": ${GPUS:-0}, \"max_parallel_recipes\": 2, ${EXTRA:-}" "$@"
}

# procs_in DIR : pids of processes whose cwd lies in DIR (empty output when none).
procs_in()
{
	find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$1" -o -lname "$1/*" \) 2>/dev/null |
		cut -d/ -f3
}

no_procs_in()
{
	[ -z "$(procs_in "$1")" ]
}

# std_item RECIPE... : a repository (make_repo), the fixture recipes (unless RECIPES is set
# already) and the usual pipeline whose plan names the RECIPEs (std_pipeline, with the
# caller's other tunables), its store mounted on $M, and a new item fix-1 there (mount_item:
# d is its directory, r its registry).
std_item()
{
	make_repo
	[ -n "${RECIPES:-}" ] || copy_recipes
	PLAN_RECIPES="$*" std_pipeline "$T/pipeline.json"
	mount_item "$T/pipeline.json"
}

# mount_item [PIPELINE_FILE] : a store (make_store, with PIPELINE_FILE when given; it makes the
# repository when there is none yet) mounted on $M (mount_store), and a new item fix-1 there
# (new_item). Sets d to the item's directory and r to its registry
# ($d/validation/registry.jsonl). Fails the test when a step fails.
mount_item()
{
	make_store "$@"
	mount_store
	new_item fix-1
	d=$M/fix-1
	r=$d/validation/registry.jsonl
}

# pipeline_store STAGE_JSON... : the pipeline $T/pipeline.json of those stages over $REPO
# (pipeline_with, same tunables; make_repo first when there is no repository yet), and its store
# (make_store) mounted on $M (mount_store).
pipeline_store()
{
	[ -n "$REPO" ] || make_repo
	pipeline_with "$T/pipeline.json" "$@"
	make_store "$T/pipeline.json"
	mount_store
}

# pipeline_item STAGE_JSON... : pipeline_store of those stages, and a new item fix-1 there; sets
# d and r as mount_item does.
pipeline_item()
{
	pipeline_store "$@"
	new_item fix-1
	d=$M/fix-1
	r=$d/validation/registry.jsonl
}

# stage_json NAME PRODUCT SCRIPT [ARG...] : prints the JSON object of a stage NAME that runs the
# fixture stage program SCRIPT with the ARGs and produces the document PRODUCT ("-": produces
# nothing). For the usual stages: plan_stage, print_stage, validate_stage, review_stage,
# review_loop, publish_stage.
stage_json()
{
	local name=$1 product=$2 produces="[]"
	shift 2
	[ "$product" = - ] || produces="[$(json_escape "$product")]"
	printf '{"name": %s, "run": %s, "produces": %s}' "$(json_escape "$name")" "$(stage_run "$@")" \
		"$produces"
}

# plan_stage RECIPE... : prints the stage "plan": plan.sh writes a plan.md naming the RECIPEs.
plan_stage()
{
	stage_json plan plan.md plan.sh "$@"
}

# print_stage [ARG...] : prints the stage "print": print.sh (with the ARGs) commits a change to
# hello.c and writes change.md.
print_stage()
{
	stage_json print change.md print.sh "$@"
}

# validate_stage [SCRIPT [ARG...]] : prints the stage "validate" that runs the recipes the plan
# names; with SCRIPT, the stage then runs that fixture stage program (with the ARGs), which
# produces change-validation.md.
validate_stage()
{
	if [ $# -gt 0 ]; then
		printf '{"name": "validate", "recipes": "plan", "run": %s, "produces": ["change-validation.md"]}' \
			"$(stage_run "$@")"
	else
		printf '{"name": "validate", "recipes": "plan"}'
	fi
}

# review_stage ASSESSMENT : prints the stage "review": review.sh writes a review.md whose
# assessment is ASSESSMENT (sound, needs_changes, ...).
review_stage()
{
	stage_json review review.md review.sh "$1"
}

# review_loop MAX SCRIPT [ARG...] : prints a stage "review" that runs the fixture stage program
# SCRIPT (with the ARGs), produces review.md, and sends an assessment needs_changes back to
# print, for at most MAX iterations.
review_loop()
{
	local max=$1 run
	shift
	run=$(stage_run "$@")
	printf '{"name": "review", "run": %s, "produces": ["review.md"], "on_needs_changes": "print", "max_iterations": %s}' \
		"$run" "$max"
}

# publish_stage [MEMBERS] : prints the stage "publish" that pushes the item branch to the remote
# "origin", then runs publish.sh. MEMBERS, JSON text, are added to the stage first (e.g.
# '"gate": "approve",').
publish_stage()
{
	printf '{"name": "publish", %s"push": {"remote": "origin"}, "run": %s}' "${1:-}" \
		"$(stage_run publish.sh)"
}

# sleeping_item [STAGE_JSON...] : the item fix-1 of a pipeline (pipeline_item) whose plan runs
# the fixture stage program sleep.sh, which runs until it is stopped, followed by the
# STAGE_JSONs; advances the item, waits until the plan runs and sleep.sh has written its pids
# (its own, then its child's) to $T/pids, and sets the array pids to them.
sleeping_item()
{
	pipeline_item "$(stage_json plan plan.md sleep.sh "$T/pids")" "$@"
	ctl "$M" fix-1 advance
	wait_state "$M" fix-1 running
	wait_for test -s "$T/pids"
	mapfile -t pids <"$T/pids"
}

# assert_engine_line RECIPE STATUS NOTE [SIGNAL] : the registry $r holds exactly one line of
# RECIPE with STATUS written by the engine, and the first line of RECIPE has the note NOTE; with
# SIGNAL, that line also names the signal SIGNAL and has no exit code (null).
assert_engine_line()
{
	assert_eq 1 "$(reg count "$r" recipe="$1" status="$2" source=engine)" "$2 lines of $1"
	assert_eq "$3" "$(reg field "$r" 0 note recipe="$1")" "$1 note"
	if [ -n "${4:-}" ]; then
		assert_eq "$4" "$(reg field "$r" 0 signal recipe="$1")" "$1 signal"
		assert_eq null "$(reg field "$r" 0 exit_code recipe="$1")" "$1 exit_code"
	fi
}

# settled ITEM : waits until ITEM on $M neither runs nor is queued; prints its state.
settled()
{
	wait_for bash -c 'case "$(sed -n "s/^state: *//p" "$1")" in running | queued | "") exit 1 ;; esac' \
		_ "$M/$1/status"
	status_field "$M" "$1" state
}
