#!/usr/bin/env bash
# A validator stage program records the runs of a procedure (NN-name.md: header lines and prose,
# no command of its own) with packetfs record: the lines say recorded_by stage validate with the
# asking pid and uid, and the command exactly as given; they count as the procedure's evidence,
# so the item passes the review gate and is reviewed. A procedure cannot be rerun through ctl
# (EINVAL, naming it a procedure).
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
manual_procedure "# needs: 01-build"
pipeline_item "$(plan_stage 01-build 10-manual)" "$(print_stage)" \
	"$(validate_stage record-validator.sh "$PFS" 10-manual "$T/pids")" "$(review_stage sound)"
[ -e "$M/.packetfs/recipes/10-manual.md" ] || fail "the procedure is not in the catalog: $(ls "$M/.packetfs/recipes")"

ctl "$M" fix-1 advance
assert_eq done "$(settled fix-1)" "state after the pipeline"
head=$(worktree_head fix-1)
mapfile -t pids <"$T/pids"
assert_eq 2 "${#pids[@]}" "packetfs record calls of the validator"

# The engine ran 01-build; the validator recorded 10-manual twice.
assert_eq 3 "$(reg count "$r")" "registry lines"
assert_eq 1 "$(reg count "$r" recipe=01-build status=validated source=engine)" "validated 01-build"
assert_eq 2 "$(reg count "$r" recipe=10-manual status=validated source=engine)" "validated 10-manual"
python3 - "$r" "$(id -u)" "${pids[@]}" <<'PY' || fail "registry lines: $(cat "$r")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
uid, pids = int(sys.argv[2]), [int(p) for p in sys.argv[3:]]
build = [o for o in lines if o["recipe"] == "01-build"]
manual = [o for o in lines if o["recipe"] == "10-manual"]
assert "recorded_by" not in build[0], ("a recipe run has recorded_by", build[0])
want = ["sh -c 'echo \"checked: $1\"' sh 'the greeting'", "grep -c 'hello, new world' hello.c"]
for o, pid, command in zip(manual, pids, want):
    assert o["recorded_by"] == {"stage": "validate", "pid": pid, "uid": uid, "via": "both"}, ("recorded_by", o)
    assert o["command"] == command, ("command", o["command"], command)
    assert o["exit_code"] == 0, o
    assert o["run"] > build[0]["run"], ("recorded before 01-build ended", o)
PY
for k in 0 1; do
	assert_eq "$head" "$(reg field "$r" $k head recipe=10-manual)" "head of recorded run $k"
done
log=$(cat "$d/$(reg field "$r" 0 evidence recipe=10-manual)")
assert_contains "$log" $'\nchecked: the greeting\n' "the log of the first recorded run"
assert_contains "$log" "# recorded_by: stage validate, pid ${pids[0]}, uid $(id -u)" "the log's header"
assert_contains "$(cat "$d/$(reg field "$r" 1 evidence recipe=10-manual)")" $'\n1\n' \
	"the log of the second recorded run"
reg check "$r" "$d" || fail "registry lines are incomplete or logs do not match"

# The validator printed what it recorded (its stage log), its verdict stands, the review gate
# let the item through and the review ran.
vlog=$(cat "$d"/stages/*-validate.log)
assert_contains "$vlog" "10-manual is a procedure" "the validate stage's log"
assert_contains "$vlog" "checked: the greeting" "the validate stage's log"
assert_contains "$vlog" "validator: pass" "the validate stage's log"
assert_eq "## Verdict: pass" "$(last_line "$d/change-validation.md")" "change-validation.md"
assert_eq pass "$(status_field "$M" fix-1 verdict)" "verdict"
assert_eq "2/2 validated" "$(status_field "$M" fix-1 evidence)" "evidence"
assert_eq review "$(status_field "$M" fix-1 stage)" "stage"
assert_eq sound "$(status_field "$M" fix-1 assessment)" "assessment"
ls "$d/stages" | grep -Eq -- '-review\.log$' || fail "review did not run: $(ls "$d/stages")"
assert_eq "" "$(status_field "$M" fix-1 last_error)" "last_error"
assert_contains "$(cat "$d/validation/evidence.md")" "[2/2 validated]" "evidence.md"

# A procedure has no command to rerun.
lines=$(reg count "$r")
assert_fails_with EINVAL sh_write "$d/ctl" $'rerun 10-manual\n'
assert_contains "$(cat "$d/ctl")" "10-manual is a procedure (no command of its own)" \
	"ctl's last result after rerun of a procedure"
assert_eq "$lines" "$(reg count "$r")" "registry lines after refused reruns"
assert_eq done "$(status_field "$M" fix-1 state)" "state after refused reruns"
exit 0
